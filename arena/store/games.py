"""Finished games: stored atomically with their rating update; game queries.

The store writes what it is given: the rating update (``rate``) and what each
seat adds to the failure counters come from the caller
(``arena.tournament.policy.results.store_game``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from arena.referee.types import BotStatus, GameReport
from arena.store.db import NotFoundError, Store, StoreError, utc_now
from arena.store.live import drop_live_game
from arena.store.models import (
    BotFailure,
    GameRow,
    Principal,
    RateGame,
    SeatFailures,
    StoredOutcome,
    TournamentFormat,
    TournamentStatus,
)
from arena.store.totals import count_finished, count_game
from arena.store.usage import game_charges


def record_game(
    store: Store,
    match_id: int,
    report: GameReport,
    *,
    rate: RateGame,
    failures: tuple[SeatFailures, SeatFailures],
) -> int | None:
    """Store one finished game and its rating update, in one transaction.

    ``rate`` maps the seats' stored (mu, sigma) to their new ones; ``failures``
    (by seat) is added to their versions' counters. Returns the new game id,
    or None when game ``(match_id, report.index)`` is already stored (a
    resumed match replaying it): nothing is counted twice.
    """
    with store.transaction() as db:
        return _record(db, match_id, report, rate, failures)


def record_game_in(
    db: sqlite3.Connection,
    match_id: int,
    report: GameReport,
    *,
    rate: RateGame,
    failures: tuple[SeatFailures, SeatFailures],
) -> int | None:
    """``record_game`` in the caller's open transaction (with what else it writes)."""
    return _record(db, match_id, report, rate, failures)


def record_games(
    store: Store,
    games: Sequence[tuple[int, GameReport, tuple[SeatFailures, SeatFailures]]],
    *,
    rate: RateGame,
    unrated: frozenset[int] = frozenset(),
    keep: RateGame | None = None,
) -> list[int | None]:
    """``record_game`` for each (match id, report, failures) in order, all in one
    transaction (one wait for the disk instead of one per game): all are stored or,
    on any error, none. Each rating update reads the ratings the previous one wrote.
    The games of the matches in ``unrated`` are rated with ``keep`` instead."""
    with store.transaction() as db:
        return [_record(db, match_id, report,
                        keep if keep is not None and match_id in unrated else rate, failures)
                for match_id, report, failures in games]  # fmt: skip


