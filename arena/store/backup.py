"""Backups of a data directory while `arena serve` writes to it, and their restore.

A backup is a directory that is itself a data directory: ``arena.db``, a consistent
snapshot of the database taken with SQLite's online backup API in one step (one read
transaction: WAL lets the server go on writing meanwhile, and the snapshot holds every
commit before it, the ones still in the ``-wal`` file too), the stored copy of every
bot version the snapshot names (``bots/NAME/VERSION``), and ``admin.token``. It is
written under a temporary name beside DEST and renamed to DEST only once it checks
out (``PRAGMA integrity_check``, each copy hashing to its version), so a backup that
was interrupted or ran out of space leaves nothing that looks whole, and never writes
in the data directory. The Java class-data archives (made again on demand), runner
leases and anything outside the data directory (the Ray token, TLS keys) are not in it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.referee import content_hash
from arena.referee.botdir import REMOTE_RUNTIME
from arena.store.db import FULL_ERRNOS, StoreError, _opening, is_disk_full
from arena.store.paths import ADMIN_TOKEN_NAME, BOTS_DIR_NAME, DATABASE_NAME
from arena.store.schema import check_usable

PARTIAL_MARK = ".partial-"
"""In the temporary name of a backup (or restore) being written: ``.DEST.partial-XXXX``."""

_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")  # as the store copies a bot


class BackupError(StoreError):
    """A backup or restore refused or failed; the message names the problem. Nothing
    was left at the destination, and the data directory was not written."""


class BackupRefusedError(BackupError):
    """A backup or restore refused before it began: a destination that exists, one inside
    the directory copied, one without room, a source that is no data directory."""


@dataclass(frozen=True, slots=True)
class BackupSummary:
    """What a checked backup (or restored directory) holds."""

    path: Path
    schema_version: int
    games: int
    bot_versions: int
    bytes: int
    seconds: float = 0.0


FreeBytes = Callable[[Path], int]


def free_bytes(directory: Path) -> int:
    """Bytes an unprivileged writer may still use on ``directory``'s filesystem."""
    info = os.statvfs(directory)
    return info.f_bavail * info.f_frsize


def backup(data_dir: Path, dest: Path, *, free: FreeBytes = free_bytes) -> BackupSummary:
    """Write a checked backup of ``data_dir`` at ``dest`` (which must not exist)."""
    started = time.monotonic()
    database = data_dir / DATABASE_NAME
    if not database.is_file():
        raise BackupRefusedError(
            f"no arena data directory at {data_dir} (it holds no {DATABASE_NAME})"
        )
    _check_destination(dest, data_dir, "backup", "the data directory")
    needed = _tree_bytes(data_dir / BOTS_DIR_NAME) + sum(
        _size(data_dir / name) for name in (DATABASE_NAME, f"{DATABASE_NAME}-wal")
    )
    _check_room(dest.parent, needed, "backup", free)
    partial = _partial_dir(dest)
    try:
        _snapshot(data_dir, partial / DATABASE_NAME)
        for relative, _version, required in _named_copies(partial / DATABASE_NAME):
            source = _inside(data_dir, relative)
            if not required and not source.is_dir():  # a remote bot's, which nothing runs
                continue
            if not source.is_dir():
                raise BackupError(
                    f"the stored copy {source} that the database names is missing from the"
                    " data directory: restore bots/ from an older backup first"
                )
            shutil.copytree(source, partial / relative, symlinks=True, ignore=_IGNORED)
        token = data_dir / ADMIN_TOKEN_NAME
        if token.is_file():
            shutil.copy2(token, partial / ADMIN_TOKEN_NAME)
            os.chmod(partial / ADMIN_TOKEN_NAME, 0o600)
        summary = verify_backup(partial)
        _sync(partial / DATABASE_NAME)
        _sync(partial)
        if dest.exists() or dest.is_symlink():  # made while the backup ran
            raise BackupError(f"backup destination {dest} exists (made while the backup ran)")
        partial.rename(dest)
        _sync(dest.parent)
    except BaseException as error:
        shutil.rmtree(partial, ignore_errors=True)
        raise _failed(error, dest, "backup") from None
    return BackupSummary(dest, summary.schema_version, summary.games, summary.bot_versions,
                         summary.bytes, time.monotonic() - started)  # fmt: skip


