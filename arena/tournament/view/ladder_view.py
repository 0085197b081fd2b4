"""What the API and the web pages show of a ladder: one read of the store.

Standings (by mu - 3 sigma, with sigma shown), ladder games per bot, the
recent games and the pairing queue: the scheduler's next picks from the
stored state (``arena.tournament.pairing.ladder_schedule.plan``), what the runner
will schedule as slots free up, unless a game ends first and moves a rating.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.store import (
    GameRow,
    LadderEntrantRow,
    LeaderboardRow,
    NotFoundError,
    Store,
    TournamentFormat,
    TournamentRow,
    conservative_rating,
    every_ladder_settings,
    find_ladder,
    get_tournament,
    ladder_entrants,
    ladder_ratings,
    ladder_settings,
    leaderboard,
    list_games,
    next_ladder_round,
)
from arena.tournament.orchestration.ladder import active_entrants, contenders
from arena.tournament.pairing.ladder_schedule import plan
from arena.tournament.policy.ladder_config import DEFAULT_NAME, LadderSettings

RECENT_GAMES = 20
QUEUE_LENGTH = 8


@dataclass(frozen=True, slots=True)
class LadderStanding:
    rank: int
    entrant: LadderEntrantRow
    placing: bool  # still in its placement burst

    @property
    def conservative(self) -> float:
        return conservative_rating(self.entrant.mu, self.entrant.sigma)


@dataclass(frozen=True, slots=True)
class QueuedPairing:
    first: str
    second: str
    placement: bool


@dataclass(frozen=True, slots=True)
class LadderView:
    ladder: TournamentRow
    settings: LadderSettings
    standings: tuple[LadderStanding, ...]
    recent_games: tuple[GameRow, ...]
    queue: tuple[QueuedPairing, ...]


def ladder_view(
    store: Store,
    name: str = DEFAULT_NAME,
    *,
    recent_games: int = RECENT_GAMES,
    queue: int = QUEUE_LENGTH,
) -> LadderView:
    """The ladder ``name`` as shown (NotFoundError when there is no such ladder)."""
    tournament_id = find_ladder(store, name)
    if tournament_id is None:
        raise NotFoundError(f"no ladder {name!r} (start one with arena serve --ladder)")
    rows, settings = _entrants(store, tournament_id)
    standings = ranked(rows, settings)
    names = {r.version_id: r.bot for r in rows}
    config, _ = ladder_settings(store, tournament_id)
    picks = plan(
        contenders(rows, {r.version_id: r.in_play for r in rows}, config.games_per_match),
        next_ladder_round(store, tournament_id),
        queue,
        settings.policy,
    )
    return LadderView(
        ladder=get_tournament(store, tournament_id),
        settings=settings,
        standings=standings,
        recent_games=tuple(list_games(store, tournament_id=tournament_id, limit=recent_games)),
        queue=tuple(QueuedPairing(names[p.first], names[p.second], p.placement) for p in picks),
    )


def ladder_standings(store: Store, tournament_id: int) -> tuple[LadderStanding, ...]:
    """The standings of ladder ``tournament_id`` alone, as ``ladder_view`` ranks them (from
    the stored ratings and running totals: no game is read)."""
    return ranked(*_entrants(store, tournament_id))


def entrants_shown(store: Store, row: TournamentRow) -> tuple[str, ...]:
    """The bots a tournament's lists name and count: its stored entrants, or a ladder's
    standings' (its entrants come and go, none stored with the tournament)."""
    if row.format is not TournamentFormat.LADDER:
        return row.entrants
    return tuple(s.entrant.bot for s in ladder_standings(store, row.id))


def ranked(
    rows: Sequence[LadderEntrantRow], settings: LadderSettings
) -> tuple[LadderStanding, ...]:
    """Entrants by conservative rating (mu - 3 sigma), ties by bot name."""
    ordered = sorted(rows, key=lambda r: (-conservative_rating(r.mu, r.sigma), r.bot))
    return tuple(
        LadderStanding(i + 1, r, r.bot_matches < settings.placement_matches)
        for i, r in enumerate(ordered)
    )


def _entrants(store: Store, tournament_id: int) -> tuple[list[LadderEntrantRow], LadderSettings]:
    _, stored = ladder_settings(store, tournament_id)
    settings = LadderSettings.from_json(stored)
    rows = ladder_entrants(store, tournament_id, recent=settings.max_repeat)
    return active_entrants(rows, settings.entrants_per_user), settings


def waiting_bots(store: Store) -> frozenset[int]:
    """The ids of the bots that wait off every ladder behind their owner's newer bots (past
    its ``entrants_per_user``, ``active_entrants``): none when there is no ladder."""
    entrants = ladder_ratings(store)
    waiting: set[int] | None = None
    for stored in every_ladder_settings(store):
        limit = LadderSettings.from_json(stored).entrants_per_user
        playing = {r.bot_id for r in active_entrants(entrants, limit)}
        off = {r.bot_id for r in entrants} - playing
        waiting = off if waiting is None else waiting & off
    return frozenset(waiting or ())


def public_leaderboard(store: Store) -> list[LeaderboardRow]:
    """The public board: each bot's latest version, ranked, without the bots that play no
    more: withdrawn ones and those waiting behind their owner's newer bots. A user who
    parks a bot at a lucky high by submitting another keeps that high off the board, as
    withdrawing it would (its page keeps the rating; it is back once it plays again)."""
    return leaderboard(store, public=True, leave_out=waiting_bots(store))
