"""`arena match`'s last line: its percentage and Elo are the printed score's, for any number
of games; the interval is over full deal pairs, or said to be missing."""

from __future__ import annotations

import pytest

from arena.commands.match import summary_line
from arena.tournament.statistics.intervals import TableGame, field_intervals


def _line(games: list[TableGame]) -> str:
    interval = field_intervals(games, ["mypy", "mygo"])["mypy"]
    assert interval is not None
    return summary_line("mypy", interval)


def test_two_one_over_three_games_reads_two_thirds() -> None:
    """A split pair and an odd game won read "mypy 2 - mygo 1" and two thirds, not the
    pair's 50.0%."""
    games = [
        TableGame(0, ("mypy", "mygo"), 0),  # deal 0: mypy wins in seat 0
        TableGame(0, ("mygo", "mypy"), 0),  # deal 0: mygo wins in seat 0
        TableGame(1, ("mypy", "mygo"), 0),  # deal 1: its pair cut short by --games 3
    ]
    assert _line(games) == (
        "mypy: 66.7% over 3 games (1 deal pair + 1 unpaired game), Elo +120;"
        " too few pairs for a 95% interval (it needs 5)"
    )


@pytest.mark.parametrize("games", [1, 2, 5, 9, 10, 11, 21])
def test_the_percentage_is_the_score_for_any_number_of_games(games: int) -> None:
    """mypy wins seat 0 and loses seat 1 of every deal, and wins an odd last game."""
    played = [TableGame(i // 2, ("mypy", "mygo") if i % 2 == 0 else ("mygo", "mypy"), 0)
              for i in range(games)]  # fmt: skip
    points = sum(1 for g in played if g.players[0] == "mypy")
    line = _line(played)
    assert line.startswith(f"mypy: {100 * points / games:.1f}% over {games} game")
    if games >= 10:
        assert "95% interval over the pairs [" in line and "LOS" in line
    else:
        assert "too few pairs" in line
