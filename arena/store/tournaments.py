"""Tournaments, their entrants, rounds and matches; standings from stored games.

Status: ``created``, ``running`` and ``finished`` are stored (``set_status``);
a tournament stored as ``running`` whose runner lease nobody holds
(``arena.store.lease``: its runner died, or stopped on a failed match) is
read as ``interrupted``, never stored as such.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
from collections.abc import Sequence

from arena.referee.seeds import SECRET_BYTES, new_secret
from arena.store.db import AlreadyExistsError, NotFoundError, Store, StoreError, utc_now
from arena.store.lease import lease_held
from arena.store.models import MatchRow, TournamentConfig, TournamentRow
from arena.tournament.schedule import Pairing, round_robin
from arena.tournament.standings import GameOutcome, Standing, compute_standings, crosstable

FORMATS = ("round_robin", "swiss")
STORED_STATUSES = ("created", "running", "finished")
INTERRUPTED = "interrupted"
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,59}")


def validate_config(config: TournamentConfig) -> None:
    """Refuse a configuration that cannot be played, naming the field."""
    checks = [
        ("games_per_match", config.games_per_match, 1, 100),
        ("seed", config.seed, 0, 2**31 - 1),
        ("action_ms", config.action_ms, 1, 3_600_000),
        ("bank_ms", config.bank_ms, 0, 36_000_000),
    ]
    if config.rounds is not None:
        checks.append(("rounds", config.rounds, 1, 1000))
    for field, value, low, high in checks:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise StoreError(f"{field} must be a whole number from {low} to {high}, got {value!r}")


def max_swiss_rounds(bots: int) -> int:
    """The most Swiss rounds ``bots`` bots can play, each pair meeting at most once."""
    return max(1, bots - 1 if bots % 2 == 0 else bots)


def match_seed(tournament_seed: int, round_no: int, first_id: int, second_id: int) -> int:
    """The deal seed of a match: fixed by who meets whom, so a resume replays it exactly."""
    low, high = sorted((first_id, second_id))
    return (tournament_seed * 1_000_003 + round_no * 10_007 + low * 101 + high) % 2**31


def create_tournament(
    store: Store, name: str, format: str, bots: Sequence[str], config: TournamentConfig
) -> TournamentRow:
    """A new tournament of the latest version of each of ``bots`` (seed order as given).

    A round robin is scheduled whole at once; Swiss rounds are paired as play goes.
    """
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise StoreError(f"tournament name {name!r}: use 1-60 letters, digits, - _ .")
    if format not in FORMATS:
        raise StoreError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    if len(set(bots)) != len(bots) or len(bots) < 2:
        raise StoreError("a tournament needs at least two distinct bots")
    validate_config(config)
    if config.rounds is not None:
        if format != "swiss":
            raise StoreError(f"rounds is for Swiss tournaments only (a {format} plays them all)")
        if config.rounds > max_swiss_rounds(len(bots)):
            raise StoreError(
                f"rounds: a Swiss tournament of {len(bots)} bots has at most"
                f" {max_swiss_rounds(len(bots))} round(s) without a rematch, got {config.rounds}"
            )
    with store.transaction() as db:
        if db.execute("SELECT 1 FROM tournaments WHERE name = ?", (name,)).fetchone():
            raise AlreadyExistsError(f"a tournament named {name!r} already exists")
        version_ids = [_latest_version_id(db, bot) for bot in bots]
        tournament_id = db.execute(
            "INSERT INTO tournaments (name, format, status, config, created_at, secret)"
            " VALUES (?, ?, 'created', ?, ?, ?)",
            (name, format, json.dumps(dataclasses.asdict(config)), utc_now(), new_secret()),
        ).lastrowid
        assert tournament_id is not None
        for rank, version_id in enumerate(version_ids):
            db.execute(
                "INSERT INTO entrants (tournament_id, bot_version_id, seed_rank) VALUES (?, ?, ?)",
                (tournament_id, version_id, rank),
            )
        if format == "round_robin":
            by_name = dict(zip(bots, version_ids, strict=True))
            for rnd in round_robin(list(bots)):
                _insert_round(db, tournament_id, config, rnd.number, rnd.pairings, by_name)
                if rnd.bye is not None:
                    _insert_bye(db, tournament_id, rnd.number, by_name[rnd.bye])
    return get_tournament(store, tournament_id)


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


def _latest_version_id(db: sqlite3.Connection, bot: str) -> int:
    row = db.execute(
        "SELECT MAX(v.id) FROM bot_versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = ?",
        (bot,),
    ).fetchone()
    if row[0] is None:
        raise NotFoundError(f"no bot {bot!r} in the store (add it with `arena bot add`)")
    return int(row[0])


def _insert_round(
    db: sqlite3.Connection,
    tournament_id: int,
    config: TournamentConfig,
    round_no: int,
    pairings: Sequence[Pairing],
    version_ids: dict[str, int],
) -> None:
    for pairing in pairings:
        first, second = version_ids[pairing.first], version_ids[pairing.second]
        db.execute(
            "INSERT INTO matches (tournament_id, round, first_id, second_id, games, seed)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (tournament_id, round_no, first, second, config.games_per_match,
             match_seed(config.seed, round_no, first, second)),
        )  # fmt: skip


def _insert_bye(db: sqlite3.Connection, tournament_id: int, round_no: int, version_id: int) -> None:
    db.execute(
        "INSERT INTO byes (tournament_id, round, bot_version_id) VALUES (?, ?, ?)",
        (tournament_id, round_no, version_id),
    )


def add_round(
    store: Store, tournament_id: int, round_no: int, pairings: Sequence[Pairing], bye: str | None
) -> None:
    """Store one paired Swiss round, whole or not at all (StoreError if it exists)."""
    tournament = get_tournament(store, tournament_id)
    with store.transaction() as db:
        if db.execute(
            "SELECT 1 FROM matches WHERE tournament_id = ? AND round = ?", (tournament_id, round_no)
        ).fetchone():
            raise StoreError(
                f"round {round_no} of tournament {tournament.name!r} is already paired"
            )
        version_ids = _entrant_ids(db, tournament_id)
        _insert_round(db, tournament_id, tournament.config, round_no, pairings, version_ids)
        if bye is not None:
            _insert_bye(db, tournament_id, round_no, version_ids[bye])


def _entrant_ids(db: sqlite3.Connection, tournament_id: int) -> dict[str, int]:
    rows = db.execute(
        "SELECT b.name, e.bot_version_id FROM entrants e JOIN bot_versions v"
        " ON v.id = e.bot_version_id JOIN bots b ON b.id = v.bot_id"
        " WHERE e.tournament_id = ? ORDER BY e.seed_rank",
        (tournament_id,),
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def set_status(store: Store, tournament_id: int, status: str) -> None:
    """Store a tournament's status: one of STORED_STATUSES (``interrupted`` is derived)."""
    if status not in STORED_STATUSES:
        raise StoreError(f"status must be one of {', '.join(STORED_STATUSES)}, got {status!r}")
    finished_at = utc_now() if status == "finished" else None
    with store.transaction() as db:
        db.execute(
            "UPDATE tournaments SET status = ?, finished_at = ? WHERE id = ?",
            (status, finished_at, tournament_id),
        )


