"""What a stored ladder game charges each seat (``game_charges``) and what an owner joining the
ladder is lifted by (``joining_lifts``)."""

from __future__ import annotations

import math

import pytest

from arena.store.usage import game_charges, joining_lifts

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


LIFT_CASES = [
    ("a new owner starts from the least-used owner's time",
     {"uma": 900.0, "vic": 400.0}, {"uma", "vic"}, {"uma", "vic", "new"}, {"new": 400.0}),
    ("one back with what the half-life left of its time is lifted the rest of the way",
     {"uma": 900.0, "vic": 400.0, "old": 150.0}, {"uma", "vic"}, {"uma", "vic", "old"},
     {"old": 250.0}),
    ("one back above the least-used keeps its time",
     {"uma": 900.0, "vic": 400.0, "old": 600.0}, {"uma", "vic"}, {"uma", "vic", "old"}, {}),
    ("the owners that stay are never lifted, however little they used",
     {"uma": 900.0, "vic": 0.0}, {"uma", "vic"}, {"uma", "vic"}, {}),
    ("an owner that stayed with no game yet holds the floor at nothing",
     {"uma": 900.0}, {"uma", "vic"}, {"uma", "vic", "new"}, {}),
    ("owners that left set no floor",
     {"uma": 900.0, "vic": 400.0, "gone": 10.0}, {"uma", "vic", "gone"}, {"uma", "vic", "new"},
     {"new": 400.0}),
    ("the ladder's first owners: nobody stayed, nobody is lifted",
     {}, set(), {"uma", "vic"}, {}),
    ("everyone back at once after all left: nobody stayed, nobody is lifted",
     {"uma": 90.0, "vic": 40.0}, {"gone"}, {"uma", "vic"}, {}),
    ("two joining at once both start from the floor; the admin's bots are owners too",
     {"uma": 900.0, 7: 500.0}, {"uma", 7}, {"uma", 7, "new", 8}, {"new": 500.0, 8: 500.0}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("used", "present", "active", "expected"),
    [case[1:] for case in LIFT_CASES],
    ids=[case[0] for case in LIFT_CASES],
)
def test_joining_lifts(
    used: dict[str | int, float],
    present: set[str | int],
    active: set[str | int],
    expected: dict[str | int, float],
) -> None:
    assert joining_lifts(used, present, active) == expected
