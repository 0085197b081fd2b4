"""Crowd: no party passes the point before all have arrived; one missing fails naming it."""

from __future__ import annotations

import contextlib
import threading

import pytest

from arena.testing.crowd import Crowd, CrowdIncomplete, WatchedLock
from arena.testing.waiting import wait_until


def test_no_party_passes_before_the_last_has_arrived() -> None:
    crowd = Crowd(4, "the counted section")
    inside: list[int] = []
    seen_by_each: list[int] = []

    def enter(index: int) -> None:
        inside.append(index)
        crowd.arrive()
        seen_by_each.append(len(inside))

    threads = [threading.Thread(target=enter, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen_by_each == [4] * 4  # each saw every other party arrived before it went on
    assert crowd.arrived == 4


def test_a_missing_party_fails_every_waiter_naming_the_point_and_the_count() -> None:
    crowd = Crowd(3, "the uid lock", timeout_s=0.1)
    failures: list[str] = []

    def enter() -> None:
        try:
            crowd.arrive()
        except CrowdIncomplete as error:
            failures.append(str(error))

    threads = [threading.Thread(target=enter) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert failures == ["2 of 3 parties reached the uid lock within 0.1 s"] * 2
    assert issubclass(CrowdIncomplete, AssertionError)  # pytest reports it as a failed check


def test_gather_holds_each_call_or_only_a_threads_first() -> None:
    crowd = Crowd(2, "the wrapped call")
    calls: list[int] = []
    each = crowd.gather(calls.append, first_only=True)

    def twice(value: int) -> None:
        each(value)
        each(value + 10)  # straight through: this thread has been gathered once

    threads = [threading.Thread(target=twice, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(calls) == [0, 1, 10, 11] and crowd.arrived == 2
    alone = Crowd(2, "every call", timeout_s=0.05).gather(calls.append)
    with pytest.raises(CrowdIncomplete, match="1 of 2 parties reached every call"):
        alone(99)
    assert 99 not in calls  # the call is not made past a crowd that never gathered


@pytest.mark.parametrize(("parties", "timeout_s"), [(0, 1.0), (2, 0.0), (2, float("nan"))])
def test_a_crowd_of_nobody_or_without_time_is_refused(parties: int, timeout_s: float) -> None:
    with pytest.raises(ValueError, match="parties >= 1 and timeout_s > 0"):
        Crowd(parties, "nowhere", timeout_s)


def test_gathered_after_the_call_every_party_has_made_it_before_any_goes_on() -> None:
    crowd = Crowd(3, "past the call")
    made: list[int] = []
    seen_after: list[int] = []

    def call(index: int) -> None:
        made.append(index)
        if index == 0:
            raise OSError("refused")  # a call that raises is gathered too

    gathered = crowd.gather(call, after=True)

    def enter(index: int) -> None:
        with contextlib.suppress(OSError):
            gathered(index)
        seen_after.append(len(made))

    threads = [threading.Thread(target=enter, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(made) == [0, 1, 2] and seen_after == [3] * 3


def test_a_watched_lock_tells_a_thread_waiting_for_it_from_one_that_is_not() -> None:
    watched = WatchedLock(threading.Lock())
    inside = threading.Event()

    def take() -> None:
        with watched:
            inside.set()

    with watched:
        waiter = threading.Thread(target=take)
        assert not watched.waits(waiter)  # not started: not waiting
        waiter.start()
        wait_until(lambda: watched.waits(waiter), "the thread waiting for the lock", 10)
        assert not inside.is_set()
    waiter.join(10)
    assert inside.is_set() and not watched.waits(waiter)