def _record(
    db: sqlite3.Connection,
    match_id: int,
    report: GameReport,
    rate: RateGame,
    failures: tuple[SeatFailures, SeatFailures],
) -> int | None:
    match = db.execute(
        "SELECT m.games, m.tournament_id, t.format, m.first_id, m.second_id,"
        " bf.name AS first, bs.name AS second FROM matches m"
        " JOIN tournaments t ON t.id = m.tournament_id"
        " JOIN bot_versions vf ON vf.id = m.first_id"
        " JOIN bots bf ON bf.id = vf.bot_id JOIN bot_versions vs ON vs.id = m.second_id"
        " JOIN bots bs ON bs.id = vs.bot_id WHERE m.id = ?",
        (match_id,),
    ).fetchone()
    if match is None:
        raise NotFoundError(f"no match {match_id}")
    ids = {match["first"]: match["first_id"], match["second"]: match["second_id"]}
    if set(report.bots_by_seat) != set(ids) or not 0 <= report.index < match["games"]:
        raise StoreError(
            f"game {report.index} of {report.bots_by_seat} does not belong to match {match_id}"
        )
    started_at, action_ms = _live_timing(db, match_id, report.index)
    drop_live_game(db, match_id, report.index)  # the stored game replaces its live view
    if db.execute(
        "SELECT 1 FROM games WHERE match_id = ? AND game_index = ?", (match_id, report.index)
    ).fetchone():
        return None
    seat_ids = (ids[report.bots_by_seat[0]], ids[report.bots_by_seat[1]])
    winner_seat = None if report.winner is None else report.bots_by_seat.index(report.winner)
    statuses = tuple(str(report.statuses.get(b, BotStatus.OK)) for b in report.bots_by_seat)
    times = (float(report.time_ms.get(report.bots_by_seat[0], 0.0)),
             float(report.time_ms.get(report.bots_by_seat[1], 0.0)))  # fmt: skip
    startup = (float(report.startup_ms.get(report.bots_by_seat[0], 0.0)),
               float(report.startup_ms.get(report.bots_by_seat[1], 0.0)))  # fmt: skip
    finished_at = utc_now()
    game_id = db.execute(
        "INSERT INTO games (match_id, game_index, seat0_id, seat1_id, winner_seat, reason,"
        " status0, status1, actions, time0_ms, time1_ms, record, finished_at, started_at,"
        " action_ms, startup0_ms, startup1_ms)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (match_id, report.index, *seat_ids, winner_seat, report.reason, *statuses,
         report.actions, *times, json.dumps(report.record, separators=(",", ":")),
         finished_at, started_at, action_ms, *startup),
    ).lastrowid  # fmt: skip
    assert game_id is not None
    for seat, name in enumerate(report.bots_by_seat):
        if name in report.stderr:  # private: never part of the public record
            db.execute(
                "INSERT INTO game_stderr (game_id, seat, bot_version_id, stderr)"
                " VALUES (?, ?, ?, ?)",
                (game_id, seat, seat_ids[seat], report.stderr[name]),
            )
    _rate(db, game_id, seat_ids, winner_seat, rate, failures)
    tournament_id, ladder = match["tournament_id"], match["format"] == TournamentFormat.LADDER
    count_game(
        db, tournament_id, game_id, seat_ids, winner_seat, ladder=ladder,
        charges=game_charges(times, started_at, finished_at, startup),
    )  # fmt: skip
    played = db.execute("SELECT COUNT(*) FROM games WHERE match_id = ?", (match_id,))
    if played.fetchone()[0] >= match["games"]:
        db.execute("UPDATE matches SET finished_at = ? WHERE id = ?", (utc_now(), match_id))
        versions = (match["first_id"], match["second_id"])
        count_finished(db, tournament_id, versions, ladder=ladder)  # once: no game comes after
    return game_id


def _live_timing(
    db: sqlite3.Connection, match_id: int, game_index: int
) -> tuple[str | None, str | None]:
    """The live game's start and its actions' times (epoch ms, JSON), before it is dropped;
    (None, None) when it had no live view."""
    live = db.execute(
        "SELECT id, started_at FROM live_games WHERE match_id = ? AND game_index = ?",
        (match_id, game_index),
    ).fetchone()
    if live is None:
        return None, None
    times = []
    for text, added_at in db.execute(
        "SELECT entry, added_at FROM live_actions WHERE live_game_id = ? ORDER BY seq",
        (live["id"],),
    ):
        entry = json.loads(text)
        if "reshuffle" in entry:
            continue
        at = entry.get("at_ms")
        times.append(at if isinstance(at, int) else round(_epoch_s(added_at) * 1000))
    return live["started_at"], json.dumps(times, separators=(",", ":"))


