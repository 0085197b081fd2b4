"""The gauntlet format's results: one candidate against each bot of a field.

A gauntlet (format ``gauntlet``, ``arena tournament run NAME --format gauntlet
CANDIDATE OPPONENT...``) is one match of paired deals between the candidate
(its first entrant) and each other entrant, each in a round of its own
(``arena.tournament.policy.rounds``). Pure: from the stored games as ``TableGame``,
the candidate's record and 95% interval against each opponent, and overall.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.tournament.statistics.intervals import (
    ScoreInterval,
    TableGame,
    field_intervals,
    head_to_head,
)


@dataclass(frozen=True, slots=True)
class GauntletRow:
    """The candidate's games against ``opponent`` (None: overall, against the field)."""

    opponent: str | None
    wins: int
    draws: int
    losses: int
    interval: ScoreInterval | None  # None before the first game

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def to_json(self) -> dict[str, object]:
        return {
            "opponent": self.opponent, "games": self.games, "wins": self.wins,
            "draws": self.draws, "losses": self.losses,
            "interval": None if self.interval is None else self.interval.to_json(),
        }  # fmt: skip


def _record(games: Sequence[TableGame], candidate: str) -> tuple[int, int, int]:
    scores = [g.score_of(candidate) for g in games if candidate in g.players]
    return scores.count(1.0), scores.count(0.5), scores.count(0.0)


def gauntlet_rows(
    games: Sequence[TableGame], candidate: str, opponents: Sequence[str]
) -> tuple[list[GauntletRow], GauntletRow]:
    """The candidate's row against each of ``opponents`` (in order), and overall."""
    h2h = head_to_head(games)
    rows = []
    for opponent in opponents:
        met = [g for g in games if set(g.players) == {candidate, opponent}]
        rows.append(GauntletRow(opponent, *_record(met, candidate), h2h.get((candidate, opponent))))
    overall = GauntletRow(
        None, *_record(games, candidate), field_intervals(games, [candidate])[candidate]
    )
    return rows, overall
