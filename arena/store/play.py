"""People's games at /play and the people's rating pool, as they are given to the store.

Each game a person plays is a one-game tournament (a record, an audit and a page
like any other) marked in ``play_games``: the lists of tournaments leave these out
(``list_tournaments``), the person's own list reads them here. Whether a game is
rated in the people's pool, and with what update, is decided by the caller
(``arena.tournament.policy.play_pool``); the store keeps the pool apart from the
bots' ratings: a play game never moves a ``bot_versions`` rating.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.rating_scale import INITIAL_MU, INITIAL_SIGMA, conservative_rating
from arena.referee.types import GameReport
from arena.store.db import NotFoundError, Store, StoreError, utc_now
from arena.store.games import record_game_in
from arena.store.models import (
    MuSigma,
    PlannedRound,
    RateGame,
    SeatFailures,
    TournamentConfig,
    TournamentFormat,
    TournamentRow,
)
from arena.store.tournaments import get_tournament, insert_tournament_in

PERSON, BOT = 0, 1
"""The order of a people's pool update: (person, bot); its winner 0 is the person."""


@dataclass(frozen=True, slots=True)
class PlaySeat:
    """Who sits at a play table: the person, the bot's version, the person's seat, and why
    the game is not rated (None: rated in the people's pool)."""

    user: str
    bot_version_id: int
    seat: int
    unrated_reason: str | None


@dataclass(frozen=True, slots=True)
class PoolEntry:
    """One player of the people's pool: a person (``version`` None) or a bot version."""

    name: str
    version: str | None
    mu: float
    sigma: float
    games: int
    wins: int
    draws: int
    losses: int

    @property
    def conservative(self) -> float:
        return conservative_rating(self.mu, self.sigma)

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name, "version": self.version, "mu": round(self.mu, 3),
            "sigma": round(self.sigma, 3), "rating": round(self.conservative, 3),
            "games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class PlayGameRow:
    """One person's game at /play: its tournament, its stored game (None: not stored), the
    bot, the person's seat and result, and whether it was rated (the person's rating
    before and after, ``[mu, sigma]``)."""

    tournament_id: int
    tournament: str
    game_id: int | None
    user: str
    bot: str
    version: str
    seat: int
    result: str | None  # "win", "draw", "loss" for the person; None: no game stored
    reason: str | None
    rated: bool
    unrated_reason: str | None
    person_before: MuSigma | None
    person_after: MuSigma | None
    created_at: str

    def to_json(self) -> dict[str, object]:
        return {
            "tournament": self.tournament_id, "name": self.tournament, "game": self.game_id,
            "bot": self.bot, "version": self.version, "seat": self.seat, "result": self.result,
            "reason": self.reason, "rated": self.rated, "unrated_reason": self.unrated_reason,
            "rating_before": _rating_json(self.person_before),
            "rating_after": _rating_json(self.person_after), "created_at": self.created_at,
        }  # fmt: skip


def _rating_json(rating: MuSigma | None) -> dict[str, float] | None:
    if rating is None:
        return None
    mu, sigma = rating
    return {"mu": round(mu, 3), "sigma": round(sigma, 3),
            "rating": round(conservative_rating(mu, sigma), 3)}  # fmt: skip


def insert_play_tournament(
    store: Store,
    name: str,
    entrants: Mapping[str, int],
    config: TournamentConfig,
    rounds: Sequence[PlannedRound],
    seat: PlaySeat,
) -> TournamentRow:
    """Store a play game's one-game round robin and its ``play_games`` row together."""
    if seat.seat not in (0, 1):
        raise StoreError(f"a person sits in seat 0 or 1, not {seat.seat!r}")
    with store.transaction() as db:
        tournament_id = insert_tournament_in(
            db, name, TournamentFormat.ROUND_ROBIN, entrants, config, rounds, None
        )
        db.execute(
            "INSERT INTO play_games (tournament_id, user, bot_version_id, seat, rated,"
            " unrated_reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (tournament_id, seat.user, seat.bot_version_id, seat.seat,
             int(seat.unrated_reason is None), seat.unrated_reason, utc_now()),
        )  # fmt: skip
    return get_tournament(store, tournament_id)