def _epoch_s(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def _rate(
    db: sqlite3.Connection,
    game_id: int,
    seat_ids: tuple[int, int],
    winner_seat: int | None,
    rate: RateGame,
    failures: tuple[SeatFailures, SeatFailures],
) -> None:
    before = []
    for version_id in seat_ids:
        row = db.execute("SELECT mu, sigma FROM bot_versions WHERE id = ?", (version_id,))
        mu, sigma = row.fetchone()
        before.append((float(mu), float(sigma)))
    after = rate(before[0], before[1], winner_seat)
    for seat, version_id in enumerate(seat_ids):
        outcome = "draws" if winner_seat is None else "wins" if winner_seat == seat else "losses"
        failed = failures[seat]
        db.execute(
            "UPDATE bot_versions SET mu = ?, sigma = ?, games = games + 1,"
            f" {outcome} = {outcome} + 1,"
            " timeouts = timeouts + ?, crashes = crashes + ?, illegal_actions = illegal_actions + ?"
            " WHERE id = ?",
            (after[seat][0], after[seat][1], failed.timeouts, failed.crashes,
             failed.illegal_actions, version_id),
        )  # fmt: skip
        db.execute(
            "INSERT INTO rating_history (game_id, bot_version_id, mu, sigma) VALUES (?, ?, ?, ?)",
            (game_id, version_id, after[seat][0], after[seat][1]),
        )


def game_outcomes(store: Store, tournament_id: int) -> list[StoredOutcome]:
    """Every stored game of a tournament, oldest first: who sat where, who won."""
    with store.reading() as db:
        rows = db.execute(
            "SELECT g.match_id, b0.name, b1.name, g.winner_seat FROM games g"
            " JOIN matches m ON m.id = g.match_id"
            " JOIN bot_versions v0 ON v0.id = g.seat0_id JOIN bots b0 ON b0.id = v0.bot_id"
            " JOIN bot_versions v1 ON v1.id = g.seat1_id JOIN bots b1 ON b1.id = v1.bot_id"
            " WHERE m.tournament_id = ? ORDER BY g.id",
            (tournament_id,),
        ).fetchall()
    return [
        StoredOutcome(r[0], (r[1], r[2]), None if r[3] is None else (r[1], r[2])[r[3]])
        for r in rows
    ]


_GAME_COLUMNS = """
SELECT g.id, m.tournament_id, t.name AS tournament, g.match_id, m.round, g.game_index,
       b0.name AS bot0, b1.name AS bot1, v0.version AS version0, v1.version AS version1,
       g.winner_seat, g.reason, g.status0, g.status1, g.actions, g.time0_ms, g.time1_ms,
       g.finished_at
"""
_GAME_JOINS = """
JOIN matches m ON m.id = g.match_id JOIN tournaments t ON t.id = m.tournament_id
JOIN bot_versions v0 ON v0.id = g.seat0_id JOIN bots b0 ON b0.id = v0.bot_id
JOIN bot_versions v1 ON v1.id = g.seat1_id JOIN bots b1 ON b1.id = v1.bot_id
"""
_GAME_SELECT = f"{_GAME_COLUMNS} FROM games g {_GAME_JOINS}"
# a tournament's games newest first, read from its index (schema v9) in order: no sort of all
_TOURNAMENT_GAME_SELECT = (
    f"{_GAME_COLUMNS} FROM tournament_games tg CROSS JOIN games g ON g.id = tg.game_id"
    f" {_GAME_JOINS} WHERE tg.tournament_id = ?"
)


def head_to_head(store: Store, bot: str, opponent: str) -> tuple[int, int, int]:
    """``bot``'s games won, drawn and lost against ``opponent`` (every version, every
    tournament and the ladder)."""
    with store.reading() as db:
        row = db.execute(
            "SELECT SUM(CASE WHEN g.winner_seat IS NULL THEN 0 WHEN (g.winner_seat = 0)"
            " = (b0.name = :bot) THEN 1 ELSE 0 END),"
            " SUM(g.winner_seat IS NULL),"
            " SUM(CASE WHEN g.winner_seat IS NULL THEN 0 WHEN (g.winner_seat = 0)"
            " = (b0.name = :bot) THEN 0 ELSE 1 END)"
            " FROM games g JOIN bot_versions v0 ON v0.id = g.seat0_id"
            " JOIN bots b0 ON b0.id = v0.bot_id JOIN bot_versions v1 ON v1.id = g.seat1_id"
            " JOIN bots b1 ON b1.id = v1.bot_id"
            " WHERE (b0.name = :bot AND b1.name = :opponent)"
            " OR (b0.name = :opponent AND b1.name = :bot)",
            {"bot": bot, "opponent": opponent},
        ).fetchone()
    return (int(row[0] or 0), int(row[1] or 0), int(row[2] or 0))


def _game_row(r: sqlite3.Row) -> GameRow:
    return GameRow(
        id=r["id"], tournament_id=r["tournament_id"], tournament=r["tournament"],
        match_id=r["match_id"], round=r["round"], game_index=r["game_index"],
        bots=(r["bot0"], r["bot1"]), versions=(r["version0"], r["version1"]),
        winner_seat=r["winner_seat"], reason=r["reason"], statuses=(r["status0"], r["status1"]),
        actions=r["actions"], time_ms=(r["time0_ms"], r["time1_ms"]), finished_at=r["finished_at"],
    )  # fmt: skip


def list_games(
    store: Store,
    *,
    tournament_id: int | None = None,
    bot: str | None = None,
    limit: int = 100,
    offset: int = 0,
    opponent: str | None = None,
) -> list[GameRow]:
    """Finished games, newest first, optionally of one tournament and/or one bot (and with
    ``bot``, only those against ``opponent``).

    A tournament's are read from its index of games (``tournament_games``), newest
    first: as many rows as asked for, however many games it has.
    """
    clauses: list[str] = []
    params: list[object] = []
    select, order = _GAME_SELECT, "g.id"
    if tournament_id is not None:
        select, order = _TOURNAMENT_GAME_SELECT, "tg.game_id"
        params.append(tournament_id)
    if bot is not None and opponent is not None:
        clauses.append("((b0.name = ? AND b1.name = ?) OR (b0.name = ? AND b1.name = ?))")
        params += [bot, opponent, opponent, bot]
    elif bot is not None:
        clauses.append("(b0.name = ? OR b1.name = ?)")
        params += [bot, bot]
    where = " AND ".join(clauses)
    if where:
        where = ("AND " if tournament_id is not None else "WHERE ") + where
    with store.reading() as db:
        rows = db.execute(
            f"{select} {where} ORDER BY {order} DESC LIMIT ? OFFSET ?",
            (*params, max(0, limit), max(0, offset)),
        ).fetchall()
    return [_game_row(r) for r in rows]


def think_ms_per_game(store: Store) -> dict[tuple[str, str], float]:
    """(bot, version): the mean time it took to think per stored game (both seats).

    What the tournament runner orders matches by (longest expected first).
    """
    with store.reading() as db:
        rows = db.execute(
            "SELECT b.name, v.version, AVG(t.ms) FROM ("
            " SELECT seat0_id AS version_id, time0_ms AS ms FROM games"
            " UNION ALL SELECT seat1_id, time1_ms FROM games"
            ") t JOIN bot_versions v ON v.id = t.version_id JOIN bots b ON b.id = v.bot_id"
            " GROUP BY t.version_id"
        ).fetchall()
    return {(name, version): float(ms) for name, version, ms in rows}


def get_game(store: Store, game_id: int) -> GameRow:
    with store.reading() as db:
        row = db.execute(f"{_GAME_SELECT} WHERE g.id = ?", (game_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no game {game_id}")
    return _game_row(row)


def find_game(store: Store, match_id: int, game_index: int) -> GameRow | None:
    """Game ``game_index`` of match ``match_id`` if it is stored (finished), else None."""
    with store.reading() as db:
        row = db.execute(
            f"{_GAME_SELECT} WHERE g.match_id = ? AND g.game_index = ?", (match_id, game_index)
        ).fetchone()
    return None if row is None else _game_row(row)


def game_record(store: Store, game_id: int) -> dict[str, object]:
    """A finished game's kahuna-record/1 (stored games are always finished)."""
    with store.reading() as db:
        row = db.execute("SELECT record FROM games WHERE id = ?", (game_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no game {game_id}")
    record: dict[str, object] = json.loads(row["record"])
    return record


@dataclass(frozen=True, slots=True)
class WithheldRecord:
    """Why a stored game's record is not public yet: games of its deal still to be played."""

    game_id: int
    match_id: int
    game_index: int
    waiting_for: tuple[int, ...]  # indices of the match's games of the same deal, not stored

    def message(self) -> str:
        games = " and ".join(f"game {index}" for index in self.waiting_for)
        verb = "is" if len(self.waiting_for) == 1 else "are"
        return (
            f"the record of game {self.game_id} is withheld until {games} of match"
            f" {self.match_id} (the same deal, seats swapped) {verb} played; until then"
            " only what a spectator sees of it is public"
        )


class RecordWithheldError(StoreError):
    """A full record (or anything from its hidden cards) asked for before its deal is played."""

    def __init__(self, withheld: WithheldRecord) -> None:
        super().__init__(withheld.message())
        self.withheld = withheld


_DEAL_SELECT = """
SELECT g.match_id, g.game_index, m.games, m.finished_at, t.status,
       json_extract(g.record, '$.match.paired') AS paired,
       json_extract(g.record, '$.match.deal_index') AS deal_index
FROM games g JOIN matches m ON m.id = g.match_id JOIN tournaments t ON t.id = m.tournament_id
WHERE g.id = ?
"""


def record_withheld(store: Store, game_id: int) -> WithheldRecord | None:
    """Why game ``game_id``'s record is not public yet, or None once it is.

    Games 2k and 2k+1 of a paired match share deal k: while one is stored and
    the other can still be played, the stored one's hidden cards (hands,
    face-down discards, deck draws, reshuffle orders) are those of a game to
    come. Its record is public once every game of its deal is stored, or its
    match can no longer play them (the match or its tournament is finished).
    Unpaired games (``match.paired`` false: a fresh deal each) are public at
    once; a record without ``paired`` (an older arena) counts as paired, as
    every match was then. NotFoundError when there is no such game.
    """
    with store.reading() as db:
        row = db.execute(_DEAL_SELECT, (game_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no game {game_id}")
        if row["finished_at"] is not None or row["status"] == TournamentStatus.FINISHED:
            return None
        if row["paired"] is not None and not row["paired"]:
            return None
        index = int(row["game_index"])
        deal = row["deal_index"]
        deal = index // 2 if not isinstance(deal, int) else deal
        sharing = [i for i in (2 * deal, 2 * deal + 1) if i != index and 0 <= i < row["games"]]
        stored = {
            int(r[0])
            for r in db.execute("SELECT game_index FROM games WHERE match_id = ?", (row[0],))
        }
    waiting = tuple(i for i in sharing if i not in stored)
    return WithheldRecord(game_id, int(row["match_id"]), index, waiting) if waiting else None


def revealed_record(store: Store, game_id: int, principal: Principal | None) -> dict[str, object]:
    """Game ``game_id``'s full record for ``principal`` (None: the public).

    The one gate every public way to a stored record goes through (the API,
    the web pages, ``WatchGame``): the admin always gets it; anyone else only
    once ``record_withheld`` says nothing of its deal is still to be played,
    else RecordWithheldError naming the games it waits for.
    """
    if principal is None or not principal.is_admin:
        withheld = record_withheld(store, game_id)
        if withheld is not None:
            raise RecordWithheldError(withheld)
    return game_record(store, game_id)


def game_stderr(store: Store, game_id: int) -> dict[int, str]:
    """Seat -> the end of that bot's stderr in game ``game_id``, for the seats that failed.

    Private to each bot's owner and the admin: callers check who asks.
    """
    with store.reading() as db:
        rows = db.execute(
            "SELECT seat, stderr FROM game_stderr WHERE game_id = ?", (game_id,)
        ).fetchall()
    return {r["seat"]: r["stderr"] for r in rows}


def bot_failures(store: Store, bot: str, limit: int = 10) -> list[BotFailure]:
    """The newest stored games where ``bot`` failed and left stderr, newest first."""
    with store.reading() as db:
        rows = db.execute(
            "SELECT s.game_id, v.version, s.seat, s.stderr, g.finished_at,"
            " CASE s.seat WHEN 0 THEN g.status0 ELSE g.status1 END AS status"
            " FROM game_stderr s JOIN games g ON g.id = s.game_id"
            " JOIN bot_versions v ON v.id = s.bot_version_id JOIN bots b ON b.id = v.bot_id"
            " WHERE b.name = ? ORDER BY s.game_id DESC LIMIT ?",
            (bot, max(0, limit)),
        ).fetchall()
    return [
        BotFailure(game_id=r["game_id"], version=r["version"], seat=r["seat"],
                   status=r["status"], stderr=r["stderr"], finished_at=r["finished_at"])
        for r in rows
    ]  # fmt: skip
