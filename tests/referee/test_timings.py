"""Per-decision timing figures (arena.referee.timings): nearest-rank percentiles."""

from __future__ import annotations

import pytest

from arena.referee.timings import decision_stats, nearest_rank, seat_walls


@pytest.mark.parametrize(
    ("values", "fraction", "expected"),
    [
        pytest.param([5.0], 0.5, 5.0, id="one"),
        pytest.param([1.0, 2.0], 0.5, 1.0, id="two-median"),
        pytest.param([float(v) for v in range(1, 11)], 0.9, 9.0, id="ten-p90"),
        pytest.param([float(v) for v in range(1, 101)], 0.99, 99.0, id="hundred-p99"),
        pytest.param([1.0, 2.0, 3.0], 1.0, 3.0, id="max"),
    ],
)
def test_nearest_rank(values: list[float], fraction: float, expected: float) -> None:
    assert nearest_rank(values, fraction) == expected


def test_decision_stats_of_a_seat() -> None:
    timings = [{"seat": 0, "wall_ms": 3.0}, {"seat": 1, "wall_ms": 50.0},
               {"seat": 0, "wall_ms": 1.0}, {"seat": 0, "wall_ms": 2.0}]  # fmt: skip
    assert decision_stats(seat_walls(timings, 0), 6.0) == {
        "decisions": 3,
        "wall_ms": {"median": 2.0, "p90": 3.0, "max": 3.0},
        "cpu_ms": 6.0,
        "cpu_ms_per_decision": 2.0,
    }


def test_no_decision_and_no_cpu_measurement_are_none() -> None:
    assert decision_stats([], None) == {
        "decisions": 0,
        "wall_ms": {"median": None, "p90": None, "max": None},
        "cpu_ms": None,
        "cpu_ms_per_decision": None,
    }
    assert decision_stats([], 4.0)["cpu_ms_per_decision"] is None
