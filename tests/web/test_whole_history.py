"""A bot's page plots its whole rating history: every version, oldest rating first."""

from __future__ import annotations

import pytest

from arena.web.app import MAX_HISTORY_POINTS, whole_history
from arena.web.models import BotVersion, LeaderboardRow
from arena.web.plots import RatingPoint, rating_history_svg


def _version(name: str, mus: list[float]) -> BotVersion:
    history = tuple(RatingPoint(mu, 8.0 - i * 0.01, label=f"game {i}") for i, mu in enumerate(mus))
    return BotVersion(LeaderboardRow(0, "b", name, 25.0, 8.0, len(mus)), "t", history)


def test_every_version_is_drawn_oldest_first_with_its_version_named() -> None:
    """Control: the page drew the latest version's ratings alone (2 points here, not 5)."""
    newest, oldest = _version("v2" * 8, [30.0, 31.0]), _version("v1" * 8, [20.0, 21.0, 22.0])
    points = whole_history([newest, oldest])  # the page's order: newest first
    assert [p.mu for p in points] == [20.0, 21.0, 22.0, 30.0, 31.0]
    assert points[0].label == "version v1v1v1v1v1v1, game 0"
    assert points[-1].label == "version v2v2v2v2v2v2, game 1"
    assert rating_history_svg(points).count('class="plot-dot"') == 5


@pytest.mark.parametrize(
    "size", [MAX_HISTORY_POINTS - 1, MAX_HISTORY_POINTS, 3 * MAX_HISTORY_POINTS + 7]
)
def test_a_long_history_is_thinned_evenly_and_keeps_its_ends(size: int) -> None:
    points = whole_history([_version("v" * 12, [float(i) for i in range(size)])])
    assert len(points) == min(size, MAX_HISTORY_POINTS)
    assert points[0].mu == 0.0 and points[-1].mu == float(size - 1)
    assert [p.mu for p in points] == sorted(p.mu for p in points)
