"""The live JSON answers (``/api/live``, ``/api/live/M/G?after=N``) computed once per
short interval for everyone.

A thousand spectators polling every second ask the same few questions: which
games are in play, and what a game looks like now. ``LiveAnswers`` keeps each
answer for ``interval_s`` (by the app's clock): the first poll after that
computes it (one caller computes, the others wait for it and share it), the rest
are served from memory without touching the store. A live game's answer is
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
    """Answers by key, each computed at most once per ``interval_s`` (0: never kept)."""

    def __init__(self, interval_s: float, clock: Callable[[], float]) -> None:
        if not interval_s >= 0:
            raise ValueError(f"the live answer interval must be 0 or more seconds, not "
                             f"{interval_s!r}")  # fmt: skip
        self.interval_s = interval_s
        self.clock = clock
        self._answers: OrderedDict[Hashable, tuple[float, object]] = OrderedDict()
        self._lock = threading.Lock()
        # one caller computes a key's answer, the others wait for it; keys of other
        # stripes (another game, the list) are not held up by a slow or forced miss
        self._computing = tuple(threading.Lock() for _ in range(LOCK_STRIPES))

    def get(self, key: Hashable, compute: Callable[[float], T]) -> T:
        """The answer for ``key``, computed by ``compute(now)`` when none is fresh."""
        if self.interval_s == 0:
            return compute(self.clock())
        kept = self._fresh(key)
        if kept is not None:
            return kept[0]  # type: ignore[return-value]
        with self._computing[hash(key) % LOCK_STRIPES]:
            kept = self._fresh(key)
            if kept is not None:
                return kept[0]  # type: ignore[return-value]
            now = self.clock()
            value = compute(now)
            with self._lock:
                self._answers[key] = (now, value)
                self._answers.move_to_end(key)
                while len(self._answers) > MAX_ANSWERS:
                    self._answers.popitem(last=False)
            return value

    def _fresh(self, key: Hashable) -> tuple[object] | None:
        """The kept answer (in a 1-tuple: an answer may be None) if it is fresh."""
        with self._lock:
            kept = self._answers.get(key)
        if kept is None:
            return None
        age = self.clock() - kept[0]
        return (kept[1],) if 0 <= age < self.interval_s else None
