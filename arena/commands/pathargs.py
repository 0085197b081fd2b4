"""Path arguments of the commands: an empty one is refused, never read as ``.``, and so
is one no file system takes.

``Path("")`` is the current directory, so ``--out "$OUT"`` with OUT unset would
write the export's files into wherever the command was run (replacing any of
the same name), and ``arena bot add "$BOT"`` would store it: argparse refuses
the empty value instead (exit 2), as it does an empty ``--data-dir``. A path
longer than Linux takes (a name of more than ``NAME_MAX_BYTES``, the whole more
than ``PATH_MAX_BYTES``) is refused the same way, saying which limit, rather
than failing wherever the command first touches it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

Kind = TypeVar("Kind", bound=Callable[[str], object])

ANY_BYTES: set[Callable[[str], object]] = set()
"""The argument types whose values may hold bytes that are not UTF-8, as a Linux file
name may: paths, and words passed on to another program. Every other argument (a name,
a number, an address) is text, and the command line refuses such bytes in it."""


def any_bytes(kind: Kind) -> Kind:
    """Mark ``kind``, an argument type, as one of ``ANY_BYTES``."""
    ANY_BYTES.add(kind)
    return kind


EMPTY = "is empty (an unset variable?): give a path"
NAME_MAX_BYTES = 255
"""The longest file or directory name Linux file systems take (NAME_MAX)."""
PATH_MAX_BYTES = 4095
"""The longest path the kernel takes (PATH_MAX, less its terminating NUL)."""


@any_bytes
def given(text: str) -> str:
    """``text`` as given, unless it is empty or blank or too long a path
    (ArgumentTypeError)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(EMPTY)
    if (problem := too_long(text)) is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def too_long(text: str) -> str | None:
    """Why ``text`` cannot be a path on Linux for its length (None: it can)."""
    encoded = os.fsencode(text)
    if len(encoded) > PATH_MAX_BYTES:
        return f"is {len(encoded)} bytes long; a path is at most {PATH_MAX_BYTES}"
    longest = max(len(name) for name in encoded.split(b"/"))
    if longest > NAME_MAX_BYTES:
        return (f"has a name of {longest} bytes in it; a file or directory name is at most"
                f" {NAME_MAX_BYTES}")  # fmt: skip
    return None


@any_bytes
def given_path(text: str) -> Path:
    """``given``, as a Path."""
    return Path(given(text))


@any_bytes
def passed_on(text: str) -> str:
    """``text`` as it is: words handed to another program (a command line, its flags)."""
    return text
