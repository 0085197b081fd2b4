"""`arena backup` and `arena restore`: a checked snapshot of a data directory, refused
destinations named, nothing partial left behind, and a restored directory that opens,
migrates and passes an audit."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import store as st
from arena.cli import main
from arena.store.backup import BackupError, BackupRefusedError, backup, restore, verify_backup
from arena.testing.demo_data import finished_round_robin
from arena.testing.waiting import wait_until
from tests.server.test_disk_full import small_disk

BOTS = ("alpha", "beta", "gamma")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data directory with a finished, auditable round robin and its bots."""
    directory = tmp_path / "data"
    with st.Store.open(directory) as store:
        config = st.TournamentConfig(games_per_match=4, seed=3)
        finished_round_robin(store, tmp_path / "sources", "audited", BOTS, config)
        st.ensure_admin_token(store)
    return directory


def fingerprint(directory: Path) -> dict[str, object]:
    """What a data directory holds: its database's rows, and every other file's bytes."""
    db = sqlite3.connect(f"file:{directory / 'arena.db'}?mode=ro", uri=True)
    try:
        rows = "\n".join(db.iterdump())
    finally:
        db.close()
    files = {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and not path.name.startswith("arena.db")
    }
    return {"rows": rows, "files": files}


def leftovers(parent: Path) -> list[str]:
    return sorted(path.name for path in parent.iterdir() if ".partial-" in path.name)


def test_a_backup_restores_to_a_directory_with_the_same_rows_and_bots_that_passes_audit(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = fingerprint(data)
    assert main(["backup", str(tmp_path / "bk"), "--data-dir", str(data)]) == 0
    assert "backed up to" in capsys.readouterr().out
    assert fingerprint(data) == before  # the data directory is not written
    assert oct((tmp_path / "bk" / "admin.token").stat().st_mode & 0o777) == "0o600"
    assert not (tmp_path / "bk" / "arena.db-wal").exists()
    restored = tmp_path / "restored"
    assert main(["restore", str(tmp_path / "bk"), "--data-dir", str(restored)]) == 0
    assert fingerprint(restored) == before
    assert main(["audit", "audited", "--data-dir", str(restored)]) == 0
    assert "pass" in capsys.readouterr().out
    with st.Store.open(restored) as store:
        assert len(st.list_games(store, limit=100)) == 12
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("dest", "problem"),
    [
        ("bk", "backup destination {dest} exists: give a new name"),
        ("data/inside", "is inside the data directory {parent}: put it elsewhere"),
        ("nowhere/bk", "its directory {parent} does not exist"),
    ],
)
def test_a_refused_destination_is_named_and_nothing_is_written(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], dest: str, problem: str
) -> None:
    (tmp_path / "bk").mkdir()
    target = tmp_path / dest
    before = fingerprint(data)
    assert main(["backup", str(target), "--data-dir", str(data)]) == 1
    error = capsys.readouterr().err
    assert "backup refused: " in error
    assert problem.format(dest=target, parent=target.parent) in error, error
    assert fingerprint(data) == before
    assert leftovers(tmp_path) == leftovers(data) == []


def test_a_disk_without_room_is_refused_before_anything_is_written(
    data: Path, tmp_path: Path
) -> None:
    with pytest.raises(BackupError, match=r"not enough free space for the backup on .*: it needs"
                       r" about 0\.\d MiB \(the database and the bots' copies\), 0\.0 MiB is free"):
        backup(data, tmp_path / "bk", free=lambda directory: 1000)
    assert not (tmp_path / "bk").exists() and leftovers(tmp_path) == []


@pytest.mark.slow
def test_a_disk_that_fills_mid_way_leaves_no_backup_and_the_data_directory_as_it_was(
    data: Path, tmp_path: Path
) -> None:
    """The free-space check passed (told of room there is not): the copy meets the full
    disk part way, and nothing of it is left."""
    before = fingerprint(data)
    with small_disk(tmp_path / "disk", size="256k") as disk:
        with pytest.raises(BackupError, match="filled up during the backup: nothing was left"):
            backup(data, disk.root / "bk", free=lambda directory: 1 << 40)
        assert list(disk.root.iterdir()) == []
    assert fingerprint(data) == before


def test_a_bot_copy_changed_in_the_data_directory_fails_the_check_and_leaves_no_backup(
    data: Path, tmp_path: Path
) -> None:
    copy = next((data / "bots" / "alpha").iterdir())
    (copy / "bot.py").write_text("print('changed')\n")
    hashes = f"its files hash to [0-9a-f]+, not to its version {copy.name}"
    with pytest.raises(BackupError, match=hashes):
        backup(data, tmp_path / "bk")
    assert not (tmp_path / "bk").exists() and leftovers(tmp_path) == []


def test_a_bot_added_after_the_snapshot_is_not_needed(data: Path, tmp_path: Path) -> None:
    """Only the copies the snapshot's rows name are copied and checked: a stray copy
    (a bot whose row the snapshot has not) is left out."""
    shutil.copytree(data / "bots" / "alpha", data / "bots" / "late")
    summary = backup(data, tmp_path / "bk")
    assert summary.bot_versions == 3
    assert not (tmp_path / "bk" / "bots" / "late").exists()


