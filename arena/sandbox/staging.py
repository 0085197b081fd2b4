"""Neutral sources for a bot's bind mounts.

``/proc/self/mountinfo`` prints each bind mount's source as its path within
the source's filesystem, and no mount option changes that. So the sandbox
never binds a host path that says anything: per launch, the bot directory,
the referee socket and the extra read-only trees are put together in a
staging directory with a random name (``<root>/<pid>-<random>/``) on the same
filesystem, made of hard links (a copy only where a hard link is refused,
e.g. across filesystems), and the mounts come from there. What a bot reads in
mountinfo is then ``/run/kahuna-arena/stage/<pid>-<random>/bot`` and the like:
no data directory, match id, bot name or installation path. The staging
directory is removed when the bot is released; one left by a killed arena is
removed by the next launch (its pid is gone).

An extra tree that is already inside the staging root (``<root>/<pid>-<random>/``:
the compiled copies of the SDK, the generated code and the engine that
``arena.referee.bytecode.compiled_tree`` makes there once per arena process) says
no more than a launch's own directory, and is bound from where it is: linking its
few hundred files for every launch would cost the launcher more CPU than the rest
of the staging.

The staging directory also holds an empty file, ``empty``: a Python bot's
sandbox binds it over each of the host's ``.pth`` start-up hooks
(``arena.sandbox.bwrap.python_start_hooks``).

A launch may also get one **writable file** (a Java class-data archive the
JVM writes at exit, arena/sandbox/javacds.py): made empty in the staging
directory, owned by the bot's uid, bound read-write; the bot can write that
one file and nothing else outside its /tmp, no larger than its file-size
limit. The arena takes it (``take_written``) once the bot has exited.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from arena.logs import get_logger

ROOT_STAGE_DIR = Path("/run/kahuna-arena/stage")


def stage_root() -> Path:
    """As root a fixed neutral directory; otherwise one private to our uid."""
    if os.geteuid() == 0:
        return ROOT_STAGE_DIR
    return Path(tempfile.gettempdir()) / f"kahuna-arena-{os.geteuid()}" / "stage"


@dataclass(frozen=True)
class StagedSources:
    """Where a launch's mounts come from; ``remove`` deletes the links only."""

    directory: Path
    bot_dir: Path
    socket_path: Path
    extra_ro_binds: tuple[tuple[Path, str], ...]
    writable: Path | None = None
    """The one file the bot may write (None: none)."""
    empty: Path | None = None
    """An empty file, bound read-only over the host's Python start-up hooks (``.pth``)."""

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def stage_sources(
    bot_dir: Path,
    socket_path: Path,
    extra_ro_binds: tuple[tuple[Path, str], ...],
    *,
    root: Path | None = None,
    writable_owner: int | None = None,
) -> StagedSources:
    """Link ``bot_dir``, ``socket_path`` and each extra source into a fresh staging dir;
    ``writable_owner``: also make an empty file that uid (the bot's) may write."""
    base = root if root is not None else stage_root()
    sweep_stale_once(base)
    base.mkdir(parents=True, exist_ok=True, mode=0o711)
    neutral = base.resolve()
    directory = base / f"{os.getpid()}-{secrets.token_hex(8)}"
    # Closed to everyone else: bwrap's command line, which any user of the machine may
    # read in /proc, names this directory, and the bot's files in it are world-readable
    # (for the bot's uid). The mounts are made by bwrap; the bot never walks this path.
    directory.mkdir(mode=0o700)
    try:
        bot = directory / "bot"
        link_tree(bot_dir, bot)
        socket = directory / "referee.sock"
        _link_socket(socket_path, socket)
        extras: list[tuple[Path, str]] = []
        for number, (source, inside) in enumerate(extra_ro_binds):
            if source.is_relative_to(neutral):  # made here for this process: a neutral name
                extras.append((source, inside))
                continue
            staged = directory / f"ro{number}"
            if source.is_dir():
                link_tree(source, staged)
            else:
                _link_file(source, staged)
            extras.append((staged, inside))
        writable = None if writable_owner is None else _writable_file(directory, writable_owner)
        empty = directory / "empty"
        os.close(os.open(empty, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644))
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return StagedSources(directory, bot, socket, tuple(extras), writable, empty)


def _writable_file(directory: Path, owner: int) -> Path:
    path = directory / "written"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        if owner != os.geteuid():
            os.fchown(fd, owner, owner)
    finally:
        os.close(fd)
    return path


def take_written(staged: StagedSources, dest: Path, max_bytes: int) -> int | None:
    """Move what the bot wrote into its writable file to ``dest`` (replacing it);
    the size, or None when it wrote nothing or more than ``max_bytes`` (then
    ``dest`` is left alone). Call once the bot's processes are gone."""
    source = staged.writable
    if source is None:
        return None
    try:
        size = source.lstat().st_size
    except FileNotFoundError:
        return None
    if not 0 < size <= max_bytes or not source.is_file() or source.is_symlink():
        return None
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f".{dest.name}.{secrets.token_hex(4)}.partial")
    try:
        shutil.copyfile(source, partial)  # the staging root may be another filesystem
        with open(partial, "rb") as stream:
            os.fsync(stream.fileno())
        os.chmod(partial, 0o644)
        os.replace(partial, dest)
    finally:
        partial.unlink(missing_ok=True)
    return size


def link_tree(source: Path, dest: Path) -> None:
    """``dest`` holds what ``source`` holds: directories made with their modes,
    files hard-linked (copied where a link is refused), symlinks recreated with
    their text. Sockets, FIFOs and devices are left out."""
    os.mkdir(dest)
    for root, dirs, files in os.walk(source, followlinks=False):
        here = Path(root)
        there = dest / here.relative_to(source)
        for name in dirs:
            path = here / name
            if path.is_symlink():
                os.symlink(os.readlink(path), there / name)
            else:
                os.mkdir(there / name)
        for name in files:
            path = here / name
            if path.is_symlink():
                os.symlink(os.readlink(path), there / name)
            elif path.is_file():
                _link_file(path, there / name)
        # its own mode, writable by us so that ``remove`` can delete what is inside
        os.chmod(there, (here.stat().st_mode & 0o7777) | 0o700)


def _link_file(source: Path, dest: Path) -> None:
    try:
        os.link(source, dest, follow_symlinks=True)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EACCES, errno.EMLINK):
            raise
        shutil.copy2(source, dest)


def _link_socket(source: Path, dest: Path) -> None:
    """A Unix socket is found by its inode, so a hard link reaches the same
    listener. Across filesystems there is no neutral name: bind the original."""
    try:
        os.link(source.resolve(), dest)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        os.symlink(source.resolve(), dest)  # bwrap follows it: the host path stays visible
        get_logger().warning("stage_socket_not_linked", reason="another filesystem")


@functools.cache
def sweep_stale_once(base: Path) -> None:
    sweep_stale(base)


def sweep_stale(base: Path) -> int:
    """Remove staging directories whose arena process is gone; returns how many."""
    removed = 0
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(base):
            pid_text = entry.name.split("-", 1)[0]
            if not pid_text.isdigit() or _alive(int(pid_text)):
                continue
            shutil.rmtree(entry.path, ignore_errors=True)
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