def restore(source: Path, data_dir: Path) -> BackupSummary:
    """Copy the backup at ``source`` to the new data directory ``data_dir`` (which must not
    exist, or be empty), after checking it; ``data_dir`` is opened (migrated) by the caller."""
    started = time.monotonic()
    if not (source / DATABASE_NAME).is_file():
        raise BackupRefusedError(f"{source} is not an arena backup (it holds no {DATABASE_NAME})")
    empty_dir = data_dir.is_dir() and not data_dir.is_symlink() and not any(data_dir.iterdir())
    if not empty_dir:
        _check_destination(data_dir, source, "restore", "the backup")
    summary = verify_backup(source)
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    _check_room(data_dir.parent, summary.bytes, "restore", free_bytes)
    partial = _partial_dir(data_dir)
    try:
        shutil.copytree(source, partial / "data", symlinks=True)
        os.chmod(partial / "data", 0o700)
        if empty_dir:
            data_dir.rmdir()
        (partial / "data").rename(data_dir)
        _sync(data_dir.parent)
    except BaseException as error:
        shutil.rmtree(partial, ignore_errors=True)
        raise _failed(error, data_dir, "restore") from None
    shutil.rmtree(partial, ignore_errors=True)
    return BackupSummary(data_dir, summary.schema_version, summary.games, summary.bot_versions,
                         summary.bytes, time.monotonic() - started)  # fmt: skip


def verify_backup(directory: Path) -> BackupSummary:
    """Check a backup: its database whole (``PRAGMA integrity_check``, of a schema this
    arena can use) and every bot version it names there, hashing to that version."""
    database = directory / DATABASE_NAME
    connection = _read_only(database)
    try:
        try:
            found = connection.execute("PRAGMA integrity_check").fetchall()
            version = check_usable(connection)
            games = int(connection.execute("SELECT count(*) FROM games").fetchone()[0]) \
                if version else 0
        except sqlite3.DatabaseError as error:
            raise BackupError(f"{database}: not a whole arena database: {error}") from None
    finally:
        connection.close()
    if [row[0] for row in found] != ["ok"]:
        problems = "; ".join(str(row[0]) for row in found[:3])
        raise BackupError(f"{database}: the integrity check failed: {problems}")
    named = _named_copies(database) if version else []
    for relative, version_hash, required in named:
        copy = _inside(directory, relative)
        if not required and not copy.is_dir():
            continue
        if not (copy / "bot.toml").is_file():
            raise BackupError(f"{copy}: the copy of a bot version the database names is missing")
        if (got := content_hash(copy)) != version_hash:
            raise BackupError(f"{copy}: its files hash to {got}, not to its version {version_hash}")
    return BackupSummary(directory, version, games, len(named), _tree_bytes(directory))


def _snapshot(data_dir: Path, target: Path) -> None:
    """Copy the database to ``target`` in one read transaction (the online backup API).

    Opened as the store opens it: under the data directory's ``flock`` (no migration is
    under way), and its schema checked before anything else; read only, so that its
    closing does not checkpoint the server's WAL into ``arena.db`` either."""
    database = data_dir / DATABASE_NAME
    source = _read_only(database, timeout=30.0)
    try:
        opening = _opening(data_dir)
        try:
            check_usable(source)
        finally:
            os.close(opening)
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        copy = sqlite3.connect(target, isolation_level=None)
        try:
            source.backup(copy)  # pages=-1: every page in one step, from one snapshot
            copy.execute("PRAGMA journal_mode = DELETE")  # one file, no -wal beside it
        finally:
            copy.close()
    finally:
        source.close()


