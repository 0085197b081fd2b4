"""wait_until: returns what it awaited, fails naming it and the last value, stops on a raise."""

from __future__ import annotations

import itertools
import time

import pytest

from arena.testing.waiting import WaitTimeout, wait_until


def test_returns_the_first_truthy_value() -> None:
    values = iter([None, 0, "", [], "line 3"])
    assert wait_until(lambda: next(values), "a line", timeout_s=5, interval_s=0.001) == "line 3"


def test_a_timeout_names_what_was_awaited_and_the_last_value() -> None:
    counter = itertools.count()
    with pytest.raises(WaitTimeout) as failed:
        wait_until(lambda: next(counter) * 0 or [], "two games stored", timeout_s=0.05,
                   interval_s=0.01)  # fmt: skip
    message = str(failed.value)
    assert "two games stored" in message and "last seen: []" in message
    assert isinstance(failed.value, AssertionError)  # pytest reports it as a failed check


def test_a_wait_for_something_gone_shows_what_is_left() -> None:
    left = ["bwrap 4242"]
    with pytest.raises(WaitTimeout, match=r"no sandbox left; last seen: \['bwrap 4242'\]"):
        wait_until(lambda: not left, "no sandbox left", timeout_s=0.02, state=lambda: left)


def test_it_waits_as_long_as_needed_and_no_longer() -> None:
    ready_at = time.monotonic() + 0.1
    started = time.monotonic()
    assert wait_until(lambda: time.monotonic() >= ready_at, "a moment", timeout_s=10,
                      interval_s=0.005)  # fmt: skip
    assert 0.1 <= time.monotonic() - started < 5


def test_the_condition_is_checked_once_more_at_the_deadline() -> None:
    started = time.monotonic()
    calls: list[float] = []

    def late() -> bool:
        calls.append(time.monotonic() - started)
        return len(calls) >= 2  # true only on the second look

    assert wait_until(late, "a second look", timeout_s=0.05, interval_s=60)
    assert calls[1] < 1  # the interval is cut to the deadline, not slept whole


def test_a_condition_that_raises_ends_the_wait_at_once() -> None:
    def dead() -> bool:
        raise AssertionError("the runner ended")

    started = time.monotonic()
    with pytest.raises(AssertionError, match="the runner ended"):
        wait_until(dead, "a game", timeout_s=30)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    ("timeout_s", "interval_s"),
    [(-1, 0.1), (1, 0), (1, -0.5)],
    ids=["negative timeout", "zero interval", "negative interval"],
)
def test_bad_arguments_are_refused_by_name(timeout_s: float, interval_s: float) -> None:
    with pytest.raises(ValueError, match="timeout_s >= 0 and interval_s > 0"):
        wait_until(lambda: True, "anything", timeout_s=timeout_s, interval_s=interval_s)
