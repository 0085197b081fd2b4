"""The store handle's transactions: durable by default, the live view's without a sync."""

from __future__ import annotations

import sqlite3

import pytest

from arena.store import Store

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
