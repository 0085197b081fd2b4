"""The live JSON answers (``/api/live``, ``/api/live/M/G?after=N``) computed once per
short interval for everyone.

A thousand spectators polling every second ask the same few questions: which
games are in play, and what a game looks like now. ``LiveAnswers`` keeps each
answer for ``interval_s`` (by the app's clock): the first poll after that
computes it (one caller computes, the others wait for it and share it), the rest
are served from memory without touching the store. A caller that waited for a
computation begun after it asked takes that answer whatever its age: a computation
slower than the interval is not repeated once per waiting caller. A live game's answer is
kept with its frames encoded once, and each poll gets the frames after its own
``after`` by slicing. Keeping an answer can only make what the public sees
older, never newer, so the spectator delay still holds.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TypeVar

Json = dict[str, object]
LIVE_ANSWER_S = 0.25  # how long an answer is shared (a live page polls every 0.25 s)
MAX_ANSWERS = 256  # games whose answers are kept at once
LOCK_STRIPES = 64  # computations that may run at once, each for keys of its own stripe
T = TypeVar("T")


def encode(payload: object) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


@dataclass(frozen=True)
class GameAnswer:
    """A live game's answer without its frames, and every frame encoded once."""

    head: bytes  # the payload without "frames", encoded: ``{...}``
    frames: tuple[bytes, ...]

    @classmethod
    def of(cls, payload: Json) -> GameAnswer:
        rest = {key: value for key, value in payload.items() if key != "frames"}
        frames = payload.get("frames")
        assert isinstance(frames, list)
        return cls(encode(rest), tuple(encode(frame) for frame in frames))

    def body(self, after: int) -> bytes:
        """The payload with the frames after step ``after`` (frame k is step k)."""
        shown = self.frames[max(after + 1, 0) :]
        return b"".join((self.head[:-1], b',"frames":[', b",".join(shown), b"]}"))


class LiveAnswers:
    """Answers by key, each computed at most once per ``interval_s`` (0: never kept;
    ``math.inf``: kept until dropped for room, as a stored game's frames are); at most
    ``max_answers`` kept, the least recently asked for dropped first."""

    def __init__(
        self, interval_s: float, clock: Callable[[], float], max_answers: int = MAX_ANSWERS
    ) -> None:
        if not interval_s >= 0:
            raise ValueError(f"the live answer interval must be 0 or more seconds, not "
                             f"{interval_s!r}")  # fmt: skip
        if max_answers < 1:
            raise ValueError(f"at least one answer must be kept, not {max_answers!r}")
        self.interval_s = interval_s
        self.clock = clock
        self.max_answers = max_answers
        self._answers: OrderedDict[Hashable, tuple[float, object]] = OrderedDict()
        self._lock = threading.Lock()
        # one caller computes a key's answer, the others wait for it; keys of other
        # stripes (another game, the list) are not held up by a slow or forced miss
        self._computing = tuple(threading.Lock() for _ in range(LOCK_STRIPES))

    def get(self, key: Hashable, compute: Callable[[float], T]) -> T:
        """The answer for ``key``, computed by ``compute(now)`` when none is fresh."""
        if self.interval_s == 0:
            return compute(self.clock())
        asked = self.clock()
        kept = self._fresh(key, asked)
        if kept is not None:
            return kept[0]  # type: ignore[return-value]
        with self._computing[hash(key) % LOCK_STRIPES]:
            kept = self._fresh(key, asked)
            if kept is not None:
                return kept[0]  # type: ignore[return-value]
            now = self.clock()
            value = compute(now)
            with self._lock:
                self._answers[key] = (now, value)
                self._answers.move_to_end(key)
                while len(self._answers) > self.max_answers:
                    self._answers.popitem(last=False)
            return value

    def _fresh(self, key: Hashable, asked: float) -> tuple[object] | None:
        """The kept answer (in a 1-tuple: an answer may be None) if it is fresh: computed
        within the interval, or begun no earlier than ``asked``, when its caller asked."""
        with self._lock:
            kept = self._answers.get(key)
            if kept is not None:
                self._answers.move_to_end(key)
        if kept is None:
            return None
        at, value = kept
        now = self.clock()  # a clock set back makes every answer stale: never a future one
        return (value,) if 0 <= now - at < self.interval_s or asked <= at <= now else None
