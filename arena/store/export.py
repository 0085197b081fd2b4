"""Stored games read in order, a page at a time, for ``arena export``.

Each page is one short read (keyset on the game id), so a store of a million
games is walked with one page in memory and no read transaction held between
pages. Whether a game may leave the arena is not decided here: the exporter
asks ``record_withheld`` of every game it is given.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

from arena.store.db import Store
from arena.store.models import INITIAL_MU, INITIAL_SIGMA


@dataclass(frozen=True, slots=True)
class StoredGame:
    """One stored game with what a data row of it needs; seats are (seat 0, seat 1)."""

    game_id: int
    tournament: str
    tournament_format: str
    match_id: int
    round: int
    game_index: int
    bots: tuple[str, str]
    versions: tuple[str, str]
    rating_before: tuple[tuple[float, float], tuple[float, float]]  # (mu, sigma) per seat
    rating_after: tuple[tuple[float, float], tuple[float, float]]
    winner_seat: int | None
    reason: str
    statuses: tuple[str, str]
    actions: int
    time_ms: tuple[float, float]
    startup_ms: tuple[float, float]  # launch to Hello before the game (0: not kept)
    finished_at: str
    record_json: str


_PAGE = """
SELECT g.id, t.name AS tournament, t.format, g.match_id, m.round, g.game_index,
       b0.name AS bot0, v0.version AS version0, b1.name AS bot1, v1.version AS version1,
       g.seat0_id, g.seat1_id, g.winner_seat, g.reason, g.status0, g.status1, g.actions,
       g.time0_ms, g.time1_ms, g.startup0_ms, g.startup1_ms, g.finished_at, g.record
FROM games g
JOIN matches m ON m.id = g.match_id
JOIN tournaments t ON t.id = m.tournament_id
JOIN bot_versions v0 ON v0.id = g.seat0_id JOIN bots b0 ON b0.id = v0.bot_id
JOIN bot_versions v1 ON v1.id = g.seat1_id JOIN bots b1 ON b1.id = v1.bot_id
WHERE g.id > ? AND (? IS NULL OR m.tournament_id = ?)
ORDER BY g.id LIMIT ?
"""

_AFTER = "SELECT id, mu, sigma FROM rating_history WHERE game_id = ? AND bot_version_id = ?"
# The version's rating after its previous rated game: rating rows are written with
# their game, in order, so the row before this game's is the rating it started from
# (an index seek on history_by_version, whose entries end with the row id).
_BEFORE = (
    "SELECT mu, sigma FROM rating_history WHERE bot_version_id = ? AND id < ?"
    " ORDER BY id DESC LIMIT 1"
)
_BEFORE_GAME = (
    "SELECT mu, sigma FROM rating_history WHERE bot_version_id = ? AND game_id < ?"
    " ORDER BY id DESC LIMIT 1"
)


def stored_games(
    store: Store, tournament_id: int | None = None, *, page_size: int = 200, after: int = 0
) -> Iterator[StoredGame]:
    """Every stored game (of ``tournament_id`` if given) with an id above ``after``, in id
    order, ``page_size`` per read."""
    if page_size < 1:
        raise ValueError(f"page_size must be at least 1, not {page_size}")
    while True:
        with store.reading() as db:
            rows = db.execute(_PAGE, (after, tournament_id, tournament_id, page_size)).fetchall()
            games = []
            for row in rows:
                before: list[tuple[float, float]] = []
                later: list[tuple[float, float]] = []
                for version_id in (row["seat0_id"], row["seat1_id"]):
                    rated = db.execute(_AFTER, (row["id"], version_id)).fetchone()
                    if rated is None:  # no rating row: the game left the rating as it was
                        prior = db.execute(_BEFORE_GAME, (version_id, row["id"])).fetchone()
                    else:
                        prior = db.execute(_BEFORE, (version_id, rated["id"])).fetchone()
                    point = (INITIAL_MU, INITIAL_SIGMA) if prior is None else tuple(prior)
                    before.append((float(point[0]), float(point[1])))
                    later.append(before[-1] if rated is None else (rated["mu"], rated["sigma"]))
                games.append(_game(row, before, later))
        yield from games
        if len(rows) < page_size:
            return
        after = rows[-1]["id"]


def _game(
    r: sqlite3.Row, before: list[tuple[float, float]], after: list[tuple[float, float]]
) -> StoredGame:
    return StoredGame(
        game_id=r["id"],
        tournament=r["tournament"],
        tournament_format=r["format"],
        match_id=r["match_id"],
        round=r["round"],
        game_index=r["game_index"],
        bots=(r["bot0"], r["bot1"]),
        versions=(r["version0"], r["version1"]),
        rating_before=(before[0], before[1]),
        rating_after=(after[0], after[1]),
        winner_seat=r["winner_seat"],
        reason=r["reason"],
        statuses=(r["status0"], r["status1"]),
        actions=r["actions"],
        time_ms=(float(r["time0_ms"]), float(r["time1_ms"])),
        startup_ms=(float(r["startup0_ms"]), float(r["startup1_ms"])),
        finished_at=r["finished_at"],
        record_json=r["record"],
    )
