"""Alternating rounds on a shared machine: the helpers the neighbour benchmarks share.

Other work on the machine (the load) changes a bot's time per decision far
more than the effect measured, and it changes over minutes. So the settings
are run in rounds, one match each per round, in an order rotated from round to
round (no setting always follows the noisy one), and each round gives one ratio
per setting: its median time per decision over the quiet setting's in the same
round. The figure is the median of those ratios with their spread (quartiles,
min-max), beside an A/A control: a second quiet setting, whose ratio to the
first shows how far two identical settings differ at this load.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def rotated(settings: Sequence[T], round_index: int) -> list[T]:
    """``settings`` in the order of round ``round_index``: rotated by one per round."""
    shift = round_index % len(settings)
    return [*settings[shift:], *settings[:shift]]


def spread(values: Sequence[float]) -> str:
    """``median [q1-q3] (min-max), n=N`` of ``values``."""
    if not values:
        return "no values"
    ordered = sorted(values)
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return (
        f"{statistics.median(ordered):.3f} [{q1:.3f}-{q3:.3f}]"
        f" ({ordered[0]:.3f}-{ordered[-1]:.3f}), n={len(ordered)}"
    )


def ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float | None:
    """The median of ``numerator`` over the median of ``denominator`` (None if empty)."""
    if not numerator or not denominator:
        return None
    return statistics.median(numerator) / statistics.median(denominator)


def load_text() -> str:
    """The 1, 5 and 15 minute load averages, as ``uptime`` prints them."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} CPUs)"