def _keep(first: MuSigma, second: MuSigma, winner: int | None) -> tuple[MuSigma, MuSigma]:
    """The bots' pool is not the people's: both versions keep their (mu, sigma)."""
    return first, second


def record_play_game(
    store: Store,
    match_id: int,
    report: GameReport,
    *,
    failures: tuple[SeatFailures, SeatFailures],
    people: RateGame | None,
    unrated_reason: str | None = None,
) -> int | None:
    """Store a play game (unrated in the bots' pool) and, in the same transaction, its
    people's pool update: ``people`` maps (person, bot) before to after (winner 0: the
    person). A game its table opened unrated stays so; ``people`` None unrates a rated
    one with ``unrated_reason``. Returns the game id (None: already stored)."""
    if people is None and unrated_reason is None:
        raise StoreError("an unrated play game needs its unrated_reason")
    with store.transaction() as db:
        row = db.execute(
            "SELECT p.* FROM play_games p JOIN matches m ON m.tournament_id = p.tournament_id"
            " WHERE m.id = ?",
            (match_id,),
        ).fetchone()
        if row is None:
            raise NotFoundError(f"match {match_id} is not a game at /play")
        game_id = record_game_in(db, match_id, report, rate=_keep, failures=failures)
        if game_id is None:
            return None
        db.execute(
            "UPDATE play_games SET game_id = ? WHERE tournament_id = ?",
            (game_id, row["tournament_id"]),
        )
        if not row["rated"]:
            return game_id
        if people is None:
            db.execute(
                "UPDATE play_games SET rated = 0, unrated_reason = ? WHERE tournament_id = ?",
                (unrated_reason, row["tournament_id"]),
            )
            return game_id
        winner = db.execute("SELECT winner_seat FROM games WHERE id = ?", (game_id,)).fetchone()[0]
        person_won = None if winner is None else PERSON if winner == row["seat"] else BOT
        _rate_people(db, row, person_won, people)
    return game_id


def _rate_people(
    db: sqlite3.Connection, row: sqlite3.Row, person_won: int | None, people: RateGame
) -> None:
    now = utc_now()
    db.execute(
        "INSERT OR IGNORE INTO play_people (user, mu, sigma, updated_at) VALUES (?, ?, ?, ?)",
        (row["user"], INITIAL_MU, INITIAL_SIGMA, now),
    )
    db.execute(
        "INSERT OR IGNORE INTO play_bots (bot_version_id, mu, sigma, updated_at)"
        " VALUES (?, ?, ?, ?)",
        (row["bot_version_id"], INITIAL_MU, INITIAL_SIGMA, now),
    )
    person = db.execute(
        "SELECT mu, sigma FROM play_people WHERE user = ?", (row["user"],)
    ).fetchone()
    bot = db.execute(
        "SELECT mu, sigma FROM play_bots WHERE bot_version_id = ?", (row["bot_version_id"],)
    ).fetchone()
    before = ((float(person[0]), float(person[1])), (float(bot[0]), float(bot[1])))
    after = people(before[PERSON], before[BOT], person_won)
    outcomes = ("draws", "draws") if person_won is None else (
        ("wins", "losses") if person_won == PERSON else ("losses", "wins"))  # fmt: skip
    db.execute(
        f"UPDATE play_people SET mu = ?, sigma = ?, games = games + 1,"
        f" {outcomes[PERSON]} = {outcomes[PERSON]} + 1, updated_at = ? WHERE user = ?",
        (*after[PERSON], now, row["user"]),
    )
    db.execute(
        f"UPDATE play_bots SET mu = ?, sigma = ?, games = games + 1,"
        f" {outcomes[BOT]} = {outcomes[BOT]} + 1, updated_at = ? WHERE bot_version_id = ?",
        (*after[BOT], now, row["bot_version_id"]),
    )
    db.execute(
        "UPDATE play_games SET person_before = ?, person_after = ?, bot_before = ?,"
        " bot_after = ? WHERE tournament_id = ?",
        (*(json.dumps(list(r)) for r in (before[PERSON], after[PERSON], before[BOT], after[BOT])),
         row["tournament_id"]),
    )  # fmt: skip


