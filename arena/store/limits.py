"""Per-user limits the admin set, and what each user holds against them.

``user_limits`` keeps the admin's settings: scope ``''`` for every user, or one
user's name for that user alone (a user's own setting wins over everyone's,
which wins over the server's defaults: ``arena serve`` flags). What a user
holds is read from what is stored: their bots, remote bots, the bytes of their
versions' files (``bot_versions.bytes``; measured on disk for a version whose row
has none).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from arena.quoting import quoted
from arena.store.db import Store, StoreError, utc_now
from arena.store.tokens import check_user_name

EVERYONE = ""
"""The scope of a setting for every user."""


@dataclass(frozen=True, slots=True)
class StoredLimit:
    scope: str  # EVERYONE or a user
    name: str
    value: int
    set_at: str


@dataclass(frozen=True, slots=True)
class Usage:
    """What one user holds: bots (remote ones among them) and the bytes of their files."""

    bots: int
    remote_bots: int
    stored_bytes: int


def set_limit(store: Store, name: str, value: int, *, user: str | None = None) -> StoredLimit:
    """Store limit ``name`` = ``value`` for ``user`` (None: every user). The caller checks
    that ``name`` is a limit; the store that the value is a whole number, 0 or more."""
    if user is not None:
        check_user_name(user)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StoreError(f"limit {name}: must be a whole number, 0 or more, not {quoted(value)}")
    scope = EVERYONE if user is None else user
    now = utc_now()
    with store.transaction() as db:
        db.execute(
            "INSERT INTO user_limits (scope, name, value, set_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (scope, name) DO UPDATE SET value = excluded.value,"
            " set_at = excluded.set_at",
            (scope, name, value, now),
        )
    return StoredLimit(scope, name, value, now)


def clear_limit(store: Store, name: str, *, user: str | None = None) -> bool:
    """Forget the admin's setting of ``name`` (for ``user``); whether there was one."""
    scope = EVERYONE if user is None else user
    with store.transaction() as db:
        cursor = db.execute(
            "DELETE FROM user_limits WHERE scope = ? AND name = ?", (scope, name)
        )
    return cursor.rowcount > 0


def stored_limits(store: Store, user: str | None = None) -> list[StoredLimit]:
    """The admin's settings: everyone's and every user's (only everyone's and ``user``'s
    when given), by scope then name."""
    where, params = ("", ()) if user is None else ("WHERE scope IN (?, ?)", (EVERYONE, user))
    with store.reading() as db:
        rows = db.execute(
            f"SELECT scope, name, value, set_at FROM user_limits {where} ORDER BY scope, name",
            params,
        ).fetchall()
    return [StoredLimit(r["scope"], r["name"], r["value"], r["set_at"]) for r in rows]


def user_usage(store: Store, user: str) -> Usage:
    """What ``user`` holds now (their bots' every version counts against the bytes)."""
    with store.reading() as db:
        bots = db.execute(
            "SELECT COUNT(*) AS bots, COALESCE(SUM(EXISTS (SELECT 1 FROM bot_versions v"
            " WHERE v.bot_id = b.id AND v.runtime = 'remote')), 0) AS remote"
            " FROM bots b WHERE b.owner = ?",
            (user,),
        ).fetchone()
        versions = db.execute(
            "SELECT v.bytes, v.directory FROM bot_versions v JOIN bots b ON b.id = v.bot_id"
            " WHERE b.owner = ?",
            (user,),
        ).fetchall()
    stored = sum(
        r["bytes"] if r["bytes"] is not None else directory_bytes(store.data_dir / r["directory"])
        for r in versions
    )
    return Usage(int(bots["bots"]), int(bots["remote"]), stored)


def has_remote_version(store: Store, bot: str) -> bool:
    """Whether a version of bot ``bot`` is remote: it counts among its owner's remote bots."""
    with store.reading() as db:
        row = db.execute(
            "SELECT EXISTS (SELECT 1 FROM bot_versions v JOIN bots b ON b.id = v.bot_id"
            " WHERE b.name = ? AND v.runtime = 'remote')",
            (bot,),
        ).fetchone()
    return bool(row[0])


def version_count(store: Store, bot: str) -> int:
    """How many versions bot ``bot`` has (0: no such bot)."""
    with store.reading() as db:
        row = db.execute(
            "SELECT COUNT(*) FROM bot_versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = ?",
            (bot,),
        ).fetchone()
    return int(row[0])


def directory_bytes(directory: Path) -> int:
    """The bytes of the files under ``directory`` (0 when it is gone); links count as none."""
    total = 0
    for root, _, files in os.walk(directory):
        for name in files:
            try:
                stat = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            total += stat.st_size if not os.path.islink(os.path.join(root, name)) else 0
    return total
