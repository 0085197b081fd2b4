"""Is a new bot version only a rebuild? (`arena bot add` warns when it is.)

A bot's version is a hash of its files (``arena.referee.botdir``), so a
rebuild that is not byte for byte the same makes a new version with a fresh
rating. Two versions whose files are the same but for some binary files
(ELF executables, jars, class files: anything with a NUL byte in its first
8 KiB), with no file added or removed, are most likely the same source built
twice; sample_bots/README.md says how to make builds reproducible.
"""

from __future__ import annotations

import filecmp
import os
from pathlib import Path

BINARY_SNIFF_BYTES = 8192
SKIPPED_DIRS = frozenset({"__pycache__"})
"""As the version hash skips them (``arena.referee.botdir``)."""


def _entries(directory: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(name for name in dirs if name not in SKIPPED_DIRS)
        for name in files:
            if not name.endswith(".pyc"):
                path = Path(root) / name
                found[path.relative_to(directory).as_posix()] = path
    return found


def _same(first: Path, second: Path) -> bool:
    if first.is_symlink() or second.is_symlink():
        both = first.is_symlink() and second.is_symlink()
        return both and os.readlink(first) == os.readlink(second)
    return filecmp.cmp(first, second, shallow=False)


def is_binary(path: Path) -> bool:
    if path.is_symlink():
        return False
    with path.open("rb") as stream:
        return b"\0" in stream.read(BINARY_SNIFF_BYTES)


def binary_only_changes(old: Path, new: Path) -> tuple[str, ...]:
    """The files (relative paths) that differ between bot directories ``old`` and
    ``new`` when every one of them is a binary file present in both; () when the
    directories are the same or differ in anything else."""
    before, after = _entries(old), _entries(new)
    if before.keys() != after.keys():
        return ()
    changed = [name for name in sorted(after) if not _same(before[name], after[name])]
    if not all(is_binary(after[name]) and is_binary(before[name]) for name in changed):
        return ()
    return tuple(changed)