def _read_only(database: Path, timeout: float = 5.0) -> sqlite3.Connection:
    """A read-only connection to ``database`` (SQLite may add its ``-wal`` and ``-shm``)."""
    return sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True,
                           isolation_level=None, timeout=timeout)  # fmt: skip


def _named_copies(database: Path) -> list[tuple[str, str, bool]]:
    """The stored copies (relative directory, version, whether it must be there) that
    ``database``'s rows name: a remote bot's (its bot.toml) is kept when there, but one
    gone does not stop a backup, as it stops none of the bot's games."""
    connection = _read_only(database)
    try:
        if int(connection.execute("PRAGMA user_version").fetchone()[0]) == 0:
            return []
        rows = connection.execute(
            "SELECT directory, version, runtime FROM bot_versions ORDER BY id"
        ).fetchall()
    finally:
        connection.close()
    return [(str(directory), str(version), runtime != REMOTE_RUNTIME)
            for directory, version, runtime in rows]  # fmt: skip


def _inside(root: Path, relative: str) -> Path:
    """``root / relative`` for a stored copy's directory, refused if it leaves ``root/bots``."""
    path = root / relative
    if not os.path.normpath(path).startswith(os.path.normpath(root / BOTS_DIR_NAME) + os.sep):
        raise BackupError(f"the database names a bot copy outside bots/: {relative!r}")
    return path


def _check_destination(dest: Path, copied: Path, what: str, called: str) -> None:
    """Refuse ``dest`` for a copy of ``copied`` (``called`` "the data directory")."""
    if dest.exists() or dest.is_symlink():
        raise BackupRefusedError(f"{what} destination {dest} exists: give a new name")
    if not dest.parent.is_dir():
        raise BackupRefusedError(
            f"{what} destination {dest}: its directory {dest.parent} does not exist"
        )
    if dest.parent.resolve().is_relative_to(copied.resolve()):
        raise BackupRefusedError(
            f"{what} destination {dest} is inside {called} {copied}: put it elsewhere"
            " (the copy would hold itself)"
        )


def _check_room(directory: Path, needed: int, what: str, free: FreeBytes) -> None:
    available = free(directory)
    if available < needed:
        raise BackupRefusedError(
            f"not enough free space for the {what} on {directory}'s disk: it needs about"
            f" {mib(needed)} (the database and the bots' copies), {mib(available)} is free"
        )


def _failed(error: BaseException, dest: Path, what: str) -> BaseException:
    """The error to raise for a backup or restore that stopped (its partial copy gone)."""
    if isinstance(error, BackupError | KeyboardInterrupt | SystemExit):
        return error
    if is_disk_full(error) or (isinstance(error, shutil.Error) and any(
            f"[Errno {number}]" in str(error) for number in FULL_ERRNOS)):  # fmt: skip
        return BackupError(
            f"the disk of {dest.parent} filled up during the {what}: nothing was left at"
            f" {dest}; free some space, then retry"
        )
    if isinstance(error, OSError | sqlite3.Error | shutil.Error | StoreError):
        return BackupError(f"the {what} to {dest} failed, nothing was left there: {error}")
    return error


def _partial_dir(dest: Path) -> Path:
    try:
        return Path(tempfile.mkdtemp(prefix=f".{dest.name}{PARTIAL_MARK}", dir=dest.parent))
    except OSError as error:
        if error.errno in FULL_ERRNOS:
            raise BackupError(f"no space left on {dest.parent}'s disk") from None
        raise BackupError(f"cannot write in {dest.parent}: {error.strerror}") from None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _tree_bytes(root: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def mib(size: int) -> str:
    """``size`` bytes in MiB, as a backup's refusals and summary say them."""
    return f"{size / (1 << 20):.1f} MiB"


def _sync(path: Path) -> None:
    """Flush ``path`` (a file or a directory's entries) to the disk."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(descriptor)
    finally:
        os.close(descriptor)


