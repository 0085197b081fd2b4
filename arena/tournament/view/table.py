"""A tournament's standings and intervals as its views show them (/api/tournaments/ID,
WatchTournament).

A round robin, Swiss or SPRT tournament is ranked from its stored games, as
``arena.tournament.policy.results`` scores them. A ladder is ranked as /ladder and
GetLadder rank it, from the stored ratings and running totals (schema v9),
never from its games: a ladder's history grows without end, and scoring it
whole took seconds per view after 100,000 matches. Its rows carry the
conservative rating (mu - 3 sigma) as points and the version's ladder games
as games, and its ladder games won, drawn and lost; byes and tie-breaks are
not kept for a ladder (0), and no interval is given (a rating's sigma is its uncertainty).
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.store import Store, TournamentFormat, TournamentRow
from arena.tournament.policy.results import tournament_intervals, tournament_standings
from arena.tournament.rating.standings import Standing
from arena.tournament.statistics.intervals import TableIntervals
from arena.tournament.view.ladder_view import LadderStanding, ladder_standings

NO_INTERVALS = TableIntervals({}, {})


def tournament_table(
    store: Store, tournament: TournamentRow
) -> tuple[tuple[Standing, ...], TableIntervals]:
    """``tournament``'s standings, best first, and the intervals shown beside them."""
    if tournament.format is TournamentFormat.LADDER:
        return ladder_table(ladder_standings(store, tournament.id)), NO_INTERVALS
    return tournament_standings(store, tournament.id), tournament_intervals(store, tournament)


def ladder_table(standings: Sequence[LadderStanding]) -> tuple[Standing, ...]:
    """A ladder's standings as a tournament's rows (the module's terms)."""
    return tuple(
        Standing(
            rank=s.rank, bot=s.entrant.bot, points=s.conservative, games=s.entrant.ladder_games,
            wins=s.entrant.wins, draws=s.entrant.draws, losses=s.entrant.losses, byes=0,
            buchholz=0.0, sonneborn_berger=0.0,
        )
        for s in standings
    )  # fmt: skip
