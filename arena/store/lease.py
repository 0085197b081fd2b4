"""Runner leases: which tournaments a live process is running right now.

A runner holds an exclusive ``flock`` on ``DATA_DIR/leases/tournament-ID.lock``
while it plays the tournament, with its pid written in the file for messages.
The kernel drops the lock when the holder's last descriptor closes, so a
runner that dies in any way (return, exception, Ctrl-C, ``kill -9``, power
cut) leaves no lease behind; a lock file left on disk by a dead process is
just a file and is taken over by the next runner. Hence a tournament stored as
``running`` whose lease nobody holds is ``interrupted`` (a derived state,
never stored: the process that could write it is dead).

flock locks belong to an open file description, not to a process: a second
``open`` in the same process conflicts with the first, so the holder's own
probes see its lease held too, and two runners in one process exclude each
other as two processes do. The descriptor is close-on-exec (bots and worker
processes started with exec never hold it).

A probe takes a shared lock for an instant (it fails while a runner holds the
exclusive one); a runner taking the lease therefore retries for a short while
(``LEASE_WAIT_S``) before it gives up on a lease that is really held.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from dataclasses import dataclass
from pathlib import Path

from arena.store.db import Store, StoreError
from arena.store.paths import LEASES_DIR_NAME

LEASE_WAIT_S = 0.5
"""How long taking a held lease is retried (probes hold it for microseconds)."""
_RETRY_S = 0.01
_PID_BYTES = 32
_NOTE_BYTES = 1024


class LeaseHeldError(StoreError):
    """Another runner (this or another process) is running the tournament."""

    def __init__(
        self, tournament: str, pid: int | None, *, kind: str = "tournament",
        then: str = "wait for it to end, or stop it and resume",
    ) -> None:  # fmt: skip
        self.tournament = tournament
        self.pid = pid
        holder = f"process {pid}" if pid is not None else "another process (pid unknown)"
        super().__init__(f"{kind} {tournament!r} is already being run by {holder}: {then}")


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """A live runner of a tournament: its pid as written in the lock file (None if unknown)."""

    pid: int | None


def lease_path(where: Store | Path, tournament_id: int) -> Path:
    """The lock file of ``tournament_id``'s runner lease in a store's data directory."""
    data_dir = where.data_dir if isinstance(where, Store) else where
    return data_dir / LEASES_DIR_NAME / f"tournament-{tournament_id}.lock"


class TournamentLease:
    """A held runner lease; ``release`` (or leaving the ``with`` block) gives it up."""

    def __init__(self, tournament_id: int, path: Path, fd: int) -> None:
        self.tournament_id = tournament_id
        self.path = path
        self._fd: int | None = fd
        self._owner_pid = os.getpid()
        self._noted = False

    def note(self, reason: str) -> None:
        """Leave ``reason`` in the lock file for readers once the lease is given up.

        Written over the file's first block (which holds the pid already), so it
        needs no new space: on a full disk, where the database can take no
        write, this is where the reason stays (``lease_note``). ``reason`` is
        one line, bounded by the caller.
        """
        if self._fd is None:
            return
        data = f"{os.getpid()}\n{reason[:_NOTE_BYTES]}\n".encode("utf-8", "replace")
        try:
            os.pwrite(self._fd, data, 0)
            os.ftruncate(self._fd, len(data))  # shrinking allocates nothing
        except OSError:
            return
        self._noted = True

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Unlock and close (idempotent). A forked child never releases its parent's lease."""
        fd, self._fd = self._fd, None
        if fd is None or os.getpid() != self._owner_pid:
            return
        try:
            if not self._noted:
                os.ftruncate(fd, 0)  # no stale pid for the next reader
        except OSError:
            pass
        finally:
            os.close(fd)  # the last descriptor of the description: the lock goes

    def __enter__(self) -> TournamentLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def acquire_lease(
    where: Store | Path, tournament_id: int, *, name: str, wait_s: float = LEASE_WAIT_S
) -> TournamentLease:
    """Take the runner lease of tournament ``tournament_id`` (called ``name`` in messages).

    LeaseHeldError, naming the tournament and the holder's pid, if a live runner
    has it; StoreError if the lock file cannot be created.
    """
    path = lease_path(where, tournament_id)
    try:
        path.parent.mkdir(exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as error:
        raise StoreError(f"cannot create the runner lease {path}: {error.strerror}") from None
    deadline = time.monotonic() + wait_s
    try:
        while not _try_lock(fd, fcntl.LOCK_EX):
            if time.monotonic() >= deadline:
                raise LeaseHeldError(name, _read_pid(fd))
            time.sleep(_RETRY_S)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    return TournamentLease(tournament_id, path, fd)


def lease_holder(where: Store | Path, tournament_id: int) -> LeaseHolder | None:
    """The live runner of tournament ``tournament_id``, or None when no process runs it.

    A lock file that cannot be opened (for another reason than its absence) or
    locked is reported as held, pid unknown: the stored status is then shown as it is.
    """
    path = lease_path(where, tournament_id)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        return LeaseHolder(None)
    try:
        if _try_lock(fd, fcntl.LOCK_SH):
            return None  # closing the descriptor below unlocks it
        return LeaseHolder(_read_pid(fd))
    except StoreError:  # a file system without flock: cannot tell
        return LeaseHolder(None)
    finally:
        os.close(fd)


def lease_held(where: Store | Path, tournament_id: int) -> bool:
    """Whether a live process holds tournament ``tournament_id``'s runner lease."""
    return lease_holder(where, tournament_id) is not None


def _try_lock(fd: int, kind: int) -> bool:
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return False
        raise StoreError(f"cannot lock a runner lease: {error.strerror}") from None
    return True


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, _PID_BYTES, 0).decode("ascii", "replace").split("\n")[0].strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def lease_note(where: Store | Path, tournament_id: int) -> str | None:
    """The reason the last runner left in the lease file (``TournamentLease.note``), if any.

    Meaningful only while no runner holds the lease (a new runner clears it).
    """
    try:
        data = lease_path(where, tournament_id).read_bytes()[: _PID_BYTES + _NOTE_BYTES + 2]
    except OSError:
        return None
    lines = data.decode("utf-8", "replace").split("\n")
    return lines[1].strip() or None if len(lines) > 1 else None
