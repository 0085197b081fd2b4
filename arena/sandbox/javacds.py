"""A class-data archive per Java bot version, built by the arena on its own JDK.

A Java bot spends most of its launch loading classes (grpc-java and Netty:
about 1,700). The JVM can map them from a CDS archive instead, but an archive
cannot ship in the bot: it is tied to the JDK build that wrote it and its dumps
are not reproducible (the version hash would change with every build). So the
arena makes one itself, outside the version hash:

* **training**: the bot is launched in its sandbox as usual, with
  ``JDK_JAVA_OPTIONS=-XX:ArchiveClassesAtExit=ARCHIVE_INSIDE`` (a dynamic
  archive on top of the JDK's default one); the JVM writes it when the bot
  exits after MatchOver, into the one file the sandbox lets it write
  (``launch_bot(writable_file=...)``, at most ``MAX_ARCHIVE_BYTES``), and the
  arena moves it to the version's shelf (``arena.conformance.training``);
* **use**: every later launch of that version gets the archive bound
  read-only at ``ARCHIVE_INSIDE`` and ``JDK_JAVA_OPTIONS=USE_OPTIONS``.
  The bot's own command line comes after these options, so a bot that says
  ``-Xshare:off`` or names its own archive wins.

A shelf is a directory per bot version (``<data>/java-cds/<bot>/<version>/``,
``shelf_dir``). An archive's file name, ``<key>.<size>.jsa``, holds its size
(JDK 17 checks a dynamic archive's length against its header only for a
static one: a truncated file is never offered) and a key over the JDK's
identity (its home, ``release`` file, and the size and mtime of ``libjvm.so``,
the default archive and the module image) and the size and mtime of every
file of the bot directory (the JVM refuses an archive whose jar changed
mtime): an upgraded JDK or a rebuilt directory finds no archive and launches
as it would without one, and training again replaces the old file (one
archive per version). All shelves together are kept under
``MAX_SHELVES_BYTES``, the least recently used removed first (a launch
touches the one it uses).

The archive is only ever given to the version that wrote it, in its own
sandbox: whatever a bot writes there can only change how that same bot
starts. The JVM validates an archive before it maps it (magic, header CRC
and every region's CRC under ``-XX:+VerifySharedSpaces``, the JVM build, the
base archive, the class path with the jar's size and mtime) and under
``-Xshare:auto`` starts without one it refuses, the JDK's default archive
still under it; only a file that starts as a dynamic archive is offered
(``DYNAMIC_MAGIC``). tests/kits/test_java_cds.py plays a garbage, corrupt,
truncated, foreign and mismatched archive.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
from pathlib import Path

from arena.sandbox.bwrap import java_home

ARCHIVE_INSIDE = "/run/kahuna/classes.jsa"
"""Where the archive appears in the sandbox (read-only; writable when training)."""
OPTIONS_ENV = "JDK_JAVA_OPTIONS"
"""Read by the ``java`` launcher only (JDK 9+), before the command line's own options."""
USE_OPTIONS = f"-XX:SharedArchiveFile={ARCHIVE_INSIDE} -Xshare:auto -XX:+VerifySharedSpaces"
"""VerifySharedSpaces: the JVM checks the CRC of the header and of every region before it
maps them (about 24 ms of CPU for a 15 MB archive); without it a corrupt archive with a
good header was mapped and the bot died before its Hello."""
DUMP_OPTIONS = f"-XX:ArchiveClassesAtExit={ARCHIVE_INSIDE}"
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
"""The largest archive kept (the kit's is about 15 MB); the training launch's file-size
limit is raised to this, for that launch only."""
MAX_SHELVES_BYTES = 2 * 1024 * 1024 * 1024
"""All archives of a data directory together; the least recently used go first."""
DYNAMIC_MAGIC = (0xF00BABA8).to_bytes(4, "little")
"""The first bytes of a dynamic (top) archive. Only such a file is offered: the JVM then
keeps the JDK's default archive under it whatever is wrong with it, while any other
file given as SharedArchiveFile is taken for the base and, refused, leaves the JVM
with no archive at all, which costs a bot more to start than no archive of ours."""
SHELVES_DIR_NAME = "java-cds"
SUFFIX = ".jsa"
_JDK_FILES = ("lib/server/libjvm.so", "lib/server/classes.jsa", "lib/modules")


