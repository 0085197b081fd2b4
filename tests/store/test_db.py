"""The store handle's transactions: durable by default, the live view's without a sync."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from arena.store import Store, create_token

FULL, NORMAL = 2, 1


def _synchronous(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA synchronous").fetchone()[0])


@pytest.mark.parametrize("durable", [True, False])
def test_a_transaction_commits_with_the_asked_sync_and_leaves_full_behind(
    store: Store, durable: bool
) -> None:
    with store.transaction(durable=durable) as db:
        assert _synchronous(db) == (FULL if durable else NORMAL)
        db.execute("CREATE TABLE IF NOT EXISTS scratch (x INTEGER)")
        db.execute("INSERT INTO scratch VALUES (1)")
    with store.reading() as db:
        assert _synchronous(db) == FULL
        assert db.execute("SELECT COUNT(*) FROM scratch").fetchone()[0] == 1


def test_a_failed_quick_transaction_rolls_back_and_leaves_full_behind(store: Store) -> None:
    with store.transaction() as db:
        db.execute("CREATE TABLE scratch (x INTEGER)")
    with pytest.raises(RuntimeError, match="boom"), store.transaction(durable=False) as db:
        db.execute("INSERT INTO scratch VALUES (1)")
        raise RuntimeError("boom")
    with store.reading() as db:
        assert _synchronous(db) == FULL
        assert db.execute("SELECT COUNT(*) FROM scratch").fetchone()[0] == 0


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_data_directory_and_database_are_private(tmp_path: Path) -> None:
    """They hold token hashes: 0700 and 0600, whatever the umask."""
    old = os.umask(0o022)
    try:
        with Store.open(tmp_path / "new" / "data") as store:
            create_token(store, "alice")  # writes: the -wal and -shm files exist
            data = tmp_path / "new" / "data"
            assert _mode(data) == 0o700
            for name in ("arena.db", "arena.db-wal", "arena.db-shm"):
                assert _mode(data / name) == 0o600, name
    finally:
        os.umask(old)


def test_an_existing_data_directory_is_made_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Store.open(data) as store:
        create_token(store, "alice")
    os.chmod(data, 0o755)
    for name in ("arena.db", "arena.db-wal", "arena.db-shm"):
        if (data / name).exists():
            os.chmod(data / name, 0o644)
    with Store.open(data) as store:
        create_token(store, "bob")
        assert _mode(data) == 0o700
        for name in ("arena.db", "arena.db-wal", "arena.db-shm"):
            assert _mode(data / name) == 0o600, name
