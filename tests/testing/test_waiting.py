"""wait_until returns what it awaited, fails naming it and the last value, stops on a raise;
assert_stays watches a condition through a window and fails the moment it breaks."""

from __future__ import annotations

import itertools
import time
from types import SimpleNamespace

import pytest

from arena.testing import waiting
from arena.testing.waiting import BrokenInWindow, WaitTimeout, assert_stays, wait_until


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


def test_a_pause_of_its_own_spends_the_intervals() -> None:
    paused: list[float] = []
    values = iter([None, None, "ready"])
    assert wait_until(lambda: next(values), "ready", timeout_s=5, interval_s=0.25,
                      pause=paused.append) == "ready"  # fmt: skip
    assert paused == [0.25, 0.25]


def test_a_condition_that_holds_throughout_the_window_passes_after_it() -> None:
    started = time.monotonic()
    calls = itertools.count()
    assert_stays(lambda: next(calls) >= 0, 0.1, "nothing happening", interval_s=0.01)
    assert time.monotonic() - started >= 0.1
    assert next(calls) > 3  # polled throughout, not once at the end


def test_a_break_in_the_window_fails_at_once_naming_it_and_the_value() -> None:
    values = iter([0, 0, 1])  # the condition: no node joined; the third look finds one
    started = time.monotonic()
    with pytest.raises(BrokenInWindow) as failed:
        assert_stays(lambda: next(values) == 0, 30, "no node joined", interval_s=0.01,
                     state=lambda: ["stranger"])  # fmt: skip
    assert time.monotonic() - started < 5  # not the rest of the 30 s window
    message = str(failed.value)
    assert "no node joined stopped holding" in message and "30 s window" in message
    assert "seen: ['stranger']" in message
    assert isinstance(failed.value, AssertionError)


def test_the_window_is_checked_once_more_after_it_has_passed() -> None:
    """A break at the window's last moment is seen, however long the interval."""
    started = time.monotonic()
    with pytest.raises(BrokenInWindow, match="seen: False"):
        assert_stays(lambda: time.monotonic() - started < 0.05, 0.05, "quiet", interval_s=60)
    assert time.monotonic() - started < 1


def test_a_slow_look_counts_only_if_it_began_after_the_window() -> None:
    started = time.monotonic()
    looks: list[float] = []

    def slow() -> bool:
        looks.append(time.monotonic() - started)
        time.sleep(0.08)  # a look that takes time (a process asked, say)
        return True

    assert_stays(slow, 0.1, "quiet", interval_s=0.01)
    assert looks[-1] >= 0.1 and all(look < 0.1 for look in looks[:-1])


def test_a_window_spends_its_intervals_with_the_pause_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a clock that moves only when the window pauses (a loaded machine's late wake-ups
    cannot change the count): whole intervals, the last one cut at the window's end."""
    now = [100.0]
    paused: list[float] = []

    def pause(seconds: float) -> None:
        paused.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(waiting, "time", SimpleNamespace(monotonic=lambda: now[0]))
    assert_stays(lambda: True, 0.05, "quiet", interval_s=0.02, pause=pause)
    assert paused == pytest.approx([0.02, 0.02, 0.01])


@pytest.mark.parametrize(
    ("seconds", "interval_s"),
    [(-1, 0.1), (float("nan"), 0.1), (1, 0)],
    ids=["negative window", "nan window", "zero interval"],
)
def test_a_bad_window_is_refused_by_name(seconds: float, interval_s: float) -> None:
    with pytest.raises(ValueError, match="assert_stays needs seconds >= 0 and interval_s > 0"):
        assert_stays(lambda: True, seconds, "anything", interval_s=interval_s)