def get_tournament(store: Store, ref: int | str) -> TournamentRow:
    """A tournament by id or by name (NotFoundError); its status as shown to people."""
    column = "id" if isinstance(ref, int) else "name"
    with store.reading() as db:
        row = db.execute(f"SELECT * FROM tournaments WHERE {column} = ?", (ref,)).fetchone()
        if row is None:
            raise NotFoundError(f"no tournament {ref!r}")
        return _tournament_row(store, db, row)


def list_tournaments(store: Store) -> list[TournamentRow]:
    """Every tournament, newest first."""
    with store.reading() as db:
        rows = db.execute("SELECT * FROM tournaments ORDER BY id DESC").fetchall()
        return [_tournament_row(store, db, row) for row in rows]


def shown_status(store: Store, tournament_id: int, stored: str) -> str:
    """``stored``, except ``running`` without a live runner: ``interrupted``."""
    if stored == "running" and not lease_held(store, tournament_id):
        return INTERRUPTED
    return stored


def _tournament_row(store: Store, db: sqlite3.Connection, row: sqlite3.Row) -> TournamentRow:
    played, scheduled = db.execute(
        "SELECT (SELECT COUNT(*) FROM games g JOIN matches m ON m.id = g.match_id"
        " WHERE m.tournament_id = ?), (SELECT COALESCE(SUM(games), 0) FROM matches"
        " WHERE tournament_id = ?)",
        (row["id"], row["id"]),
    ).fetchone()
    return TournamentRow(
        id=row["id"], name=row["name"], format=row["format"],
        status=shown_status(store, row["id"], row["status"]),
        config=TournamentConfig(**json.loads(row["config"])), created_at=row["created_at"],
        finished_at=row["finished_at"], entrants=tuple(_entrant_ids(db, row["id"])),
        games_played=played, games_scheduled=scheduled,
    )  # fmt: skip


def list_matches(store: Store, tournament_id: int) -> list[MatchRow]:
    """Every match of a tournament, by round, with the indices of its stored games."""
    with store.reading() as db:
        rows = db.execute(
            "SELECT m.*, bf.name AS first, bs.name AS second, vf.version AS first_version,"
            " vs.version AS second_version, (SELECT GROUP_CONCAT(game_index) FROM games"
            " WHERE match_id = m.id) AS played FROM matches m"
            " JOIN bot_versions vf ON vf.id = m.first_id JOIN bots bf ON bf.id = vf.bot_id"
            " JOIN bot_versions vs ON vs.id = m.second_id JOIN bots bs ON bs.id = vs.bot_id"
            " WHERE m.tournament_id = ? ORDER BY m.round, m.id",
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


def _outcomes(store: Store, tournament_id: int) -> list[GameOutcome]:
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
        GameOutcome(r[0], (r[1], r[2]), None if r[3] is None else (r[1], r[2])[r[3]]) for r in rows
    ]


def tournament_standings(store: Store, tournament_id: int) -> tuple[Standing, ...]:
    """Standings from the games stored so far.

    A Swiss bye scores a match won (``games_per_match`` points) once its round is
    paired; in a round robin every bot sits out equally often, so byes score nothing.
    """
    tournament = get_tournament(store, tournament_id)
    bye_points = tournament.config.games_per_match if tournament.format == "swiss" else 0
    byes: dict[str, int] = {}
    for bot in tournament_byes(store, tournament_id).values():
        byes[bot] = byes.get(bot, 0) + 1
    return compute_standings(
        tournament.entrants, _outcomes(store, tournament_id),
        byes=byes, bye_points=float(bye_points),
    )  # fmt: skip


def tournament_crosstable(store: Store, tournament_id: int) -> dict[tuple[str, str], float]:
    """``{(bot, opponent): points scored}`` over the games stored so far."""
    return crosstable(_outcomes(store, tournament_id))