def shelf_dir(data_dir: Path, bot: str, version: str) -> Path:
    """Where the archives of ``bot`` version ``version`` are kept."""
    return Path(data_dir) / SHELVES_DIR_NAME / bot / version


def jdk_identity(home: Path | None = None) -> str:
    """What names the JDK that runs the bots: its home, release file and build files.

    Computed at every call (a few stats): a JDK upgraded under a running arena is
    seen at its next launch."""
    home = home if home is not None else java_home()
    digest = hashlib.sha256(str(home).encode() + b"\0")
    with contextlib.suppress(OSError):
        digest.update((home / "release").read_bytes())
    for relative in _JDK_FILES:
        digest.update(relative.encode() + b"\0" + _stat_text(home / relative))
    return digest.hexdigest()


def archive_key(bot_dir: Path, home: Path | None = None) -> str:
    """The JDK's identity and the size and mtime of every file of ``bot_dir``."""
    digest = hashlib.sha256(jdk_identity(home).encode() + b"\0")
    for root, dirs, files in os.walk(bot_dir):
        dirs.sort()
        for name in sorted(files):
            path = Path(root) / name
            digest.update(str(path.relative_to(bot_dir)).encode() + b"\0" + _stat_text(path))
    return digest.hexdigest()[:24]


def _stat_text(path: Path) -> bytes:
    try:
        info = path.lstat()
    except OSError:
        return b"-\n"
    return f"{info.st_size} {info.st_mtime_ns}\n".encode()


def archive_path(shelf: Path, bot_dir: Path, size: int) -> Path:
    """The file an archive of ``size`` bytes for ``bot_dir`` on this JDK has on ``shelf``:
    ``<key>.<size>.jsa``. The size is in the name because the JVM (17) checks a
    dynamic archive's length against its header only for a static one: a
    truncated file it would map and fault on is never offered."""
    return shelf / f"{archive_key(bot_dir)}.{size}{SUFFIX}"


def usable_archive(shelf: Path, bot_dir: Path) -> Path | None:
    """The archive to give a launch of ``bot_dir``, if the shelf holds one for this JDK
    and these files, of the size its name says, that starts as a dynamic archive does;
    marked used (its mtime) for the pruning."""
    key = archive_key(bot_dir)
    try:
        candidates = list(shelf.glob(f"{key}.*{SUFFIX}"))
    except OSError:
        return None
    for path in candidates:
        size_text = path.name[len(key) + 1 : -len(SUFFIX)]
        try:
            info = path.lstat()
            if (not size_text.isdigit() or not stat.S_ISREG(info.st_mode)
                    or info.st_size != int(size_text) or not 0 < info.st_size <= MAX_ARCHIVE_BYTES):
                continue
            with path.open("rb") as stream:
                if stream.read(len(DYNAMIC_MAGIC)) != DYNAMIC_MAGIC:
                    continue
            os.utime(path)
        except OSError:
            continue
        return path
    return None


def keep_only(archive: Path) -> None:
    """Remove everything else on the archive's shelf (an older JDK's archive, older
    files', a copy left half done): one archive per version."""
    for other in archive.parent.iterdir():
        if other != archive and not other.is_dir():
            other.unlink(missing_ok=True)


def remove_shelf(shelf: Path) -> None:
    """Remove a version's archives (with the version)."""
    shutil.rmtree(shelf, ignore_errors=True)


def prune(shelves_root: Path, max_bytes: int = MAX_SHELVES_BYTES) -> list[Path]:
    """Remove the least recently used archives under ``shelves_root`` until all of them
    together are at most ``max_bytes``; what was removed."""
    found: list[tuple[float, int, Path]] = []
    for path in shelves_root.glob(f"*/*/*{SUFFIX}"):
        with contextlib.suppress(OSError):
            info = path.stat()
            found.append((info.st_mtime, info.st_size, path))
    total = sum(size for _, size, _ in found)
    removed: list[Path] = []
    for _, size, path in sorted(found):
        if total <= max_bytes:
            break
        path.unlink(missing_ok=True)
        total -= size
        removed.append(path)
    return removed
