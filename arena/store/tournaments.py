"""Tournaments, their entrants, rounds and matches, as they are given to the store.

The store decides nothing here: which tournaments may be created, their
schedule and seeds, and standings are ``arena.tournament``'s. Status:
``created``, ``running`` and ``finished`` are stored (``set_status``); a
tournament stored as ``running`` whose runner lease nobody holds
(``arena.store.lease``: its runner died, or stopped on a failed match) is read
as ``interrupted``, never stored as such.
"""

from __future__ import annotations

import difflib
import json
import re
import sqlite3
from collections.abc import Mapping, Sequence

from arena.quoting import quoted
from arena.referee.seeds import SECRET_BYTES, new_secret, seed_commitment
from arena.store.db import AlreadyExistsError, NotFoundError, Store, StoreError, utc_now
from arena.store.lease import lease_held, lease_note
from arena.store.models import (
    MatchRow,
    PlannedRound,
    TournamentConfig,
    TournamentFormat,
    TournamentRow,
    TournamentStatus,
)
from arena.store.totals import count_match

INTERRUPTED = TournamentStatus.INTERRUPTED
STORED_STATUSES = tuple(s for s in TournamentStatus if s is not INTERRUPTED)
UNRECORDED_INTERRUPTION = (
    "its runner stopped without recording why (killed, or the store could not be written)"
)
MAX_REASON_CHARS = 500
_HOST_PATH = re.compile(r"(?<![\w.<])/[^\s:;,'\"()]+")


def latest_version_ids(store: Store, bots: Sequence[str]) -> dict[str, int]:
    """Bot name -> the id of its latest stored version (NotFoundError naming the first unknown)."""
    with store.reading() as db:
        return {bot: _latest_version_id(db, bot) for bot in bots}


def insert_tournament(
    store: Store,
    name: str,
    format: TournamentFormat,
    entrants: Mapping[str, int],
    config: TournamentConfig,
    rounds: Sequence[PlannedRound] = (),
    *,
    secret: bytes | None = None,
) -> TournamentRow:
    """Store a new tournament: ``entrants`` (name -> version id, in seed order), its rounds,
    and its deal ``secret`` (None: a fresh random one) with the commitment to it.

    AlreadyExistsError when the name is taken; nothing is stored then.
    """
    with store.transaction() as db:
        tournament_id = insert_tournament_in(db, name, format, entrants, config, rounds, secret)
    return get_tournament(store, tournament_id)


def insert_tournament_in(
    db: sqlite3.Connection,
    name: str,
    format: TournamentFormat,
    entrants: Mapping[str, int],
    config: TournamentConfig,
    rounds: Sequence[PlannedRound],
    secret: bytes | None,
) -> int:
    """``insert_tournament`` in the caller's open transaction; the new tournament's id."""
    if db.execute("SELECT 1 FROM tournaments WHERE name = ?", (name,)).fetchone():
        raise AlreadyExistsError(f"a tournament named {name!r} already exists")
    secret = new_secret() if secret is None else secret
    tournament_id = db.execute(
        "INSERT INTO tournaments (name, format, status, config, created_at, secret)"
        " VALUES (?, ?, 'created', ?, ?, ?)",
        (name, str(format), json.dumps(config.to_json()), utc_now(), secret),
    ).lastrowid
    assert tournament_id is not None
    for rank, version_id in enumerate(entrants.values()):
        db.execute(
            "INSERT INTO entrants (tournament_id, bot_version_id, seed_rank) VALUES (?, ?, ?)",
            (tournament_id, version_id, rank),
        )
    commitment = seed_commitment(secret, committed_parameters(db, tournament_id))
    db.execute("UPDATE tournaments SET commitment = ? WHERE id = ?", (commitment, tournament_id))
    for planned in rounds:
        _insert_round(db, tournament_id, planned, entrants)
    return tournament_id


