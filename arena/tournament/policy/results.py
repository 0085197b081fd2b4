"""What a finished game counts for: rating, failure counters, standings, crosstable.

The store writes a game with what it is given (``arena.store.record_game``);
this says what to give it: which statuses count as a timeout, a crash or an
illegal action, and the TrueSkill update (``arena.tournament.rating.ratings``),
applied in the store's transaction to the ratings stored at that moment.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.referee.types import BotStatus, GameReport
from arena.store import (
    Store,
    get_tournament,
    list_matches,
    match_owners,
    record_game,
    record_games,
    same_owner,
    tournament_byes,
)
from arena.store.games import game_outcomes
from arena.store.models import (
    LeaderboardRow,
    MuSigma,
    RateGame,
    SeatFailures,
    TournamentFormat,
    TournamentRow,
)
from arena.store.pairs import paired_outcomes
from arena.tournament.rating.ratings import Rating, rate_game
from arena.tournament.rating.standings import GameOutcome, Standing, compute_standings, crosstable
from arena.tournament.statistics.intervals import TableGame, TableIntervals

TIMEOUT_STATUSES = frozenset({BotStatus.TIMEOUT})
CRASH_STATUSES = frozenset({BotStatus.CRASH, BotStatus.DISCONNECT})
ILLEGAL_STATUSES = frozenset(
    {BotStatus.ILLEGAL_ACTION, BotStatus.MALFORMED_MESSAGE, BotStatus.PROTOCOL_VIOLATION}
)


def seat_failures(status: BotStatus) -> SeatFailures:
    """What ``status`` adds to its version's failure counters."""
    return SeatFailures(
        timeouts=int(status in TIMEOUT_STATUSES),
        crashes=int(status in CRASH_STATUSES),
        illegal_actions=int(status in ILLEGAL_STATUSES),
    )


def rate(first: MuSigma, second: MuSigma, winner_seat: int | None) -> tuple[MuSigma, MuSigma]:
    """The TrueSkill update of one game, on (mu, sigma) pairs by seat."""
    after = rate_game(Rating(*first), Rating(*second), winner=winner_seat)
    return (after[0].mu, after[0].sigma), (after[1].mu, after[1].sigma)


def _failures(report: GameReport) -> tuple[SeatFailures, SeatFailures]:
    first, second = (seat_failures(report.statuses.get(bot, BotStatus.OK))
                     for bot in report.bots_by_seat)  # fmt: skip
    return first, second


def unrated(first: MuSigma, second: MuSigma, winner_seat: int | None) -> tuple[MuSigma, MuSigma]:
    """No rating update: a game between two bots of one owner (``arena.store.same_owner``),
    whose result the owner decides. It is played and counted, never rated."""
    return first, second


def rate_of(store: Store, match_id: int) -> RateGame:
    """How a game of ``match_id`` is rated: ``rate``, or ``unrated`` when one user owns both."""
    return unrated if same_owner(match_owners(store, match_id)) else rate


def store_game(store: Store, match_id: int, report: GameReport) -> int | None:
    """Store a finished game with its rating update and failure counts, in one transaction.

    The new game id, or None when the game is stored already (a resumed match).
    """
    return record_game(
        store, match_id, report, rate=rate_of(store, match_id), failures=_failures(report)
    )


def store_games(store: Store, games: Sequence[tuple[int, GameReport]]) -> list[int | None]:
    """``store_game`` for each (match id, report) in order, in one transaction: all
    or none stored (a driver receiving many games at once waits for the disk once)."""
    one_owner = frozenset(m for m in {m for m, _ in games} if same_owner(match_owners(store, m)))
    return record_games(
        store, [(m, report, _failures(report)) for m, report in games], rate=rate,
        unrated=one_owner, keep=unrated,
    )  # fmt: skip


def _outcomes(store: Store, tournament_id: int) -> list[GameOutcome]:
    return [GameOutcome(o.match_id, o.bots, o.winner) for o in game_outcomes(store, tournament_id)]


def tournament_standings(store: Store, tournament_id: int) -> tuple[Standing, ...]:
    """Standings from the games stored so far.

    A Swiss bye scores a match won (``games_per_match`` points) once its round is
    paired; in a round robin every bot sits out equally often, so byes score nothing,
    and one counts once every match of its round is played (a round robin stores all
    its rounds, byes with them, at creation: none is sat out before play).
    """
    tournament = get_tournament(store, tournament_id)
    swiss = tournament.format is TournamentFormat.SWISS
    bye_points = tournament.config.games_per_match if swiss else 0
    byes_by_round = tournament_byes(store, tournament_id)
    if not swiss and byes_by_round:
        unplayed = {m.round for m in list_matches(store, tournament_id) if m.finished_at is None}
        byes_by_round = {n: bot for n, bot in byes_by_round.items() if n not in unplayed}
    byes: dict[str, int] = {}
    for bot in byes_by_round.values():
        byes[bot] = byes.get(bot, 0) + 1
    return compute_standings(
        tournament.entrants, _outcomes(store, tournament_id),
        byes=byes, bye_points=float(bye_points),
    )  # fmt: skip


def tournament_crosstable(store: Store, tournament_id: int) -> dict[tuple[str, str], float]:
    """``{(bot, opponent): points scored}`` over the games stored so far."""
    return crosstable(_outcomes(store, tournament_id))


def table_games(store: Store, tournament_id: int | None = None) -> list[TableGame]:
    """The stored games of a tournament (all: None) as confidence intervals need them,
    players by bot name; deals keyed by (match, deal index)."""
    return [
        TableGame((g.match_id, g.deal_index), g.bots, g.winner_seat, g.statuses)
        for g in paired_outcomes(store, tournament_id)
    ]


def version_key(bot: str, version: str) -> str:
    """How ``version_table_games`` names a bot version (bot names hold no space)."""
    return f"{bot} {version}"


def version_table_games(store: Store) -> list[TableGame]:
    """Every stored game of bots with players keyed by bot version (``version_key``): the
    leaderboard's, where each version is scored against every version it met (a person's
    games at /play are left out: they rate no bot, and a person could make a bot's score)."""
    return [
        TableGame(
            (g.match_id, g.deal_index),
            (version_key(g.bots[0], g.versions[0]), version_key(g.bots[1], g.versions[1])),
            g.winner_seat,
            g.statuses,
        )
        for g in paired_outcomes(store, bots_only=True)
    ]


def leaderboard_intervals(store: Store, rows: Sequence[LeaderboardRow]) -> TableIntervals:
    """What the pairs say about each leaderboard row (``version_key`` of its entry)."""
    keys = [version_key(r.entry.bot, r.entry.version) for r in rows]
    return TableIntervals.of(version_table_games(store), keys)


def tournament_intervals(store: Store, tournament: TournamentRow) -> TableIntervals:
    """Each entrant against the field and each pair that met, with 95% intervals."""
    return TableIntervals.of(table_games(store, tournament.id), tournament.entrants)
