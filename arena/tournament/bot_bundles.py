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
"""

from __future__ import annotations

import fcntl
import io
import os
import posixpath
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


def cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "kahuna-ray-bots"


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
    BundleError when the bundle itself is not that version.
    """
    root = cache_root() if root is None else root
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o755)
    target = root / version
    with open(root / f".{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_dir():
            found = content_hash(target)
            if found == version:
                return target
            get_logger(version=version).warning(
                "bot_cache_corrupt", directory=str(target), hash=found
            )
            shutil.rmtree(target)
        staging = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=root))
        try:
            _unpack(fetch(), staging)
            found = content_hash(staging)
            if found != version:
                raise BundleError(f"the bundle of bot version {version} hashes to {found}")
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        get_logger(version=version).info("bot_cache_filled", directory=str(target))
        return target
