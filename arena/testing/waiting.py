"""How a test waits: for something to happen, or through a window in which it must not.

A test that sleeps a fixed time and hopes is flaky on a loaded machine and
passes when the thing never happens; a test that polls states what it awaits,
waits as long as a loaded machine needs, and fails naming that thing and the
last value it saw (``wait_until``). A condition may raise (for example an
``AssertionError`` that a process it depends on ended) to stop the wait at once.

What must *not* happen (a node that got in, a signal at a thread's exit) can
only be watched for a while: ``assert_stays`` polls the condition throughout a
bounded window and fails the moment it breaks, so the window's length is the
one figure left to judge, named where it is used.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
Pause = Callable[[float], object]
"""How a poll spends its interval: ``time.sleep``, or a call that runs an event loop
meanwhile (``arena.testing.browser.pumping``: Playwright's sync API runs a page's
route handlers only inside its own calls)."""


class WaitTimeout(AssertionError):
    """The awaited condition did not hold in time; the message names it and the last value."""


class BrokenInWindow(AssertionError):
    """A condition that had to hold throughout a window stopped holding; the message names
    it, when in the window, and the value seen."""


def wait_until(
    condition: Callable[[], T | None],
    what: str,
    timeout_s: float = 10.0,
    interval_s: float = 0.02,
    state: Callable[[], object] | None = None,
    pause: Pause = time.sleep,
) -> T:
    """Call ``condition`` every ``interval_s`` until its value is truthy, and return that value.

    Raises :class:`WaitTimeout` naming ``what`` and the last value seen once
    ``timeout_s`` has passed: the condition's, or ``state()`` when given (a
    wait for something to be gone shows what is still there). The condition is
    checked once more at the deadline, so a slow interval never costs the last
    chance.
    """
    _check(timeout_s, interval_s, "wait_until", "timeout_s")
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        left = deadline - time.monotonic()
        if left <= 0:
            seen = value if state is None else state()
            raise WaitTimeout(f"timed out after {timeout_s:g} s waiting for {what}; "
                              f"last seen: {seen!r}")  # fmt: skip
        pause(min(interval_s, left))


def assert_stays(
    condition: Callable[[], object],
    seconds: float,
    what: str,
    interval_s: float = 0.02,
    state: Callable[[], object] | None = None,
    pause: Pause = time.sleep,
) -> None:
    """Check that ``condition`` holds (is truthy) throughout the next ``seconds``.

    The window stands for "had it happened, it would show by now": the condition
    is checked every ``interval_s``, and once more by a look begun after the window
    has passed (however slow each look is). It fails with :class:`BrokenInWindow`
    naming ``what`` and the value seen (``state()`` when given) the first time the
    condition is falsy, without waiting out the rest.
    """
    _check(seconds, interval_s, "assert_stays", "seconds")
    started = time.monotonic()
    deadline = started + seconds
    while True:
        looked = time.monotonic()
        value = condition()
        if not value:
            seen = value if state is None else state()
            raise BrokenInWindow(f"{what} stopped holding {looked - started:.2f} s "
                                 f"into a {seconds:g} s window; seen: {seen!r}")  # fmt: skip
        if looked >= deadline:  # this look began after the window: a slow one counts too
            return
        pause(min(interval_s, max(0.0, deadline - time.monotonic())))


def _check(span_s: float, interval_s: float, helper: str, span: str) -> None:
    if not span_s >= 0 or not interval_s > 0:
        raise ValueError(f"{helper} needs {span} >= 0 and interval_s > 0, "
                         f"got {span_s} and {interval_s}")  # fmt: skip
