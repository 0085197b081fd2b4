"""The one way a test waits for something to happen: poll a condition until it holds.

A test that sleeps a fixed time and hopes is flaky on a loaded machine and
passes when the thing never happens; a test that polls states what it awaits,
waits as long as a loaded machine needs, and fails naming that thing and the
last value it saw. A condition may raise (for example an ``AssertionError``
that a process it depends on ended) to stop the wait at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class WaitTimeout(AssertionError):
    """The awaited condition did not hold in time; the message names it and the last value."""


def wait_until(
    condition: Callable[[], T | None],
    what: str,
    timeout_s: float = 10.0,
    interval_s: float = 0.02,
    state: Callable[[], object] | None = None,
) -> T:
    """Call ``condition`` every ``interval_s`` until its value is truthy, and return that value.

    Raises :class:`WaitTimeout` naming ``what`` and the last value seen once
    ``timeout_s`` has passed: the condition's, or ``state()`` when given (a
    wait for something to be gone shows what is still there). The condition is
    checked once more at the deadline, so a slow interval never costs the last
    chance.
    """
    if timeout_s < 0 or interval_s <= 0:
        raise ValueError(f"wait_until needs timeout_s >= 0 and interval_s > 0, "
                         f"got {timeout_s} and {interval_s}")  # fmt: skip
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
        time.sleep(min(interval_s, left))