def test_a_damaged_backup_is_not_restored(data: Path, tmp_path: Path) -> None:
    backup(data, tmp_path / "bk")
    database = tmp_path / "bk" / "arena.db"
    raw = bytearray(database.read_bytes())
    raw[4096 * 3: 4096 * 3 + 64] = b"\xff" * 64  # a table page's header
    database.write_bytes(bytes(raw))
    with pytest.raises(BackupError, match=r"arena\.db: (the integrity check failed|not a whole)"):
        restore(tmp_path / "bk", tmp_path / "restored")
    assert not (tmp_path / "restored").exists() and leftovers(tmp_path) == []


def test_restore_never_overwrites_a_data_directory(data: Path, tmp_path: Path) -> None:
    backup(data, tmp_path / "bk")
    before = fingerprint(data)
    with pytest.raises(BackupRefusedError, match=f"restore destination {data} exists"):
        restore(tmp_path / "bk", data)
    assert fingerprint(data) == before
    (tmp_path / "empty").mkdir()
    assert restore(tmp_path / "bk", tmp_path / "empty").games == 12


def test_an_older_backup_is_migrated_when_restored(tmp_path: Path) -> None:
    """A backup of a v1 database restores and opens at the current schema, as an older
    data directory does."""
    from arena.store.schema import CURRENT_VERSION, V1

    old = tmp_path / "old"
    old.mkdir()
    db = sqlite3.connect(old / "arena.db")
    db.executescript(V1 + "PRAGMA user_version = 1;")
    db.close()
    backup(old, tmp_path / "bk")
    assert verify_backup(tmp_path / "bk").schema_version == 1
    assert main(["restore", str(tmp_path / "bk"), "--data-dir", str(tmp_path / "new")]) == 0
    db = sqlite3.connect(tmp_path / "new" / "arena.db")
    assert db.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
    db.close()


@contextlib.contextmanager
def held_open_lock(data: Path) -> Iterator[None]:
    """The data directory's open lock (``arena.store.db._opening``), held: a backup that
    needs it waits, its temporary directory made."""
    import fcntl

    descriptor = os.open(data, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    try:
        yield
    finally:
        os.close(descriptor)


@pytest.mark.slow
@pytest.mark.parametrize("sent", [signal.SIGKILL, signal.SIGINT])
def test_a_backup_process_stopped_mid_way_leaves_no_dest(
    data: Path, tmp_path: Path, sent: signal.Signals
) -> None:
    """Killed (nothing cleans up: the temporary directory stays, under a name that is no
    DEST) or interrupted with Ctrl-C (its temporary directory removed)."""
    before = fingerprint(data)
    with held_open_lock(data):
        process = subprocess.Popen(
            [sys.executable, "-m", "arena", "backup", str(tmp_path / "bk"),
             "--data-dir", str(data)],
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        wait_until(lambda: leftovers(tmp_path), "the backup's temporary directory", 30)
        process.send_signal(sent)
        process.wait(30)
    assert process.returncode != 0
    assert not (tmp_path / "bk").exists()
    assert all(name.startswith(".bk.partial-") for name in leftovers(tmp_path))
    assert (leftovers(tmp_path) == []) == (sent == signal.SIGINT)
    assert fingerprint(data) == before


def test_a_data_directory_without_a_database_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "typo").mkdir()
    assert main(["backup", str(tmp_path / "bk"), "--data-dir", str(tmp_path / "typo")]) == 1
    assert f"backup refused: no arena data directory at {tmp_path / 'typo'}" in (
        capsys.readouterr().err
    )  # fmt: skip
    assert list((tmp_path / "typo").iterdir()) == [] and not (tmp_path / "bk").exists()


@pytest.mark.slow
def test_the_wal_a_stopped_server_left_is_in_the_backup_and_left_as_it_was(
    data: Path, tmp_path: Path
) -> None:
    """A server killed with commits still in ``arena.db-wal``: the backup holds them, and
    neither file is written (a connection that closed last would checkpoint the WAL)."""
    subprocess.run([sys.executable, "-c", (
        "import os, sys; from arena import store as st; s = st.Store.open(sys.argv[1]);"
        " st.create_token(s, 'late', 'user'); os._exit(0)"
    ), str(data)], check=True, timeout=60)  # fmt: skip
    wal = data / "arena.db-wal"
    assert wal.stat().st_size > 0
    before = {name: (data / name).read_bytes() for name in ("arena.db", "arena.db-wal")}
    backup(data, tmp_path / "bk")
    assert {name: (data / name).read_bytes() for name in before} == before
    users = sqlite3.connect(tmp_path / "bk" / "arena.db").execute("SELECT user FROM tokens")
    assert ("late",) in users.fetchall()


def test_a_remote_bots_stored_copy_is_kept_and_one_gone_does_not_stop_the_backup(
    data: Path, tmp_path: Path
) -> None:
    """A remote bot's copy (its bot.toml: its description) is backed up with the others;
    as nothing runs it, a data directory that lost it still backs up."""
    with st.Store.open(data) as store:
        here, _ = st.register_remote_bot(store, "far", owner="alice", description="over there")
        st.register_remote_bot(store, "gone", owner="alice")
    backup(data, tmp_path / "bk")
    copy = tmp_path / "bk" / "bots" / "far" / here.version
    assert "over there" in (copy / "bot.toml").read_text()
    shutil.rmtree(data / "bots" / "gone")
    assert backup(data, tmp_path / "bk2").bot_versions == 5
    assert not (tmp_path / "bk2" / "bots" / "gone").exists()
    assert restore(tmp_path / "bk2", tmp_path / "restored").bot_versions == 5
