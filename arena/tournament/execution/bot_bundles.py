"""Bot versions as content-addressed bundles, and a node-local cache of them.

A bot version's name is the hash of its files (``arena.referee.botdir.content_hash``).
A cluster's driver packs each stored version's files once into a bundle (an
uncompressed tar, ``pack``) and puts it into the cluster's object store; a
node unpacks it into its own cache under that hash (``cached_bot``) and
checks the hash of what it finds there before every use: a directory that
no longer hashes to its name (a corrupted or tampered cache) is removed and
unpacked again from the bundle, which is fetched only then. The cache is
``$KAHUNA_RAY_CACHE`` (default: ``<tmp>/kahuna-ray-bots``). A lock file per
version keeps the matches of one node from unpacking the same version at once.

The cache holds the files bound into the sandboxes of the node's matches, so
only the node's user may write it: it is made mode 0700, and one that already
exists is used only when it is a directory (not a link) owned by this user and
writable by nobody else (``CacheError`` otherwise, naming the path and the fix).
Everything in it is opened through the directory's descriptor without
following links, so a path swapped after the check reaches nothing.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import io
import os
import posixpath
import shlex
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from arena.logs import get_logger
from arena.referee.botdir import content_hash

CACHE_ENV = "KAHUNA_RAY_CACHE"


class BundleError(RuntimeError):
    """A bundle that does not unpack into the version it claims to be."""


class CacheError(RuntimeError):
    """A cache directory someone else could write: not this user's, or open to others."""


def configured_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "kahuna-ray-bots"


def _fix(root: Path) -> str:
    return (
        f"remove it (rm -rf {shlex.quote(str(root))}) and let the node make it again, or"
        f" choose another directory (arena ray-worker --cache DIR, ${CACHE_ENV})"
    )


class NotOwnDirectory(Exception):
    """Why a directory that must be this user's alone is not: ``kind`` is "a symbolic
    link", "not a directory", "owned" (``info.st_uid``) or "writable" (``info.st_mode``)."""

    def __init__(self, kind: str, info: os.stat_result | None = None) -> None:
        super().__init__(kind)
        self.kind = kind
        self.info = info


def open_own_directory(path: Path) -> tuple[int, os.stat_result]:
    """A descriptor of directory ``path``, opened without following a link, and its
    status; NotOwnDirectory when it is a link or no directory, is owned by another user
    or is writable by its group or others; OSError when it cannot be opened. What another
    user could change inside it (a node's bots, Ray's sockets) is then this user's alone."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            kind = "a symbolic link" if os.path.islink(path) else "not a directory"
            raise NotOwnDirectory(kind) from None
        raise
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid():
            raise NotOwnDirectory("owned", info)
        if info.st_mode & 0o022:
            raise NotOwnDirectory("writable", info)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def open_root(root: Path) -> int:
    """A descriptor of cache directory ``root``, made mode 0700 if missing; CacheError
    if it is a link or not a directory, or owned by another user, or writable by its
    group or others."""
    root.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(root, 0o700)
    try:
        fd, _ = open_own_directory(root)
    except NotOwnDirectory as refused:
        info = refused.info
        if info is None:
            raise CacheError(f"bot cache {root} is {refused.kind}: {_fix(root)}") from None
        if refused.kind == "owned":
            raise CacheError(
                f"bot cache {root} is owned by uid {info.st_uid}, not by this node's user"
                f" (uid {os.geteuid()}): someone else could plant bots in it; {_fix(root)}"
            ) from None
        raise CacheError(
            f"bot cache {root} is writable by other users (mode"
            f" {stat.S_IMODE(info.st_mode):04o}): someone else could plant bots in it;"
            f" {_fix(root)}"
        ) from None
    except OSError as error:
        raise CacheError(f"cannot open the bot cache {root}: {error.strerror}") from None
    try:
        os.fchmod(fd, 0o700)
    except BaseException:
        os.close(fd)
        raise
    return fd


def cache_root() -> Path:
    """The node's cache directory, checked (``open_root``)."""
    root = configured_root()
    os.close(open_root(root))
    return root


