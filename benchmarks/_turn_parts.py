"""Thread CPU of each part of the referee's turn, by timers put around its calls.

``install()`` wraps the functions a decision runs through (the judgement of the
reply's bytes, the clock's charge, the rules' apply, the engine's legal actions,
the legal set, the seat view, the observation's bytes, the frame, the send) with
``time.thread_time_ns`` and returns a ``TurnParts`` that adds up each part's
nanoseconds, the timer's own cost taken off (one clock read per interval, as
``request_parts.py`` does; a part timed inside another has its inner timers taken
off the outer one too). The same wrappers serve ``referee_turn.py --parts`` (warm,
a tight loop) and ``transport_floor.py``'s ``rust_referee`` with ``FLOOR_TIME_PARTS``
(in situ, between real bots' replies), so that the two are timed alike. ``uninstall``
puts the functions back. The garbage collector's passes are counted and timed too
(``gc.callbacks``).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

PARTS = (
    "judge",
    "answered",
    "apply",
    "legal actions",
    "legal set",
    "seat view",
    "observation",
    "frame",
    "send",
    "gc",
)
"""The parts in the order a decision runs them (``observation`` less its ``seat view``)."""

_INNER = {"observation": "seat view"}
"""Parts timed inside another: their time and their timers' cost are the outer one's."""


class TurnParts:
    """Nanoseconds of thread CPU per part and calls per part, since ``install``."""

    def __init__(self) -> None:
        clock = time.thread_time_ns
        self.timer_ns = int(statistics.median([-(clock() - clock()) for _ in range(2000)]))
        self.ns = dict.fromkeys(PARTS, 0)
        self.calls = dict.fromkeys(PARTS, 0)
        self._undo: list[Callable[[], None]] = []
        self._gc_started = 0

    def _wrap(self, owner: Any, name: str, part: str) -> None:
        original = getattr(owner, name)
        clock = time.thread_time_ns
        ns, calls, timer_ns = self.ns, self.calls, self.timer_ns

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = clock()
            try:
                return original(*args, **kwargs)
            finally:
                ns[part] += clock() - started - timer_ns
                calls[part] += 1

        setattr(owner, name, timed)
        self._undo.append(lambda: setattr(owner, name, original))

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.thread_time_ns()
        else:
            self.ns["gc"] += time.thread_time_ns() - self._gc_started - self.timer_ns
            self.calls["gc"] += 1

    def reset(self) -> None:
        for part in PARTS:
            self.ns[part] = self.calls[part] = 0

    def per_decision_us(self, decisions: int) -> dict[str, float]:
        """Each part's us per decision (an outer part less its inner ones and their
        timers), then ``timers``: what the timers add to a timer around the whole turn,
        about two clock reads for each call timed at the turn's own level."""
        ns = dict(self.ns)
        for outer, inner in _INNER.items():
            ns[outer] -= ns[inner] + 2 * self.timer_ns * self.calls[inner]
        outer_calls = sum(self.calls[part] for part in PARTS if part not in _INNER.values())
        ns["timers"] = outer_calls * 2 * self.timer_ns
        return {part: ns[part] / decisions / 1000 for part in (*PARTS, "timers")}

    def uninstall(self) -> None:
        while self._undo:
            self._undo.pop()()


def install() -> TurnParts:
    from arena.protocol import wire
    from arena.referee import game, slots, turn_loop

    parts = TurnParts()
    parts._wrap(turn_loop, "judge_echo", "judge")
    parts._wrap(game.GameTiming, "answered", "answered")
    parts._wrap(game.RefereeState, "apply", "apply")
    parts._wrap(game, "legal_actions", "legal actions")
    parts._wrap(game, "legal_set", "legal set")
    parts._wrap(wire, "seat_view", "seat view")
    parts._wrap(game, "observation_bytes", "observation")
    parts._wrap(game, "action_request_frame", "frame")
    parts._wrap(slots.BotSlot, "send", "send")
    gc.callbacks.append(parts._gc)
    parts._undo.append(lambda: gc.callbacks.remove(parts._gc))
    return parts
