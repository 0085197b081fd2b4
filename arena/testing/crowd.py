"""How a race test makes its race happen: every party held at one point until all are there.

Threads and processes started "at once" often run one after the other on an
idle machine, so a test that only starts them proves nothing about overlap. A
:class:`Crowd` is a point in the code under test (a function wrapped with
:meth:`Crowd.gather`, or a seam that calls :meth:`Crowd.arrive`) where each
party waits until all ``parties`` have arrived: the section after it is then
entered by all of them together on every run. A party that waits in vain
fails naming the point and how many got there, instead of hanging.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class CrowdIncomplete(AssertionError):
    """Not every party reached the point in time; the message names it and how many did."""


class Crowd:
    """``parties`` callers gathered at the point named ``what`` (see the module's docstring)."""

    def __init__(self, parties: int, what: str, timeout_s: float = 30.0) -> None:
        if parties < 1 or not timeout_s > 0:
            raise ValueError(f"a crowd needs parties >= 1 and timeout_s > 0, "
                             f"got {parties} and {timeout_s}")  # fmt: skip
        self.parties = parties
        self.what = what
        self.timeout_s = timeout_s
        self._barrier = threading.Barrier(parties)
        self._lock = threading.Lock()
        self.arrived = 0
        """Parties that have reached the point so far (all: the crowd has gathered)."""

    def arrive(self) -> None:
        """Wait here until all the parties have arrived; raise :class:`CrowdIncomplete`
        when they have not within ``timeout_s`` (every party waiting then raises too)."""
        with self._lock:
            self.arrived += 1
        try:
            self._barrier.wait(self.timeout_s)
        except threading.BrokenBarrierError:
            raise CrowdIncomplete(
                f"{self.arrived} of {self.parties} parties reached {self.what} "
                f"within {self.timeout_s:g} s"
            ) from None

    def gather(
        self, function: Callable[P, T], *, first_only: bool = False, after: bool = False
    ) -> Callable[P, T]:
        """``function``, each call of which waits for the crowd first (``after``: once it
        has returned or raised, so that every party has made the call before any goes
        on); ``first_only``: a thread's first call only, its later calls go straight
        through."""
        seen: set[int] = set()

        def gathered(*args: P.args, **kwargs: P.kwargs) -> T:
            me = threading.get_ident()
            if first_only and me in seen:
                return function(*args, **kwargs)
            seen.add(me)
            if not after:
                self.arrive()
                return function(*args, **kwargs)
            try:
                return function(*args, **kwargs)
            finally:
                self.arrive()

        return gathered


class WatchedLock:
    """A lock of the code under test, put in its place by a test, that notes which threads
    wait for it: a test that holds one party until another has come to the lock (it
    waits here, or got in where nothing kept it out) can tell the two apart."""

    def __init__(self, lock: threading.Lock | threading.RLock) -> None:
        self.lock = lock
        self._waiting: set[int] = set()

    def waits(self, thread: threading.Thread) -> bool:
        """Whether ``thread`` is waiting for the lock now."""
        return thread.ident in self._waiting

    def __enter__(self) -> None:
        me = threading.get_ident()
        self._waiting.add(me)
        try:
            self.lock.acquire()
        finally:
            self._waiting.discard(me)

    def __exit__(self, *exc: object) -> None:
        self.lock.release()
