"""Live games: what the runner publishes while a game is played, for the admin's live view.

The tournament runner calls ``start_live_game`` when a game of a stored match
begins (again, when a resumed match plays it anew: the earlier entries are
dropped), then ``add_live_actions`` as actions are applied. Entries are JSON
objects (an action in docs/reference/RECORD.md JSON with ``"seat"``, or any other event the
runner chooses to publish); the head is the record so far without actions
(format, variant, handicap, deal, bots). ``record_game`` deletes the live game
in the transaction that stores the finished game. A runner that stops (Ctrl-C,
SIGTERM, a full disk, ``kill -9``) leaves its games' live views until its next
run drops them; no game is in play there, so the reads here leave out the live
views of a tournament that reads ``interrupted`` (``in_play``). Full information:
only the admin may see them. Written several times a second and worth nothing
after a crash, they are committed without waiting for the disk
(``Store.transaction(durable=False)``); finished games always are durable.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence

from arena.store.db import NotFoundError, Store, StoreError, utc_now
from arena.store.models import LiveEntry, LiveGameRow, TournamentStatus
from arena.store.tournaments import shown_status

_COMPACT = (",", ":")


def start_live_game(
    store: Store, match_id: int, game_index: int, head: Mapping[str, object]
) -> int:
    """Begin (or begin again) the live game ``game_index`` of ``match_id``; its live id."""
    head_json = json.dumps(dict(head), separators=_COMPACT)
    with store.transaction(durable=False) as db:  # the live view may be lost
        match = db.execute("SELECT games FROM matches WHERE id = ?", (match_id,)).fetchone()
        if match is None:
            raise NotFoundError(f"no match {match_id}")
        if not 0 <= game_index < match["games"]:
            raise StoreError(f"match {match_id} has no game {game_index}")
        db.execute(
            "DELETE FROM live_games WHERE match_id = ? AND game_index = ?", (match_id, game_index)
        )
        live_id = db.execute(
            "INSERT INTO live_games (match_id, game_index, head, started_at) VALUES (?, ?, ?, ?)",
            (match_id, game_index, head_json, utc_now()),
        ).lastrowid
    assert live_id is not None
    return live_id


def add_live_actions(
    store: Store, match_id: int, game_index: int, entries: Sequence[Mapping[str, object]]
) -> int:
    """Append ``entries`` to the live game, in one transaction; the number of entries now."""
    encoded = [json.dumps(dict(entry), separators=_COMPACT) for entry in entries]
    with store.transaction(durable=False) as db:  # the live view may be lost
        live = db.execute(
            "SELECT id FROM live_games WHERE match_id = ? AND game_index = ?",
            (match_id, game_index),
        ).fetchone()
        if live is None:
            raise NotFoundError(f"game {game_index} of match {match_id} is not being played")
        count = _entry_count(db, live["id"])
        added = utc_now()
        db.executemany(
            "INSERT INTO live_actions (live_game_id, seq, entry, added_at) VALUES (?, ?, ?, ?)",
            [(live["id"], count + i, text, added) for i, text in enumerate(encoded)],
        )
    return count + len(encoded)


def end_live_game(store: Store, match_id: int, game_index: int) -> None:
    """Drop a live game that will not be stored (record_game drops stored ones itself)."""
    with store.transaction(durable=False) as db:  # the live view may be lost
        drop_live_game(db, match_id, game_index)


def drop_live_game(db: sqlite3.Connection, match_id: int, game_index: int) -> None:
    """Inside a transaction: delete the live game and its entries, if any."""
    db.execute(
        "DELETE FROM live_actions WHERE live_game_id IN"
        " (SELECT id FROM live_games WHERE match_id = ? AND game_index = ?)",
        (match_id, game_index),
    )
    db.execute(
        "DELETE FROM live_games WHERE match_id = ? AND game_index = ?", (match_id, game_index)
    )


def _entry_count(db: sqlite3.Connection, live_id: int) -> int:
    row = db.execute("SELECT COUNT(*) FROM live_actions WHERE live_game_id = ?", (live_id,))
    return int(row.fetchone()[0])


_LIVE_SELECT = (
    "SELECT l.id, l.match_id, l.game_index, m.tournament_id, l.head, l.started_at,"
    " (SELECT COUNT(*) FROM live_actions a WHERE a.live_game_id = l.id) AS actions,"
    " t.status AS tournament_status"
    " FROM live_games l JOIN matches m ON m.id = l.match_id"
    " JOIN tournaments t ON t.id = m.tournament_id"
)


def in_play(store: Store, rows: Sequence[sqlite3.Row]) -> list[sqlite3.Row]:
    """``rows`` (with ``tournament_id`` and ``tournament_status``) but those of a tournament
    that reads interrupted: its runner stopped, and its live views are no games in play
    (shown as such, a spectator would watch a game that never moves again)."""
    stopped: dict[int, bool] = {}
    for row in rows:
        tournament = row["tournament_id"]
        if tournament not in stopped:
            status = shown_status(store, tournament, row["tournament_status"])
            stopped[tournament] = status is TournamentStatus.INTERRUPTED
    return [row for row in rows if not stopped[row["tournament_id"]]]


def _live_row(row: sqlite3.Row) -> LiveGameRow:
    return LiveGameRow(
        id=row["id"], match_id=row["match_id"], game_index=row["game_index"],
        tournament_id=row["tournament_id"], head=json.loads(row["head"]),
        started_at=row["started_at"], actions=row["actions"],
    )  # fmt: skip


def match_game_count(store: Store, match_id: int) -> int | None:
    """How many games match ``match_id`` plays; None when there is no such match."""
    with store.reading() as db:
        row = db.execute("SELECT games FROM matches WHERE id = ?", (match_id,)).fetchone()
    return None if row is None else int(row["games"])


def get_live_game(store: Store, match_id: int, game_index: int) -> LiveGameRow:
    """The game in progress (NotFoundError when it is not being played)."""
    with store.reading() as db:
        row = db.execute(
            f"{_LIVE_SELECT} WHERE l.match_id = ? AND l.game_index = ?", (match_id, game_index)
        ).fetchone()
    if row is None or not in_play(store, [row]):
        raise NotFoundError(f"game {game_index} of match {match_id} is not being played")
    return _live_row(row)


def list_live_games(store: Store, *, tournament_id: int | None = None) -> list[LiveGameRow]:
    """Games in progress, oldest first."""
    where, params = ("WHERE m.tournament_id = ?", (tournament_id,)) if tournament_id else ("", ())
    with store.reading() as db:
        rows = db.execute(f"{_LIVE_SELECT} {where} ORDER BY l.id", params).fetchall()
    return [_live_row(r) for r in in_play(store, rows)]


def live_entries(store: Store, live_id: int, *, after_seq: int = -1) -> list[LiveEntry]:
    """Entries of live game ``live_id`` after ``after_seq``, in order ([] once it is gone)."""
    with store.reading() as db:
        rows = db.execute(
            "SELECT seq, entry, added_at FROM live_actions WHERE live_game_id = ? AND seq > ?"
            " ORDER BY seq",
            (live_id, after_seq),
        ).fetchall()
    return [LiveEntry(r["seq"], json.loads(r["entry"]), r["added_at"]) for r in rows]