PLAY_NOT_RESUMED = (
    "a person's game at /play is played only by its table, which is gone: it stays as it is"
)
"""What becomes of an interrupted /play game's tournament: nothing resumes it (a resume
would play the person's seat as a bot's and rate the game)."""


def only_its_table(name: str) -> str:
    """Why a run of /play game ``name``'s tournament is refused (a resume, StartTournament)."""
    return f"{name!r} is a person's game at /play: only its table plays it"


def is_play_tournament(store: Store, tournament_id: int) -> bool:
    with store.reading() as db:
        row = db.execute(
            "SELECT 1 FROM play_games WHERE tournament_id = ?", (tournament_id,)
        ).fetchone()
    return row is not None


def people_pool(store: Store) -> tuple[list[PoolEntry], list[PoolEntry]]:
    """The people's pool: (people, bot versions), each best first (mu - 3 sigma)."""
    with store.reading() as db:
        people = db.execute(
            "SELECT user, mu, sigma, games, wins, draws, losses FROM play_people"
        ).fetchall()
        bots = db.execute(
            "SELECT b.name, v.version, p.mu, p.sigma, p.games, p.wins, p.draws, p.losses"
            " FROM play_bots p JOIN bot_versions v ON v.id = p.bot_version_id"
            " JOIN bots b ON b.id = v.bot_id"
        ).fetchall()
    shown = (
        [PoolEntry(r[0], None, *r[1:]) for r in people],
        [PoolEntry(*r) for r in bots],
    )
    for entries in shown:
        entries.sort(key=lambda e: (-e.conservative, e.name, e.version or ""))
    return shown


def play_games(store: Store, user: str, *, limit: int = 50) -> list[PlayGameRow]:
    """``user``'s games at /play, newest first (at most ``limit``)."""
    with store.reading() as db:
        rows = db.execute(
            "SELECT p.*, t.name AS tournament, b.name AS bot, v.version, g.winner_seat,"
            " g.reason FROM play_games p JOIN tournaments t ON t.id = p.tournament_id"
            " JOIN bot_versions v ON v.id = p.bot_version_id JOIN bots b ON b.id = v.bot_id"
            " LEFT JOIN games g ON g.id = p.game_id WHERE p.user = ?"
            " ORDER BY p.tournament_id DESC LIMIT ?",
            (user, max(0, limit)),
        ).fetchall()
    return [_play_game_row(r) for r in rows]


def _play_game_row(r: sqlite3.Row) -> PlayGameRow:
    result = None
    if r["game_id"] is not None:
        winner = r["winner_seat"]
        result = "draw" if winner is None else "win" if winner == r["seat"] else "loss"
    return PlayGameRow(
        tournament_id=r["tournament_id"], tournament=r["tournament"], game_id=r["game_id"],
        user=r["user"], bot=r["bot"], version=r["version"], seat=r["seat"], result=result,
        reason=r["reason"], rated=bool(r["rated"]), unrated_reason=r["unrated_reason"],
        person_before=_mu_sigma(r["person_before"]), person_after=_mu_sigma(r["person_after"]),
        created_at=r["created_at"],
    )  # fmt: skip


def _mu_sigma(text: str | None) -> MuSigma | None:
    if text is None:
        return None
    mu, sigma = json.loads(text)
    return float(mu), float(sigma)
