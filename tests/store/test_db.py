"""The store handle's transactions: durable by default, the live view's without a sync; what a
first open made, taken away again (``FirstOpen``)."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from arena.store import FirstOpen, Store, StoreError, create_token
from arena.testing.crowd import WatchedLock
from arena.testing.waiting import wait_until

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


class _Ran:
    """The store's connection, noting which threads have run a statement on it."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.threads: set[int] = set()

    def execute(self, *args: Any) -> sqlite3.Cursor:
        try:
            return self.connection.execute(*args)
        finally:  # once it has run (or failed)
            self.threads.add(threading.get_ident())

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connection, name)


def test_two_writers_at_once_each_get_a_transaction_of_their_own(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two threads write through one store (one SQLite connection): the first's unit of
    work fails and is rolled back, the second's is stored whole, neither sees the
    other's. The race, forced: the first holds its transaction open, its row written,
    until the second waits for the store or runs a statement (a store that let it in
    would start a transaction inside the first's, and roll back or commit with it)."""
    with store.transaction() as db:
        db.execute("CREATE TABLE scratch (x TEXT)")
    watched, ran = WatchedLock(store._lock), _Ran(store._connection)
    monkeypatch.setattr(store, "_lock", watched)
    monkeypatch.setattr(store, "_connection", ran)
    errors: list[BaseException] = []

    def second() -> None:
        try:
            with store.transaction() as db:
                db.execute("INSERT INTO scratch VALUES ('second')")
        except BaseException as error:  # the test's thread reports it
            errors.append(error)

    writer = threading.Thread(target=second)
    failed = pytest.raises(RuntimeError, match="the first unit of work failed")
    with failed, store.transaction() as db:
        db.execute("INSERT INTO scratch VALUES ('first')")
        writer.start()
        wait_until(lambda: watched.waits(writer) or writer.ident in ran.threads,
                   "the second writer waiting for the store or writing", 10)  # fmt: skip
        raise RuntimeError("the first unit of work failed")
    writer.join(10)
    assert errors == []
    with store.reading() as db:
        assert [row[0] for row in db.execute("SELECT x FROM scratch")] == ["second"]


def test_a_data_directory_named_longer_than_the_file_system_takes_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$KAHUNA_ARENA_DATA`` bypasses the flag's check: the store says so, shortened."""
    monkeypatch.setenv("KAHUNA_ARENA_DATA", str(tmp_path / ("a" * 300)))
    with pytest.raises(StoreError, match=r"\.\.\. \(\d+ characters\): File name too long$"):
        Store.open()


def _first_open(data: Path) -> FirstOpen:
    first = FirstOpen.before(data)
    Store.open(data).close()
    return first


def test_what_a_first_open_made_goes_with_its_parents_while_it_holds_nothing(
    tmp_path: Path,
) -> None:
    first = _first_open(tmp_path / "a" / "b" / "data")
    assert first.undo()
    assert list(tmp_path.iterdir()) == []


def test_a_parent_someone_else_filled_meanwhile_stays(tmp_path: Path) -> None:
    first = _first_open(tmp_path / "a" / "data")
    (tmp_path / "a" / "theirs").write_text("x")
    assert first.undo()
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["theirs"]


@pytest.mark.parametrize("case", ["a row", "a database already there"])
def test_a_store_with_a_row_or_that_was_there_stays(tmp_path: Path, case: str) -> None:
    data = tmp_path / "data"
    if case == "a database already there":
        Store.open(data).close()
    first = FirstOpen.before(data)
    with Store.open(data) as store:
        if case == "a row":
            create_token(store, "bob", "user")
    assert not first.undo()
    assert (data / "arena.db").is_file() and (data / "bots").is_dir()


HOLDER = """
import sys
from arena.store import Store
with Store.open(sys.argv[1]):
    print("open", flush=True)
    sys.stdin.read()
"""


@pytest.mark.slow
def test_a_new_store_another_process_has_open_stays(tmp_path: Path) -> None:
    """A server started on the same new data directory meanwhile keeps its store, empty as
    it is: the refused command that made it leaves it."""
    data = tmp_path / "data"
    first = _first_open(data)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(data)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        assert not first.undo()
        assert (data / "arena.db").is_file()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0
    assert first.undo()  # once it has closed it
    assert not data.exists()
