"""What a stored ladder game charges each seat (``arena.store.usage.game_charges``)."""

from __future__ import annotations

import math

import pytest

from arena.store.usage import game_charges

START = "2026-01-01T00:00:00+00:00"
TEN_S_LATER = "2026-01-01T00:00:10+00:00"

CASES = [
    ("thinking only, without a start", (1000.0, 3000.0), None, (0.0, 0.0), (1000.0, 3000.0)),
    ("the time nobody thought is shared", (1000.0, 3000.0), START, (0.0, 0.0), (4000.0, 6000.0)),
    ("each seat's start-up is its own", (1000.0, 3000.0), START, (8000.0, 50.0),
     (12000.0, 6050.0)),
    ("start-up without a start still counts", (0.0, 0.0), None, (9500.0, 0.0), (9500.0, 0.0)),
    ("a bad figure counts as nothing", (math.nan, -5.0), None, (math.inf, -1.0), (0.0, 0.0)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("time_ms", "started_at", "startup_ms", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_game_charges(
    time_ms: tuple[float, float],
    started_at: str | None,
    startup_ms: tuple[float, float],
    expected: tuple[float, float],
) -> None:
    assert game_charges(time_ms, started_at, TEN_S_LATER, startup_ms) == expected
