"""Per-decision timings of a bot: how many decisions, and their wall time's median,
90th percentile and maximum, with the bot's CPU time where the sandbox measured it.

A game's record carries them per seat (``record["match"]["decisions"]``), and
`arena match --json` per bot over the match (``decision_timings``). Wall time is
the referee's, from sending a request to receiving its reply. CPU time is read
from the bot's cgroup at the start and the end of each game only (a read per
decision would cost the referee more than many decisions do), so it is given in
all and per decision on average; `arena bot check` measures its distribution.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def nearest_rank(ordered: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of an ascending, non-empty sequence."""
    return ordered[max(1, math.ceil(len(ordered) * fraction)) - 1]


def decision_stats(wall_ms: Iterable[float], cpu_ms: float | None) -> dict[str, object]:
    """``{"decisions", "wall_ms": {"median", "p90", "max"}, "cpu_ms",
    "cpu_ms_per_decision"}``; the wall figures are None without a decision, the CPU
    ones without a measurement."""
    ordered = sorted(wall_ms)
    wall: dict[str, float | None] = dict.fromkeys(("median", "p90", "max"))
    if ordered:
        wall = {
            "median": round(nearest_rank(ordered, 0.5), 3),
            "p90": round(nearest_rank(ordered, 0.9), 3),
            "max": round(ordered[-1], 3),
        }
    per_decision = None if cpu_ms is None or not ordered else round(cpu_ms / len(ordered), 3)
    return {
        "decisions": len(ordered),
        "wall_ms": wall,
        "cpu_ms": None if cpu_ms is None else round(cpu_ms, 3),
        "cpu_ms_per_decision": per_decision,
    }


def seat_walls(timings: Iterable[object], seat: int) -> list[float]:
    """The wall times of ``seat``'s decisions in a record's ``timings`` list."""
    return [
        float(entry["wall_ms"])
        for entry in timings
        if isinstance(entry, dict) and entry.get("seat") == seat
        and isinstance(entry.get("wall_ms"), int | float)
    ]  # fmt: skip
