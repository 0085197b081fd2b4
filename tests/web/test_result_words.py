"""A game's result in words: who won and why, never a bare reason code."""

from __future__ import annotations

import pytest

from arena.kahuna.state import Termination
from arena.referee.result_words import REASON_WORDS
from arena.referee.types import BotStatus
from arena.web.models import GameSummary


def _game(
    winner_seat: int | None, reason: str | None, finished: bool = True,
    statuses: tuple[str, str] = ("ok", "ok"),
) -> GameSummary:  # fmt: skip
    return GameSummary(1, ("reef", "gecko"), finished, winner_seat, reason, (3, 1),
                       statuses=statuses)  # fmt: skip


@pytest.mark.parametrize(
    ("winner_seat", "reason", "text"),
    [
        (0, "no_bridges", "reef won: gecko had no bridge left on the board"),
        (1, "no_bridges", "gecko won: reef had no bridge left on the board"),
        (0, "points", "reef won: more points"),
        (1, "final_points", "gecko won: equal points, more in the final scoring"),
        (0, "bridges", "reef won: equal points, more bridges on the board"),
        (1, "timeout", "gecko won: reef ran out of time"),
        (0, "crash", "reef won: gecko crashed"),
        (None, "draw", "draw"),
        (None, None, "draw"),
        (0, "something_new", "reef won (something_new)"),  # an unknown reason is still shown
    ],
)
def test_results_read_as_words(winner_seat: int | None, reason: str | None, text: str) -> None:
    assert _game(winner_seat, reason).result_text() == text


@pytest.mark.parametrize(
    ("winner_seat", "statuses", "text"),
    [
        (1, ("timeout", "ok"), "gecko won: reef ran out of time"),
        (0, ("ok", "crash"), "reef won: gecko crashed"),
        (0, ("ok", "disconnect"), "reef won: gecko disconnected"),
        (0, ("ok", "ok"), "reef won: gecko forfeited"),  # no status to say how
    ],
)
def test_a_forfeit_reads_as_the_losers_failure(
    winner_seat: int, statuses: tuple[str, str], text: str
) -> None:
    """The referee stores every game a failure ended as "forfeit"; the page says which
    failure from the loser's status."""
    assert _game(winner_seat, "forfeit", statuses=statuses).result_text() == text


def test_every_way_a_game_ends_has_words() -> None:
    """Control: a reason left out of REASON_WORDS would show as a code in brackets."""
    reasons = {str(t) for t in Termination} | {str(s) for s in BotStatus if s != BotStatus.OK}
    assert reasons - set(REASON_WORDS) == set()
    assert "(" not in _game(0, "no_bridges").result_text()
    assert _game(0, None, finished=False).result_text() == "in progress"
