"""The ladder's totals as the history gives them: the reference for the running totals.

Every ladder match and game read by SQL over ``matches`` and ``games`` (what a
v8 store, with no totals, can give), and each version's ladder games won, drawn
and lost counted from its games: a second, independent way to the same figures,
which the running totals are checked against.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import replace
from typing import Any

from arena.store import USAGE_HALF_LIFE_MS, LadderEntrantRow
from arena.store.totals import LadderTotals
from arena.store.usage import game_charges

# The ladder's reads from the history alone (no running totals).
_ENTRANTS = """
SELECT v.id, b.name AS bot, b.owner, v.version, v.mu, v.sigma, v.games, b.id AS bot_id
FROM bots b JOIN bot_versions v ON v.id = (SELECT MAX(id) FROM bot_versions WHERE bot_id = b.id)
WHERE b.withdrawn_at IS NULL AND v.runtime != 'remote'
ORDER BY v.id
"""

_MATCH_COUNTS = """
SELECT version_id, COUNT(*), MAX(round), SUM(finished_at IS NULL) FROM (
    SELECT first_id AS version_id, round, finished_at FROM matches WHERE tournament_id = :t
    UNION ALL SELECT second_id, round, finished_at FROM matches WHERE tournament_id = :t
) GROUP BY version_id
"""

_LADDER_GAMES = """
SELECT version_id, COUNT(*) FROM (
    SELECT g.seat0_id AS version_id FROM games g JOIN matches m ON m.id = g.match_id
    WHERE m.tournament_id = :t
    UNION ALL SELECT g.seat1_id FROM games g JOIN matches m ON m.id = g.match_id
    WHERE m.tournament_id = :t
) GROUP BY version_id
"""

_LADDER_RESULTS = """
SELECT version_id, SUM(outcome = 1), SUM(outcome = 0), SUM(outcome = -1) FROM (
    SELECT g.seat0_id AS version_id,
           CASE WHEN g.winner_seat IS NULL THEN 0 WHEN g.winner_seat = 0 THEN 1 ELSE -1 END
           AS outcome
    FROM games g JOIN matches m ON m.id = g.match_id WHERE m.tournament_id = :t
    UNION ALL SELECT g.seat1_id,
           CASE WHEN g.winner_seat IS NULL THEN 0 WHEN g.winner_seat = 1 THEN 1 ELSE -1 END
    FROM games g JOIN matches m ON m.id = g.match_id WHERE m.tournament_id = :t
) GROUP BY version_id
"""

_RECENT = """
SELECT version_id, opponent FROM (
    SELECT version_id, opponent, ROW_NUMBER() OVER (PARTITION BY version_id ORDER BY round DESC)
    AS n FROM (
        SELECT first_id AS version_id, second_id AS opponent, round FROM matches
        WHERE tournament_id = :t AND round > :since
        UNION ALL SELECT second_id, first_id, round FROM matches
        WHERE tournament_id = :t AND round > :since
    )
) WHERE n <= :recent ORDER BY version_id, n
"""


def history_totals(db: sqlite3.Connection, ladder: int, recent: int) -> dict[int, LadderTotals]:
    """Each version's ladder totals, from every ladder match and game."""
    counts = {r[0]: r[1:] for r in db.execute(_MATCH_COUNTS, {"t": ladder})}
    games = {r[0]: r[1] for r in db.execute(_LADDER_GAMES, {"t": ladder})}
    results = {r[0]: tuple(r[1:]) for r in db.execute(_LADDER_RESULTS, {"t": ladder})}
    opponents: dict[int, list[int]] = {}
    for version_id, opponent in db.execute(_RECENT, {"t": ladder, "recent": recent, "since": -1}):
        opponents.setdefault(version_id, []).append(opponent)
    return {
        version_id: LadderTotals(
            matches=matches,
            last_match=last,
            in_play=in_play,
            games=games.get(version_id, 0),
            recent=tuple(opponents.get(version_id, ())),
            wins=(won := results.get(version_id, (0, 0, 0)))[0],
            draws=won[1],
            losses=won[2],
        )
        for version_id, (matches, last, in_play) in counts.items()
    }


_LADDER_TIMES = """
SELECT m.round, v0.bot_id, b0.owner, g.seat0_id, v1.bot_id, b1.owner, g.seat1_id, g.time0_ms,
       g.time1_ms, {started_at}, g.finished_at, {startup}
FROM games g JOIN matches m ON m.id = g.match_id
JOIN bot_versions v0 ON v0.id = g.seat0_id JOIN bots b0 ON b0.id = v0.bot_id
JOIN bot_versions v1 ON v1.id = g.seat1_id JOIN bots b1 ON b1.id = v1.bot_id
WHERE m.tournament_id = :t ORDER BY g.id
"""


