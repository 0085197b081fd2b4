"""A host uid of its own for every running bot, from a pool shared by every arena process.

Per-user kernel limits (RLIMIT_NPROC, inotify instances and watches, POSIX
message-queue bytes, locked memory, user namespaces) are counted per host uid.
Were every bot the same uid, one bot could use them all up for every other bot
on the host. So each sandboxed launch takes a uid from a pool and gives it
back at teardown.

A uid is held by an exclusive ``flock`` on ``<UID_DIR>/uid-<n>.lock`` (the way
``arena.store.lease`` holds tournament leases): any process on the host that
launches bots (tournament workers, servers, ``arena match``) takes uids from
the same files, and the kernel drops the lock when the holder's descriptor
closes, so a launcher that dies in any way leaves no uid taken. The descriptor
is close-on-exec and never passed to a bot. Lock files are never unlinked
(unlinking a locked file lets a second holder lock a new file of the same
name).
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import weakref
from dataclasses import dataclass
from pathlib import Path

from arena.sandbox.limits import SandboxConfigError, SandboxUnavailableError

UID_RANGE_ENV = "KAHUNA_SANDBOX_UIDS"
"""Environment variable overriding the pool: ``FIRST-LAST`` (inclusive)."""
UID_DIR_ENV = "KAHUNA_SANDBOX_UID_DIR"
"""Environment variable overriding where the lock files live."""
DEFAULT_UID_RANGE = (200000, 265535)
"""65,536 uids that no Debian account uses (system accounts stop at 65533)."""
DEFAULT_UID_DIR = Path("/run/kahuna-arena/uids")
"""On tmpfs: cleared at boot, shared by every arena process of the host."""


@dataclass(frozen=True)
class UidPool:
    first: int
    last: int
    lock_dir: Path

    def __post_init__(self) -> None:
        if not 0 < self.first <= self.last < 2**32 - 1:
            raise SandboxConfigError(f"sandbox uid range {self.first}-{self.last} is not valid")
        if self.first <= 65534 <= self.last:
            raise SandboxConfigError("sandbox uid range must not include 65534 (nobody)")

    @property
    def size(self) -> int:
        return self.last - self.first + 1


def configured_pool() -> UidPool:
    """The pool from the environment (``KAHUNA_SANDBOX_UIDS``, ``..._UID_DIR``) or the defaults."""
    text = os.environ.get(UID_RANGE_ENV, "").strip()
    first, last = DEFAULT_UID_RANGE
    if text:
        try:
            first_text, last_text = text.split("-", 1)
            first, last = int(first_text), int(last_text)
        except ValueError as exc:
            raise SandboxConfigError(
                f"{UID_RANGE_ENV}={text!r}: expected FIRST-LAST, e.g. 200000-265535"
            ) from exc
    lock_dir = Path(os.environ.get(UID_DIR_ENV) or DEFAULT_UID_DIR)
    return UidPool(first, last, lock_dir)


class UidLease:
    """A held uid; ``release`` gives it back (idempotent)."""

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self._fd: int | None = fd
        _held.add(self)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


_held: weakref.WeakSet[UidLease] = weakref.WeakSet()


def _close_in_child() -> None:
    """A forked child (a worker) shares the lock's open file description: were it
    to keep it, the uid would stay taken until the child exits."""
    for lease in list(_held):
        lease.release()


os.register_at_fork(after_in_child=_close_in_child)


def allocate_uid(pool: UidPool | None = None) -> UidLease:
    """Lock the first free uid of the pool, starting from a random one (so that
    concurrent launchers rarely try the same files); raise if all are taken."""
    pool = pool if pool is not None else configured_pool()
    try:
        pool.lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise SandboxUnavailableError(
            f"uid pool: cannot create lock directory {pool.lock_dir}: {exc.strerror}"
        ) from exc
    start = secrets.randbelow(pool.size)
    for step in range(pool.size):
        uid = pool.first + (start + step) % pool.size
        path = pool.lock_dir / f"uid-{uid}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                continue
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return UidLease(uid, fd)
    raise SandboxUnavailableError(
        f"uid pool: all {pool.size} uids {pool.first}-{pool.last} are in use"
    )


def uid_is_held(uid: int, pool: UidPool | None = None) -> bool:
    """Whether some open descriptor (in any process) holds ``uid``'s lock."""
    pool = pool if pool is not None else configured_pool()
    path = pool.lock_dir / f"uid-{uid}.lock"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
