"""Answers read from the store, kept in memory a short while: one read serves a flood.

A flood of calls with one token, or of refusals past a user's limit, would
otherwise read the store once each. ``KeptAnswers`` keeps each answer for
``keep_s``; this process's writes call ``forget``. An answer whose read began
before a ``forget`` is returned to its caller but not kept: kept, it would
outlive the write it predates (a revoked token accepted, a new limit undone).
Another process's writes apply within ``keep_s``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class KeptAnswers(Generic[K, V]):
    """Answers by key, each kept ``keep_s`` seconds; at most ``max_kept`` of them (all
    dropped when full: a flood of distinct keys cannot grow it)."""

    def __init__(self, keep_s: float, max_kept: int = 10_000) -> None:
        self.keep_s = keep_s
        self.max_kept = max_kept
        self._kept: dict[K, tuple[float, V]] = {}
        self._forgotten = 0  # forget() calls so far: a read across one is not kept
        self._lock = threading.Lock()

    def get(self, key: K, read: Callable[[], V]) -> V:
        """The kept answer for ``key``, else ``read()``'s (kept unless a ``forget`` came
        while it was read)."""
        now = time.monotonic()
        with self._lock:
            kept = self._kept.get(key)
            forgotten = self._forgotten
        if kept is not None and kept[0] > now:
            return kept[1]
        answer = read()
        with self._lock:
            if forgotten == self._forgotten:
                if len(self._kept) >= self.max_kept:
                    self._kept.clear()
                self._kept[key] = (now + self.keep_s, answer)
        return answer

    def forget(self) -> None:
        """Drop every kept answer, and any read now under way: a write changed them."""
        with self._lock:
            self._kept.clear()
            self._forgotten += 1
