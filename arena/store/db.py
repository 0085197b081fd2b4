"""The store handle: one SQLite connection (WAL) in a data directory.

All writes go through ``transaction()`` (``BEGIN IMMEDIATE`` ... ``COMMIT``),
so every unit of work (a finished game with its rating update, a round's
pairings, a bot version with its files) is committed whole or not at all.
The handle is shared by threads (the gRPC server): a lock serialises use of
the connection; other processes (the web pages) read concurrently thanks to WAL.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from arena.quoting import clipped
from arena.store.paths import BOTS_DIR_NAME, DATABASE_NAME, resolve_data_dir
from arena.store.schema import CURRENT_VERSION, SchemaError, check_usable, migrate


def _private(path: Path, mode: int) -> None:
    """Take group and other permissions off ``path`` (ours, when it exists)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if info.st_uid == os.getuid() and not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o077:
        os.chmod(path, mode)


class StoreError(Exception):
    """A request the store refuses; the message says what and why."""


OPEN_WAIT_S = 30.0
"""How long an open waits for another process opening the same data directory."""


def _opening(path: Path) -> int:
    """A descriptor of the data directory ``path`` holding its exclusive ``flock``:
    one process at a time turns a new database to WAL and migrates it. SQLite cannot
    do that alone: two connections switching one new file to WAL at once get
    "database is locked" at once, without waiting. The lock is on the directory, not
    the database file, whose POSIX locks closing another descriptor of it would drop."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise StoreError(f"data directory {path}: cannot open it: {error.strerror}") from None
    deadline = time.monotonic() + OPEN_WAIT_S
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return descriptor
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(descriptor)
                raise StoreError(
                    f"data directory {path}: another process has been opening it for"
                    f" {OPEN_WAIT_S:g} s (a migration still running, or a stopped process)"
                ) from None
            time.sleep(0.005)


def _held_elsewhere(database: Path) -> int | None:
    """The id of another process holding SQLite's lock on ``database``'s shared memory
    (``-shm``): one that has the database open; None when none does (or it cannot be told).

    Read from ``/proc/locks`` rather than by testing a lock: a descriptor of the file opened
    and closed here would drop this process's own SQLite locks on it."""
    try:
        shm = os.stat(f"{database}-shm")
        table = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    me = os.getpid()
    for line in table.splitlines():
        fields = line.replace("->", " ").split()  # N: POSIX ADVISORY READ PID MAJ:MIN:INODE ...
        if len(fields) < 6 or fields[1] != "POSIX":
            continue
        try:
            pid = int(fields[4])
            parts = zip(fields[5].split(":"), (16, 16, 10), strict=True)
            major, minor, inode = (int(part, base) for part, base in parts)
        except ValueError:
            continue
        if pid != me and (major, minor, inode) == (
            os.major(shm.st_dev), os.minor(shm.st_dev), shm.st_ino
        ):
            return pid
    return None


class StorageFullError(Exception):
    """The data directory's filesystem is full: nothing of the write was kept.

    Not a StoreError (a request the store refuses): the request was fine, the
    disk was not. Callers stop (the tournament runner) or answer "try later"
    (the API: RESOURCE_EXHAUSTED); the message names no path.
    """

    def __init__(self, cause: BaseException) -> None:
        self.cause = _cause_text(cause)
        super().__init__(f"the arena's data directory has no space left ({self.cause})")


class DamagedDatabaseError(Exception):
    """The database file is damaged: SQLite met a page that is no page of it (``is_damage``).

    Not a StoreError (a request the store refuses): the request was fine, the file
    is not. Its message is the one line every caller shows (``damaged_line``); the
    store that met it writes nothing more (``Store.transaction``).
    """

    def __init__(self, database: Path, cause: object) -> None:
        self.database = database
        self.cause = str(cause)
        super().__init__(damaged_line(database, self.cause))

    def stopped(self, what: str) -> str:
        """The line saying that ``what`` ("the ladder") stopped there."""
        return damaged_line(self.database, self.cause, what)


def damaged_line(database: Path, cause: object, what: str = "the command") -> str:
    """The one line for a damaged database file: which, what SQLite said, what stopped."""
    return (f"{database}: the database is damaged ({cause}); {what} stopped there:"
            " restore the file from a backup")  # fmt: skip


