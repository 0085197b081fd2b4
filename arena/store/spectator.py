"""What the public may see of games as of a moment: the reads behind the spectator delay.

A game is public from its start, action by action, to its end, each once the
delay has passed (``arena serve --spectator-delay-s``): the pages ask as of
``cut`` (a ``utc_now()`` stamp, now minus the delay). ``first_event_after``
says when the first start or end after ``cut`` happened (a page computed
before it shows nothing newer than ``cut``); ``in_play_at`` the games that
were being played at ``cut``; ``stored_timing`` a stored game's start, end
and action times (epoch ms), kept from its live view (schema: games.started_at,
games.action_ms).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from arena.store.db import Store
from arena.store.live import in_play


@dataclass(frozen=True, slots=True)
class InPlay:
    """A game in play as of a moment (live then; it may be stored by now)."""

    match_id: int
    game_index: int
    tournament_id: int
    started_at: str


@dataclass(frozen=True, slots=True)
class StoredTiming:
    game_id: int
    started_at: str | None  # None: stored without a live view
    finished_at: str
    action_ms: tuple[int, ...] | None  # when each action was applied, epoch ms


def first_event_after(store: Store, cut: str) -> str | None:
    """The first game start or end after ``cut`` (a stamp), None when nothing happened since."""
    with store.reading() as db:
        live = db.execute("SELECT MIN(started_at) FROM live_games WHERE started_at > ?", (cut,))
        first_live = live.fetchone()[0]
        stored = db.execute(
            "SELECT MIN(CASE WHEN started_at > ? THEN started_at ELSE finished_at END)"
            " FROM games WHERE finished_at > ?",
            (cut, cut),
        ).fetchone()[0]
    found = [stamp for stamp in (first_live, stored) if stamp is not None]
    return min(found) if found else None


def in_play_at(store: Store, cut: str, *, tournament_id: int | None = None) -> list[InPlay]:
    """The games being played at ``cut``: live ones begun by then (but those of a tournament
    that reads interrupted: ``arena.store.live.in_play``), and stored ones begun by then and
    ended after it; by start."""
    where = "" if tournament_id is None else " AND m.tournament_id = ?"
    extra: tuple[object, ...] = () if tournament_id is None else (tournament_id,)
    with store.reading() as db:
        rows = db.execute(
            "SELECT l.match_id, l.game_index, m.tournament_id, l.started_at,"
            " t.status AS tournament_status FROM live_games l"
            " JOIN matches m ON m.id = l.match_id JOIN tournaments t ON t.id = m.tournament_id"
            f" WHERE l.started_at <= ?{where}"
            " UNION ALL"
            " SELECT g.match_id, g.game_index, m.tournament_id, g.started_at, NULL FROM games g"
            " JOIN matches m ON m.id = g.match_id"
            f" WHERE g.finished_at > ? AND g.started_at <= ?{where}"
            " ORDER BY 4, 1, 2",
            (cut, *extra, cut, cut, *extra),
        ).fetchall()
    live = {(r[0], r[1]) for r in in_play(store, [r for r in rows if r[4] is not None])}
    return [InPlay(r[0], r[1], r[2], r[3]) for r in rows if r[4] is None or (r[0], r[1]) in live]


def stored_timing(store: Store, match_id: int, game_index: int) -> StoredTiming | None:
    """Game ``game_index`` of ``match_id`` if stored: its id, start, end and action times."""
    with store.reading() as db:
        row = db.execute(
            "SELECT id, started_at, finished_at, action_ms FROM games"
            " WHERE match_id = ? AND game_index = ?",
            (match_id, game_index),
        ).fetchone()
    if row is None:
        return None
    times = None if row[3] is None else tuple(int(t) for t in json.loads(row[3]))
    return StoredTiming(row[0], row[1], row[2], times)


def game_finished_at(store: Store, game_id: int) -> str | None:
    """When game ``game_id`` ended; None when there is no such game."""
    with store.reading() as db:
        row = db.execute("SELECT finished_at FROM games WHERE id = ?", (game_id,)).fetchone()
    return None if row is None else str(row[0])


def tournament_last_finish(store: Store, tournament_id: int) -> str | None:
    """When the last stored game of tournament ``tournament_id`` ended; None before any."""
    with store.reading() as db:
        row = db.execute(
            "SELECT MAX(g.finished_at) FROM games g JOIN matches m ON m.id = g.match_id"
            " WHERE m.tournament_id = ?",
            (tournament_id,),
        ).fetchone()
    return None if row is None or row[0] is None else str(row[0])
