"""Path arguments of the commands: an empty one is refused, never read as ``.``.

``Path("")`` is the current directory, so ``--out "$OUT"`` with OUT unset would
write the export's files into wherever the command was run (replacing any of
the same name), and ``arena bot add "$BOT"`` would store it: argparse refuses
the empty value instead (exit 2), as it does an empty ``--data-dir``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

EMPTY = "is empty (an unset variable?): give a path"


def given(text: str) -> str:
    """``text`` as given, unless it is empty or blank (ArgumentTypeError)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(EMPTY)
    return text


def given_path(text: str) -> Path:
    """``given``, as a Path."""
    return Path(given(text))
