"""The limits-and-tokens migration from v9: every token and version kept, none expired or
revoked, no limit set (the defaults hold)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from arena.store import Principal, Store, authenticate, list_tokens
from arena.store.schema import CURRENT_VERSION, MIGRATIONS, run_step


def make_v9(path: Path, token: str) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    for step in MIGRATIONS[:9]:
        run_step(db, step)
    db.execute(
        "INSERT INTO tokens (token_sha256, user, role, created_at) VALUES (?, 'alice', 'user',"
        " '2026-01-01T00:00:00.000+00:00')",
        (hashlib.sha256(token.encode()).hexdigest(),),
    )
    db.execute("PRAGMA user_version = 9")
    db.execute("COMMIT")
    db.close()


def test_a_v9_store_keeps_its_tokens_live_and_gains_the_limit_tables(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    make_v9(data / "arena.db", "alice-old-token")
    with Store.open(data) as store:
        assert authenticate(store, "alice-old-token") == Principal("alice", "user")
        [row] = list_tokens(store)
        assert (row.expires_at, row.revoked_at, row.state()) == (None, None, "active")
        with store.reading() as db:
            assert db.execute("SELECT COUNT(*) FROM user_limits").fetchone()[0] == 0
            assert db.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
