"""Opening a data directory: creation, WAL, migrations, refusals."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.store import CURRENT_VERSION, Store, StoreError, db, get_bot, list_bots, resolve_data_dir
from arena.store.schema import V1, SchemaError


def test_first_use_creates_the_directory_database_and_bots_dir(tmp_path: Path) -> None:
    data = tmp_path / "deep" / "data"
    with Store.open(data):
        pass
    assert (data / "arena.db").is_file() and (data / "bots").is_dir()
    db = sqlite3.connect(data / "arena.db")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION


def test_a_real_v1_database_is_migrated_with_its_data_kept(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = sqlite3.connect(data / "arena.db")
    db.executescript(V1)
    db.execute("INSERT INTO bots (id, name, created_at) VALUES (1, 'old', '2026-01-01')")
    db.execute(
        "INSERT INTO bot_versions (bot_id, version, directory, command, runtime, created_at,"
        " mu, sigma, games, wins) VALUES (1, 'abc', 'bots/old/abc', '[\"x\"]', 'native',"
        " '2026-01-01', 31.5, 2.5, 7, 5)"
    )
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    with Store.open(data) as store:
        bot = get_bot(store, "old")
    assert bot.owner is None
    assert (bot.versions[0].mu, bot.versions[0].games, bot.versions[0].wins) == (31.5, 7, 5)
    check = sqlite3.connect(data / "arena.db")
    assert check.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
    assert check.execute("SELECT COUNT(*) FROM tokens").fetchone()[0] == 0


def test_a_newer_schema_is_refused_and_left_alone(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = sqlite3.connect(data / "arena.db")
    db.execute(f"PRAGMA user_version = {CURRENT_VERSION + 1}")
    db.close()
    with pytest.raises(SchemaError, match="newer than this arena"):
        Store.open(data)
    check = sqlite3.connect(data / "arena.db")
    assert check.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION + 1


def test_a_file_that_is_not_a_database_is_refused_by_name(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "arena.db").write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a usable arena database"):
        Store.open(data)
    assert (data / "arena.db").read_bytes() == b"not sqlite at all" * 100
    assert [p.name for p in data.iterdir()] == ["arena.db"]  # no bots/ beside it


def test_a_new_data_directory_gets_its_bots_directory(tmp_path: Path) -> None:
    with Store.open(tmp_path / "data") as store:
        assert store.bots_dir.is_dir()


@pytest.mark.parametrize(
    ("explicit", "env", "xdg", "expected"),
    [
        ("/x/flag", "/x/env", "/x/xdg", "/x/flag"),
        (None, "/x/env", "/x/xdg", "/x/env"),
        (None, None, "/x/xdg", "/x/xdg/kahuna-arena"),
    ],
    ids=["flag-wins", "env-next", "xdg-default"],
)
def test_data_dir_precedence(
    monkeypatch: pytest.MonkeyPatch,
    explicit: str | None,
    env: str | None,
    xdg: str | None,
    expected: str,
) -> None:
    for name, value in (("KAHUNA_ARENA_DATA", env), ("XDG_DATA_HOME", xdg)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert resolve_data_dir(explicit) == Path(expected)


def test_a_real_v2_database_gains_seat_offers_and_live_games(tmp_path: Path) -> None:
    from arena.store.schema import V2

    data = tmp_path / "data"
    data.mkdir()
    db = sqlite3.connect(data / "arena.db")
    db.executescript(V1)
    db.executescript(V2)
    db.execute("INSERT INTO bots (id, name, owner, created_at) VALUES (1, 'b', 'al', '2026')")
    db.execute(
        "INSERT INTO tokens (token_sha256, user, role, created_at) VALUES ('h', 'al', 'user', 'x')"
    )
    db.execute("PRAGMA user_version = 2")
    db.commit()
    db.close()
    with Store.open(data) as store:
        assert get_bot(store, "b").owner == "al"
    check = sqlite3.connect(data / "arena.db")
    assert check.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
    tables = {r[0] for r in check.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"seat_offers", "live_games", "live_actions", "game_stderr", "ladders"} <= tables
    assert check.execute("SELECT COUNT(*) FROM tokens").fetchone()[0] == 1


def test_a_real_v3_tournament_gains_a_random_deal_secret(tmp_path: Path) -> None:
    from arena.store import tournament_secret
    from arena.store.schema import V2, V3

    data = tmp_path / "data"
    data.mkdir()
    db = sqlite3.connect(data / "arena.db")
    for step in (V1, V2, V3):
        db.executescript(step)
    for tid in (1, 2):
        db.execute(
            "INSERT INTO tournaments (id, name, format, status, config, created_at)"
            " VALUES (?, ?, 'round_robin', 'running', '{}', '2026')",
            (tid, f"t{tid}"),
        )
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    with Store.open(data) as store:
        secrets = [tournament_secret(store, tid) for tid in (1, 2)]
        assert secrets == [tournament_secret(store, tid) for tid in (1, 2)]  # stored, not drawn
    assert all(len(secret) == 32 for secret in secrets)
    assert secrets[0] != secrets[1]


def _foreign_database(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (text TEXT)")
    db.execute("INSERT INTO notes VALUES ('mine')")
    db.commit()
    db.close()


def _newer_database(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE future (x)")
    db.execute(f"PRAGMA user_version = {CURRENT_VERSION + 1}")
    db.commit()
    db.close()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_foreign_database, "not an arena database: .* already holds notes"),
        (_newer_database, "newer than this arena"),
    ],
    ids=["foreign-sqlite", "newer-schema"],
)
def test_a_database_it_cannot_use_is_refused_naming_the_file_and_left_byte_for_byte(
    tmp_path: Path, make: Callable[[Path], None], message: str
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    make(data / "arena.db")
    before = (data / "arena.db").read_bytes()
    with pytest.raises(SchemaError, match=message) as refused:
        Store.open(data)
    assert str(data / "arena.db") in str(refused.value)
    assert (data / "arena.db").read_bytes() == before  # no arena tables, still not WAL
    assert [p.name for p in data.iterdir()] == ["arena.db"]  # no bots/ beside it


OPENERS = 6
"""Openers let go at once per attempt: enough that an open racing another's switch of
the new file to WAL, or its migration, shows in most runs where nothing serialises them."""
AT_ONCE = 3
"""How many of them must have been inside ``Store.open`` together: on a loaded machine
one opener may be scheduled only after the others are done."""


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    """The most (began, ended) spans that were open at one moment."""
    edges = sorted([(began, 1) for began, _ in spans] + [(ended, -1) for _, ended in spans],
                   key=lambda edge: (edge[0], edge[1]))  # fmt: skip
    inside = most = 0
    for _, step in edges:
        inside += step
        most = max(most, inside)
    return most


@pytest.mark.slow
def test_processes_opening_a_new_data_directory_at_once_migrate_it_once(tmp_path: Path) -> None:
    """The race, forced and checked: the openers, imports done, are let go at once
    (one pipe closed), and at least ``AT_ONCE`` must have been inside ``Store.open`` at
    the same time."""
    data = tmp_path / "data"
    code = (
        "import os, sys, time\n"
        "from arena.store import Store\n"
        "print('ready', flush=True)\n"
        "os.read(int(sys.argv[2]), 1)  # the go: end of file once the test closes the pipe\n"
        "began = time.monotonic()\n"
        "Store.open(sys.argv[1]).close()\n"
        "print(began, time.monotonic(), flush=True)\n"
    )
    for attempt in range(4):
        target = data / str(attempt)
        go, let_go = os.pipe()
        openers = [
            subprocess.Popen([sys.executable, "-c", code, str(target), str(go)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(go,))
            for _ in range(OPENERS)
        ]  # fmt: skip
        os.close(go)
        ready = [opener.stdout.readline() for opener in openers if opener.stdout]
        os.close(let_go)
        done = [opener.communicate() for opener in openers]
        errors = [err.decode() for _, err in done]
        assert ready == [b"ready\n"] * OPENERS, errors
        assert [opener.returncode for opener in openers] == [0] * OPENERS, errors
        spans = [(float(out.split()[0]), float(out.split()[1])) for out, _ in done]
        assert _most_at_once(spans) >= AT_ONCE, f"fewer than {AT_ONCE} at once: {spans}"
        check = sqlite3.connect(target / "arena.db")
        assert check.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION


def test_an_open_waits_for_another_process_opening_the_directory_then_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The data directory's lock held elsewhere (a migration still running, a stopped
    process) is waited for up to ``OPEN_WAIT_S``, then refused naming the wait."""
    data = tmp_path / "data"
    Store.open(data).close()
    monkeypatch.setattr(db, "OPEN_WAIT_S", 0.2)
    holder = os.open(data, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(StoreError, match=r"another process has been opening it for 0.2 s"):
            Store.open(data)
    finally:
        os.close(holder)
    Store.open(data).close()  # the lock gone, the open goes through


def test_opening_a_current_database_takes_no_write_lock(tmp_path: Path) -> None:
    data = tmp_path / "data"
    Store.open(data).close()
    writer = sqlite3.connect(data / "arena.db", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process in the middle of storing a game
    try:
        started = time.monotonic()
        with Store.open(data) as store:
            assert list_bots(store) == []
        assert time.monotonic() - started < 5, "Store.open waited for the writer"
    finally:
        writer.execute("ROLLBACK")
        writer.close()


@pytest.mark.slow
def test_an_older_database_another_process_has_open_is_not_migrated_under_it(
    tmp_path: Path,
) -> None:
    """An older arena still running (its server or a runner) would go on storing games
    the old way into the migrated database, without the totals the new steps keep: the
    upgrade waits until it is stopped, and leaves the database as it was."""
    data = tmp_path / "data"
    data.mkdir()
    older = sqlite3.connect(data / "arena.db")
    older.execute("PRAGMA journal_mode = WAL")
    older.executescript(V1)
    older.execute("PRAGMA user_version = 1")
    older.commit()
    older.close()
    code = (
        "import sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1])\n"
        "db.execute('SELECT COUNT(*) FROM bots').fetchone()\n"
        "print('open', flush=True)\n"
        "sys.stdin.read()\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(data / "arena.db")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"open\n"
        refused = (rf"from schema v1 to v{CURRENT_VERSION} while process {holder.pid} has it"
                   r" open .* nothing was changed")
        with pytest.raises(StoreError, match=refused):
            Store.open(data)
        check = sqlite3.connect(data / "arena.db")
        assert check.execute("PRAGMA user_version").fetchone()[0] == 1
        check.close()
    finally:
        holder.communicate(b"")
    with Store.open(data) as store:  # stopped: the upgrade goes through
        assert list_bots(store) == []
    check = sqlite3.connect(data / "arena.db")
    assert check.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