DAMAGED_ANSWER = (
    "the arena's database is damaged: nothing was stored; the admin has to restore it from"
    " a backup"
)
"""What the server answers a caller whose request met the damage (the API, the web):
``damaged_line`` without the server's path, which its log keeps."""


def is_damage(error: BaseException) -> bool:
    """Whether SQLite found the database file damaged (a page that is no page of it), as
    a failing disk or a copy cut short leaves it: found on the read that meets the page,
    any time after the open, whose checks read only the header and schema."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    return isinstance(error, sqlite3.Error) and code in (
        sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB
    )  # fmt: skip


FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_IOERR_SHMSIZE = sqlite3.SQLITE_IOERR_SHMSIZE  # what opening in WAL mode on a full disk gives


def is_disk_full(error: BaseException) -> bool:
    """Whether ``error`` says a filesystem is full (SQLite's SQLITE_FULL, ENOSPC, EDQUOT)."""
    if isinstance(error, StorageFullError):
        return True
    if isinstance(error, sqlite3.Error):
        return getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
    return isinstance(error, OSError) and error.errno in FULL_ERRNOS


def _unwritable(error: sqlite3.Error, directory: Path) -> str | None:
    """Why SQLite could not write (a full disk, a read-only database), as a clause; else None.

    A full filesystem shows as SQLITE_FULL, or as an I/O error (growing the WAL index,
    -shm, says only SQLITE_IOERR_SHMSIZE) while the filesystem has no free block left.
    """
    code = getattr(error, "sqlite_errorcode", None)
    if is_disk_full(error) or code == _IOERR_SHMSIZE or _no_free_block(error, directory):
        return f"the data directory has no space left ({error}); free some, then retry"
    if code is not None and code & 0xFF == sqlite3.SQLITE_READONLY:  # any of its extended codes
        return "the database is read-only (make it writable, then open it again)"
    return None


def _no_free_block(error: sqlite3.Error, directory: Path) -> bool:
    if getattr(error, "sqlite_errorcode", 0) & 0xFF != sqlite3.SQLITE_IOERR:
        return False
    try:
        return os.statvfs(directory).f_bavail == 0
    except OSError:
        return False


def _cause_text(error: BaseException) -> str:
    if isinstance(error, OSError) and error.errno is not None:
        return os.strerror(error.errno)  # without the file name: no server path
    if isinstance(error, sqlite3.Error):
        return "database or disk is full"
    return type(error).__name__


class NotFoundError(StoreError, LookupError):
    """Something asked for by name or id that is not stored."""


class AlreadyExistsError(StoreError):
    """A name that is already taken."""


class NotOwnerError(StoreError, PermissionError):
    """A bot that belongs to another user than the one acting for it."""

    def __init__(self, bot: str, owner: str | None = None) -> None:
        whose = "another user" if owner is None else f"user {owner!r}"
        super().__init__(f"bot {bot!r} belongs to {whose}")
        self.bot = bot
        self.owner = owner


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Store:
    """An open arena data directory. Use ``Store.open`` (or as a context manager)."""

    def __init__(self, data_dir: Path, connection: sqlite3.Connection) -> None:
        self.data_dir = data_dir
        self.bots_dir = data_dir / BOTS_DIR_NAME
        self._connection = connection
        self._lock = threading.RLock()
        self._damage: DamagedDatabaseError | None = None  # met once: nothing more is written

    @property
    def database(self) -> Path:
        return self.data_dir / DATABASE_NAME

    def _damaged(self, error: sqlite3.Error) -> DamagedDatabaseError:
        """The error to raise for damage SQLite just met; from now on nothing is written."""
        with self._lock:
            if self._damage is None:
                self._damage = DamagedDatabaseError(self.database, error)
            return DamagedDatabaseError(self.database, error)

    @classmethod
    def open(cls, data_dir: str | Path | None = None) -> Store:
        """Open (creating on first use) the data directory and migrate its database."""
        path = resolve_data_dir(data_dir)
        try:
            not_a_directory = path.exists() and not path.is_dir()
        except OSError as error:  # $KAHUNA_ARENA_DATA with a name too long, say
            raise StoreError(f"data directory {clipped(str(path))}: {error.strerror}") from None
        if not_a_directory:
            raise StoreError(f"data directory {path} is not a directory")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.mkdir(mode=0o700, exist_ok=True)  # it holds token hashes: the owner's only
            _private(path, 0o700)
        except OSError as error:
            raise StoreError(f"cannot create data directory {path}: {error.strerror}") from None
        if not os.access(path, os.W_OK | os.X_OK):
            # SQLite would say only "unable to open database file"
            raise StoreError(
                f"data directory {path} is not writable (read-only file system or permissions)"
            )
        database = path / DATABASE_NAME
        try:
            # A new database is made 0600 before SQLite opens it (its -wal and -shm files
            # take the same mode). Only a file that did not exist is opened here: closing
            # any descriptor of a database this process already has open would drop
            # SQLite's POSIX locks on it (fcntl locks are per process), and another
            # process could then write under it: a corrupt database.
            os.close(os.open(database, os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        except FileExistsError:
            pass
        except OSError as error:
            raise StoreError(f"{database}: cannot open the database: {error.strerror}") from None
        try:
            connection = sqlite3.connect(
                database, isolation_level=None, check_same_thread=False, timeout=30.0
            )
        except sqlite3.Error as error:
            raise StoreError(f"{database}: cannot open the database: {error}") from None
        found = None
        try:
            opening = _opening(path)
        except StoreError:
            connection.close()
            raise
        try:
            found = check_usable(connection)  # reads only: a refused file is left as it was
            holder = _held_elsewhere(database) if 0 < found < CURRENT_VERSION else None
            if holder is not None:  # an older arena's: it would go on writing the old way
                connection.close()
                raise StoreError(
                    f"{database}: cannot upgrade the database from schema v{found} to"
                    f" v{CURRENT_VERSION} while process {holder} has it open (an older"
                    " arena's server or runner, which would go on storing games without"
                    " what this version keeps with them): stop it, then open again; nothing"
                    " was changed"
                )
            connection.row_factory = sqlite3.Row
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = FULL")
            # Foreign keys are checked once migrated: a step that rebuilds a table others
            # refer to (v6) must drop the old one, and checks the whole database itself.
            migrate(connection)
            connection.execute("PRAGMA foreign_keys = ON")
            for name in (DATABASE_NAME, f"{DATABASE_NAME}-wal", f"{DATABASE_NAME}-shm"):
                _private(path / name, 0o600)  # made by an older arena: token hashes inside
        except OSError as error:
            connection.close()
            raise StoreError(f"{database}: cannot make it private: {error.strerror}") from None
        except sqlite3.DatabaseError as error:
            connection.close()
            unwritable = _unwritable(error, path)
            if unwritable and found is not None and 0 < found < CURRENT_VERSION:
                raise StoreError(
                    f"{database}: cannot upgrade the database from schema v{found} to"
                    f" v{CURRENT_VERSION}: {unwritable}; it is left at v{found} as it was"
                ) from None
            if unwritable:
                raise StoreError(
                    f"{database}: cannot open the database: {unwritable}; nothing was changed"
                ) from None
            raise StoreError(f"{database}: not a usable arena database: {error}") from None
        except SchemaError as error:
            connection.close()
            raise SchemaError(f"{database}: {error}") from None
        finally:
            os.close(opening)  # the data directory's lock goes with it
        try:  # once the database is accepted: a refused one leaves nothing beside it
            (path / BOTS_DIR_NAME).mkdir(exist_ok=True)
        except OSError as error:
            connection.close()
            raise StoreError(f"cannot create {path / BOTS_DIR_NAME}: {error.strerror}") from None
        return cls(path, connection)

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self, *, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """One atomic unit of work: committed on success, rolled back on any error.

        ``durable=False`` commits without waiting for the disk (WAL, ``synchronous =
        NORMAL``): still atomic, but a power cut may lose it. Only for what may be lost,
        such as the live view of games in progress, written several times a second;
        the next durable commit syncs it along with its own.
        """
        with self._lock:
            if self._damage is not None:  # a write beside a damaged page may spread it
                raise DamagedDatabaseError(self.database, self._damage.cause)
            if not durable:
                self._connection.execute("PRAGMA synchronous = NORMAL")
            try:
                self._connection.execute("BEGIN IMMEDIATE")
                try:
                    yield self._connection
                    self._connection.execute("COMMIT")
                except BaseException:
                    if self._connection.in_transaction:  # also when COMMIT itself failed
                        with contextlib.suppress(sqlite3.Error):
                            self._connection.execute("ROLLBACK")
                    raise
            except (sqlite3.Error, OSError) as error:
                if is_disk_full(error):
                    raise StorageFullError(error) from error
                if isinstance(error, sqlite3.Error) and is_damage(error):
                    raise self._damaged(error) from error
                raise
            finally:
                if not durable:
                    self._connection.execute("PRAGMA synchronous = FULL")

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for several queries (DamagedDatabaseError when one meets
        a damaged page; the reads that do not go on)."""
        with self._lock:
            try:
                self._connection.execute("BEGIN")
                try:
                    yield self._connection
                finally:
                    self._end_reading()
            except sqlite3.DatabaseError as error:
                if is_damage(error):
                    raise self._damaged(error) from error
                raise

    def _end_reading(self) -> None:
        try:
            self._connection.execute("COMMIT")
        except sqlite3.Error:
            if self._connection.in_transaction:  # never left open under the next BEGIN
                with contextlib.suppress(sqlite3.Error):
                    self._connection.execute("ROLLBACK")
            raise


_DATABASE_FILES = (DATABASE_NAME, f"{DATABASE_NAME}-wal", f"{DATABASE_NAME}-shm")


@dataclass(frozen=True, slots=True)
class FirstOpen:
    """What ``Store.open`` would create in a data directory, as found before it runs: the
    directories missing (deepest first, the data directory's own ancestors too) and the
    names of the database's files and of ``bots`` missing in it.

    ``undo`` takes away what this open made once its command is refused: a mistyped
    ``--data-dir`` must not be left holding an empty store that the commands refusing a
    data directory without a database (``existing``) would then take as one.
    """

    data_dir: Path
    directories: tuple[Path, ...]
    names: frozenset[str]
    mode: int | None = None  # an existing data directory's, which the open makes 0700

    @classmethod
    def before(cls, data_dir: str | Path | None) -> FirstOpen:
        """What of ``data_dir`` does not exist now (nothing, where that cannot be told)."""
        where = resolve_data_dir(data_dir).absolute()
        missing: list[Path] = []
        probe = where
        try:
            while not _exists(probe) and probe.parent != probe:
                missing.append(probe)
                probe = probe.parent
            names = {n for n in (*_DATABASE_FILES, BOTS_DIR_NAME) if not _exists(where / n)}
            mode = None if missing else stat.S_IMODE(where.stat().st_mode)
        except OSError:  # a name too long, a directory that cannot be searched: claim nothing
            return cls(where, (), frozenset())
        return cls(where, tuple(missing), frozenset(names), mode)

    def undo(self) -> bool:
        """Remove what the open made, if its store holds no row and no other process has it
        open; whether it did. A directory that existed, a file or directory the open did not
        make, a store with anything in it: each is left as it is. The data directory's lock
        (taken by ``Store.open`` before it reads or migrates) is held throughout, so that no
        other process opens the store in between; one that is opening it now keeps it."""
        if DATABASE_NAME not in self.names:
            return False  # a database that was there: someone's store, even if empty
        try:
            descriptor = os.open(self.data_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            database = self.data_dir / DATABASE_NAME
            if _held_elsewhere(database) is not None or not _holds_nothing(database):
                return False
            for name in _DATABASE_FILES:
                if name in self.names:
                    (self.data_dir / name).unlink(missing_ok=True)
            if BOTS_DIR_NAME in self.names:
                (self.data_dir / BOTS_DIR_NAME).rmdir()  # only if empty
            if self.mode is not None and self.data_dir.is_dir():
                os.chmod(self.data_dir, self.mode)
        except (OSError, sqlite3.Error):
            return False
        finally:
            os.close(descriptor)
        for directory in self.directories:  # deepest first; only those left empty
            try:
                directory.rmdir()
            except OSError:
                break
        return True


def _exists(path: Path) -> bool:
    """Whether ``path`` names anything (a dangling link too); OSError when that cannot be told."""
    try:
        path.lstat()
    except FileNotFoundError:
        return False
    except NotADirectoryError:  # a file where a directory of the path should be
        return True
    return True


def _holds_nothing(database: Path) -> bool:
    """Whether the database holds no row in any table (a file SQLite never wrote: none)."""
    if not database.is_file():
        return True
    connection = sqlite3.connect(database, timeout=5.0)  # reads only
    try:
        tables = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite!_%'"
            " ESCAPE '!'"
        )]  # fmt: skip
        quoted = ('"' + name.replace('"', '""') + '"' for name in tables)
        return not any(
            connection.execute(f"SELECT 1 FROM {name} LIMIT 1").fetchone() for name in quoted
        )
    finally:
        connection.close()
