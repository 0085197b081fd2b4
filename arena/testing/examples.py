"""How many examples a property test tries: a fifth in the inner loop, the full count in CI.

The inner loop (``pytest -m "not slow"``) is run after every edit and must stay
quick; ``scripts/check`` (and so ``.ci/run``) sets ``KAHUNA_EXAMPLES=full`` and
every property test tries its full count. A test states its full count,
``@settings(max_examples=examples(300))``; ``tests/conftest.py`` loads the
matching Hypothesis profile for tests that state none.
"""

from __future__ import annotations

import math
import os

ENV = "KAHUNA_EXAMPLES"
"""``full`` for every example; unset or ``quick`` for the inner loop's share."""
QUICK_SHARE = 5
"""The inner loop tries one example in this many."""
QUICK_LEAST = 5
"""Never fewer than this many examples, nor more than the full count."""
HYPOTHESIS_DEFAULT = 100
"""Hypothesis's own count, for tests that state none."""


def full_run() -> bool:
    """Whether this run tries every example; a value other than ``full`` or ``quick`` is refused."""
    value = os.environ.get(ENV, "quick")
    if value not in ("full", "quick"):
        raise ValueError(f"{ENV}={value!r}: expected 'full' or 'quick'")
    return value == "full"


def examples(full: int) -> int:
    """``full`` in a full run, else a fifth of it (at least ``QUICK_LEAST``, at most ``full``)."""
    if full < 1:
        raise ValueError(f"a property test tries at least one example, got {full}")
    if full_run():
        return full
    return min(full, max(QUICK_LEAST, math.ceil(full / QUICK_SHARE)))