def tournament_secret(store: Store, tournament_id: int) -> bytes:
    """The secret that keys the deals of a tournament (for its referee only, never a bot)."""
    with store.reading() as db:
        row = db.execute("SELECT secret FROM tournaments WHERE id = ?", (tournament_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no tournament with id {tournament_id}")
    secret = row[0]
    if not isinstance(secret, bytes) or len(secret) != SECRET_BYTES:
        raise StoreError(f"tournament {tournament_id} has no valid deal secret")
    return secret


def committed_parameters(db: sqlite3.Connection, tournament_id: int) -> bytes:
    """The parameters a tournament's commitment binds, as stored: canonical JSON of its
    name, format, config and entrants (name and version, seed order)."""
    row = db.execute(
        "SELECT name, format, config FROM tournaments WHERE id = ?", (tournament_id,)
    ).fetchone()
    if row is None:
        raise NotFoundError(f"no tournament with id {tournament_id}")
    entrants = db.execute(
        "SELECT b.name, v.version FROM entrants e JOIN bot_versions v ON v.id = e.bot_version_id"
        " JOIN bots b ON b.id = v.bot_id WHERE e.tournament_id = ? ORDER BY e.seed_rank",
        (tournament_id,),
    ).fetchall()
    parameters = {
        "name": row[0], "format": row[1], "config": json.loads(row[2]),
        "entrants": [[e[0], e[1]] for e in entrants],
    }  # fmt: skip
    return json.dumps(parameters, sort_keys=True, separators=(",", ":")).encode()


def tournament_parameters(store: Store, tournament_id: int) -> bytes:
    """``committed_parameters`` of a stored tournament."""
    with store.reading() as db:
        return committed_parameters(db, tournament_id)


def revealed_secret(store: Store, tournament_id: int) -> bytes | None:
    """The deal secret of a *finished* tournament (None before: it must stay unknown)."""
    with store.reading() as db:
        row = db.execute("SELECT status FROM tournaments WHERE id = ?", (tournament_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no tournament with id {tournament_id}")
    if row[0] != str(TournamentStatus.FINISHED):
        return None
    return tournament_secret(store, tournament_id)


def _latest_version_id(db: sqlite3.Connection, bot: str) -> int:
    row = db.execute(
        "SELECT MAX(v.id) FROM bot_versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = ?",
        (bot,),
    ).fetchone()
    if row[0] is None:
        names = [name for (name,) in db.execute("SELECT name FROM bots")]
        close = difflib.get_close_matches(bot, names, n=1)
        hint = f"did you mean {close[0]}? or " if close else ""
        raise NotFoundError(
            f"no bot {quoted(bot)} in the store ({hint}add it with `arena bot add`)"
        )
    return int(row[0])


def _insert_round(
    db: sqlite3.Connection,
    tournament_id: int,
    planned: PlannedRound,
    version_ids: Mapping[str, int],
) -> None:
    for match in planned.matches:
        versions = (version_ids[match.first], version_ids[match.second])
        db.execute(
            "INSERT INTO matches (tournament_id, round, first_id, second_id, games, seed)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (tournament_id, planned.number, *versions, match.games, match.seed),
        )
        count_match(db, tournament_id, planned.number, versions, match.games, ladder=False)
    if planned.bye is not None:
        db.execute(
            "INSERT INTO byes (tournament_id, round, bot_version_id) VALUES (?, ?, ?)",
            (tournament_id, planned.number, version_ids[planned.bye]),
        )


def add_round(store: Store, tournament_id: int, planned: PlannedRound) -> None:
    """Store one paired round, whole or not at all (StoreError if it exists)."""
    add_rounds(store, tournament_id, (planned,))


def add_rounds(store: Store, tournament_id: int, planned: Sequence[PlannedRound]) -> None:
    """Store paired rounds (an SPRT test's batch of pairs), all or none (StoreError
    naming the first that exists)."""
    tournament = get_tournament(store, tournament_id)
    with store.transaction() as db:
        for one in planned:
            if db.execute(
                "SELECT 1 FROM matches WHERE tournament_id = ? AND round = ?",
                (tournament_id, one.number),
            ).fetchone():
                raise StoreError(
                    f"round {one.number} of tournament {tournament.name!r} is already paired"
                )
            _insert_round(db, tournament_id, one, _entrant_ids(db, tournament_id))


def entrant_version_ids(store: Store, tournament_id: int) -> dict[str, int]:
    """Entrant name -> its version id, in seed order."""
    with store.reading() as db:
        return _entrant_ids(db, tournament_id)


def _entrant_ids(db: sqlite3.Connection, tournament_id: int) -> dict[str, int]:
    rows = db.execute(
        "SELECT b.name, e.bot_version_id FROM entrants e JOIN bot_versions v"
        " ON v.id = e.bot_version_id JOIN bots b ON b.id = v.bot_id"
        " WHERE e.tournament_id = ? ORDER BY e.seed_rank",
        (tournament_id,),
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def set_status(store: Store, tournament_id: int, status: TournamentStatus) -> None:
    """Store a tournament's status (``interrupted`` is derived, never stored)."""
    if status not in STORED_STATUSES:
        names = ", ".join(STORED_STATUSES)
        raise StoreError(f"status must be one of {names}, got {str(status)!r}")
    status = TournamentStatus(status)
    finished_at = utc_now() if status is TournamentStatus.FINISHED else None
    with store.transaction() as db:  # a run that starts or ends clears the last one's reason
        db.execute(
            "UPDATE tournaments SET status = ?, finished_at = ?, interrupted_reason = NULL"
            " WHERE id = ?",
            (str(status), finished_at, tournament_id),
        )


def reason_line(reason: str) -> str:
    """``reason`` as stored and shown: one line, bounded, host paths as ``<path>``."""
    line = _HOST_PATH.sub("<path>", " ".join(reason.split()))[:MAX_REASON_CHARS]
    return line or "no reason given"


def record_interruption(store: Store, tournament_id: int, reason: str) -> None:
    """Store why a run of ``tournament_id`` stops before its end (one line, bounded).

    Shown with the derived ``interrupted`` status until the next run starts. A
    runner killed outright records nothing; it reads ``UNRECORDED_INTERRUPTION``.
    Everyone who may see the tournament sees the reason, so host paths in it
    become ``<path>``. Raises the store's errors (StorageFullError on a full
    disk) like any write.
    """
    line = reason_line(reason)
    with store.transaction() as db:
        db.execute(
            "UPDATE tournaments SET interrupted_reason = ? WHERE id = ?", (line, tournament_id)
        )


def get_tournament(store: Store, ref: int | str) -> TournamentRow:
    """A tournament by id or by name (NotFoundError); its status as shown to people."""
    column = "id" if isinstance(ref, int) else "name"
    with store.reading() as db:
        row = db.execute(f"SELECT * FROM tournaments WHERE {column} = ?", (ref,)).fetchone()
        if row is None:
            raise NotFoundError(f"no tournament {quoted(ref)}")
        return _tournament_row(store, db, row)


def list_tournaments(store: Store, *, with_play: bool = False) -> list[TournamentRow]:
    """Every tournament, newest first; the one-game tournaments of people's games at /play
    (``play_games``) only ``with_play``: they are stored, audited and shown by id, but a
    list of them would bury the tournaments (each person's game is one)."""
    where = "" if with_play else " WHERE id NOT IN (SELECT tournament_id FROM play_games)"
    with store.reading() as db:
        rows = db.execute(f"SELECT * FROM tournaments{where} ORDER BY id DESC").fetchall()
        return [_tournament_row(store, db, row) for row in rows]


def shown_status(store: Store, tournament_id: int, stored: str) -> TournamentStatus:
    """``stored``, except ``running`` without a live runner: ``interrupted``."""
    status = TournamentStatus(stored)
    if status is TournamentStatus.RUNNING and not lease_held(store, tournament_id):
        return TournamentStatus.INTERRUPTED
    return status


def _tournament_row(store: Store, db: sqlite3.Connection, row: sqlite3.Row) -> TournamentRow:
    status = shown_status(store, row["id"], row["status"])
    reason = None
    if status is INTERRUPTED:
        reason = row["interrupted_reason"] or lease_note(store, row["id"])
        reason = reason or UNRECORDED_INTERRUPTION
    return TournamentRow(
        id=row["id"], name=row["name"], format=TournamentFormat(row["format"]),
        status=status, interrupted_reason=reason,
        config=TournamentConfig.from_json(json.loads(row["config"])), created_at=row["created_at"],
        finished_at=row["finished_at"], entrants=tuple(_entrant_ids(db, row["id"])),
        games_played=row["games_played"], games_scheduled=row["games_scheduled"],
        commitment=row["commitment"],
    )  # fmt: skip


def list_matches(store: Store, tournament_id: int) -> list[MatchRow]:
    """Every match of a tournament, by round, with the indices of its stored games."""
    with store.reading() as db:
        return match_rows(db, tournament_id, order="m.round, m.id")


def match_rows(
    db: sqlite3.Connection, tournament_id: int, *, order: str, unfinished_only: bool = False
) -> list[MatchRow]:
    """A tournament's matches (only those not finished if ``unfinished_only``) with their
    bots' names and versions and the indices of their stored games, ordered by ``order``
    (a fixed SQL ORDER BY list written by the caller, never user input)."""
    rows = db.execute(
        "SELECT m.*, bf.name AS first, bs.name AS second, vf.version AS first_version,"
        " vs.version AS second_version, (SELECT GROUP_CONCAT(game_index) FROM games"
        " WHERE match_id = m.id) AS played FROM matches m"
        " JOIN bot_versions vf ON vf.id = m.first_id JOIN bots bf ON bf.id = vf.bot_id"
        " JOIN bot_versions vs ON vs.id = m.second_id JOIN bots bs ON bs.id = vs.bot_id"
        " WHERE m.tournament_id = ?"
        + (" AND m.finished_at IS NULL" if unfinished_only else "")
        + f" ORDER BY {order}",
        (tournament_id,),
    ).fetchall()
    return [
        MatchRow(
            id=r["id"],
            tournament_id=tournament_id,
            round=r["round"],
            first=r["first"],
            second=r["second"],
            first_version=r["first_version"],
            second_version=r["second_version"],
            games=r["games"],
            seed=r["seed"],
            finished_at=r["finished_at"],
            games_played=tuple(sorted(int(i) for i in (r["played"] or "").split(",") if i)),
        )
        for r in rows
    ]


def tournament_byes(store: Store, tournament_id: int) -> dict[int, str]:
    """Round number -> the bot that had the bye in it."""
    with store.reading() as db:
        rows = db.execute(
            "SELECT y.round, b.name FROM byes y JOIN bot_versions v ON v.id = y.bot_version_id"
            " JOIN bots b ON b.id = v.bot_id WHERE y.tournament_id = ?",
            (tournament_id,),
        ).fetchall()
    return {r[0]: r[1] for r in rows}