def history_usage(
    db: sqlite3.Connection, ladder: int
) -> tuple[dict[str | int, float], dict[int, float], dict[int, float]]:
    """Each owner's runner time now (a user by name, the admin's bots by bot id), each
    charge halved for every ``USAGE_HALF_LIFE_MS`` of charges after its game's (the games
    in the order they were stored), each version's mean charge per game, and each
    version's time as the owners': from every ladder game."""
    charged_at: list[tuple[float, tuple[Any, ...], tuple[float, float]]] = []
    now = 0.0
    charged: dict[int, list[float]] = {}
    per_version: dict[int, float] = {}
    kept = {r[1] for r in db.execute("PRAGMA table_info(games)")}  # v11 keeps the starts
    started_at = "g.started_at" if "started_at" in kept else "NULL"
    startup = "g.startup0_ms, g.startup1_ms" if "startup0_ms" in kept else "0, 0"  # v17
    query = _LADDER_TIMES.format(started_at=started_at, startup=startup)
    for row in db.execute(query, {"t": ladder}):
        charges = game_charges((row[7], row[8]), row[9], row[10], (row[11], row[12]))
        charged_at.append((now, tuple(row), charges))
        now += sum(charges)
    used: dict[str | int, float] = {}
    for at, row, charges in charged_at:
        for (bot_id, owner, version_id), charge in zip((row[1:4], row[4:7]), charges, strict=True):
            key = bot_id if owner is None else owner
            decay = 0.5 ** ((now - at) / USAGE_HALF_LIFE_MS)
            used[key] = used.get(key, 0.0) + charge * decay
            per_version[version_id] = per_version.get(version_id, 0.0) + charge * decay
            charged.setdefault(version_id, []).append(charge)
    return used, {v: sum(c) / len(c) for v, c in charged.items()}, per_version


def history_entrants(db: sqlite3.Connection, ladder: int, recent: int) -> list[LadderEntrantRow]:
    """``ladder_entrants`` from the history alone (``owner_turns`` left out)."""
    used, per_game, _ = history_usage(db, ladder)
    totals = history_totals(db, ladder, recent)
    empty = LadderTotals()
    bot_of = dict(db.execute("SELECT id, bot_id FROM bot_versions").fetchall())
    per_bot: dict[int, int] = {}
    for version_id, kept in totals.items():  # a bot places once, over all its versions
        per_bot[bot_of[version_id]] = per_bot.get(bot_of[version_id], 0) + kept.matches
    return [
        LadderEntrantRow(
            version_id=r[0],
            bot=r[1],
            version=r[3],
            owner=r[2],
            mu=r[4],
            sigma=r[5],
            games=r[6],
            ladder_games=(t := totals.get(r[0], empty)).games,
            matches=t.matches,
            last_match=t.last_match,
            in_play=t.in_play,
            recent=t.recent,
            bot_id=r[7],
            bot_matches=per_bot.get(r[7], 0),
            wins=t.wins,
            draws=t.draws,
            losses=t.losses,
            owner_used_ms=used.get(r[7] if r[2] is None else r[2], 0.0),
            game_ms=per_game.get(r[0]),
        )
        for r in db.execute(_ENTRANTS)
    ]


def same_entrants(stored: list[LadderEntrantRow], history: list[LadderEntrantRow]) -> bool:
    """Whether the entrants agree: their runner times to rounding (summed in another order),
    everything else exactly."""

    def rest(row: LadderEntrantRow) -> LadderEntrantRow:
        return replace(row, owner_used_ms=0.0, game_ms=None)

    if [rest(r) for r in stored] != [rest(r) for r in history]:
        return False
    for a, b in zip(stored, history, strict=True):
        if not math.isclose(a.owner_used_ms, b.owner_used_ms, rel_tol=1e-9, abs_tol=1e-9):
            return False
        if a.game_ms is None or b.game_ms is None:
            if a.game_ms != b.game_ms:
                return False
        elif not math.isclose(a.game_ms, b.game_ms):
            return False
    return True


def history_tournament_games(db: sqlite3.Connection, tournament: int) -> tuple[int, int]:
    """A tournament's games played and scheduled, as ``get_tournament`` counted them before v9."""
    played, scheduled = db.execute(
        "SELECT (SELECT COUNT(*) FROM games g JOIN matches m ON m.id = g.match_id"
        " WHERE m.tournament_id = ?), (SELECT COALESCE(SUM(games), 0) FROM matches"
        " WHERE tournament_id = ?)",
        (tournament, tournament),
    ).fetchone()
    return int(played), int(scheduled)


_GAME_SELECT = """
SELECT g.id, m.tournament_id, t.name AS tournament, g.match_id, m.round, g.game_index,
       b0.name AS bot0, b1.name AS bot1, v0.version AS version0, v1.version AS version1,
       g.winner_seat, g.reason, g.status0, g.status1, g.actions, g.time0_ms, g.time1_ms,
       g.finished_at
FROM games g JOIN matches m ON m.id = g.match_id JOIN tournaments t ON t.id = m.tournament_id
JOIN bot_versions v0 ON v0.id = g.seat0_id JOIN bots b0 ON b0.id = v0.bot_id
JOIN bot_versions v1 ON v1.id = g.seat1_id JOIN bots b1 ON b1.id = v1.bot_id
"""


def history_games(
    db: sqlite3.Connection, tournament: int, bot: str | None = None, limit: int = 1000
) -> list[tuple[object, ...]]:
    """``list_games(tournament_id=..., bot=...)``'s rows as it read them before v9 (every
    game of the tournament, sorted)."""
    where = "WHERE m.tournament_id = ?" + (" AND (b0.name = ? OR b1.name = ?)" if bot else "")
    params = (tournament, bot, bot) if bot else (tournament,)
    return [
        tuple(r)
        for r in db.execute(f"{_GAME_SELECT} {where} ORDER BY g.id DESC LIMIT ?", (*params, limit))
    ]