def pack(directory: Path) -> bytes:
    """``directory``'s files (symlinks as links, no ``__pycache__``) as an uncompressed tar."""
    buffer = io.BytesIO()

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        parts = Path(info.name).parts
        if "__pycache__" in parts or info.name.endswith(".pyc"):
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for entry in sorted(directory.iterdir()):
            tar.add(entry, arcname=entry.name, filter=keep)
    return buffer.getvalue()


def checked_members(tar: tarfile.TarFile) -> list[tarfile.TarInfo]:
    """``tar``'s members if each is a file, directory or symlink that stays inside the
    directory it is unpacked into; BundleError naming the first that does not. (What
    the "data" extraction filter checks, for Pythons without filters: Debian 12's
    3.11.2; filters came with 3.11.4.)"""
    members = tar.getmembers()
    for member in members:
        path = PurePosixPath(member.name)
        if path.is_absolute() or ".." in path.parts:
            raise BundleError(f"bundle member {member.name!r} points outside its directory")
        if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
            raise BundleError(f"bundle member {member.name!r} is not a file, directory or link")
        target = PurePosixPath(member.linkname)
        if member.islnk() and (target.is_absolute() or ".." in target.parts):
            raise BundleError(f"bundle link {member.name!r} points outside its directory")
        if member.issym():
            link = posixpath.normpath(posixpath.join(str(path.parent), member.linkname))
            if posixpath.isabs(member.linkname) or link == ".." or link.startswith("../"):
                raise BundleError(f"bundle link {member.name!r} points outside its directory")
    return members


def _unpack(bundle: bytes, target: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(bundle), mode="r") as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(target, filter="data")
        else:
            tar.extractall(target, members=checked_members(tar))
    # The sandbox runs bots as another user: everything world-readable, directories
    # and executables world-executable.
    for root, dirs, files in os.walk(target):
        for name in dirs:
            os.chmod(Path(root) / name, 0o755)
        for name in files:
            path = Path(root) / name
            if path.is_symlink():
                continue
            mode = path.stat().st_mode
            executable = mode & stat.S_IXUSR
            os.chmod(path, 0o755 if executable else 0o644)
    os.chmod(target, 0o755)


def cached_bot(version: str, fetch: Callable[[], bytes], root: Path | None = None) -> Path:
    """The node-local directory of bot ``version``, checked against its hash.

    Unpacks ``fetch()`` (the version's bundle) when the cache lacks it or holds a
    directory whose files no longer hash to ``version`` (logged, removed first).
    BundleError when the bundle itself is not that version; CacheError when the cache
    directory or the version's lock file could be someone else's (``open_root``).
    """
    if not version or "/" in version or version.startswith("."):
        raise BundleError(f"bot version {version!r} is not a content hash")
    root = configured_root() if root is None else root
    fd = open_root(root)
    try:
        return _cached(root, fd, version, fetch)
    finally:
        os.close(fd)


def _cached(root: Path, fd: int, version: str, fetch: Callable[[], bytes]) -> Path:
    here = Path(f"/proc/self/fd/{fd}")  # the directory checked, whatever `root` names now
    lock_name = f".{version}.lock"
    try:
        lock_fd = os.open(
            lock_name, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
            dir_fd=fd,
        )  # fmt: skip
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise CacheError(
                f"lock file {root / lock_name} of the bot cache is a symbolic link: {_fix(root)}"
            ) from None
        raise
    with os.fdopen(lock_fd, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            found_type = os.lstat(version, dir_fd=fd).st_mode
        except FileNotFoundError:
            found_type = None
        if found_type is not None:
            found = content_hash(here / version) if stat.S_ISDIR(found_type) else "not a directory"
            if found == version:
                return root / version
            get_logger(version=version).warning(
                "bot_cache_corrupt", directory=str(root / version), hash=found
            )
            if stat.S_ISDIR(found_type):
                shutil.rmtree(version, dir_fd=fd)
            else:
                os.unlink(version, dir_fd=fd)
        staging = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=here))
        try:
            _unpack(fetch(), staging)
            found = content_hash(staging)
            if found != version:
                raise BundleError(f"the bundle of bot version {version} hashes to {found}")
            os.rename(staging.name, version, src_dir_fd=fd, dst_dir_fd=fd)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        get_logger(version=version).info("bot_cache_filled", directory=str(root / version))
        return root / version
