"""An output file written whole or not at all (`--records`, `--out`, `-o`).

The text goes to a hidden ``.NAME.partial`` beside the file, which is renamed
over it once written: a full disk (or any error) leaves no truncated file for
`arena replay` to call malformed, and a file already there as it was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO


def write_whole(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` by way of a hidden partial file in the same
    directory, renamed over ``path`` once written; OSError as raised, the partial file
    removed. A ``path`` that is there and not a regular file (``/dev/stdout``, a fifo)
    is written directly: a rename would replace it."""
    if path.exists() and not path.is_file():
        path.write_text(text, encoding="utf-8")
        return
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    except OSError:
        partial.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def written_whole(path: Path) -> Iterator[TextIO]:
    """``write_whole`` for text written a piece at a time (a file too large to hold):
    the partial file, open for writing, renamed over ``path`` once the block ends
    without an error, and removed when it raises."""
    if path.exists() and not path.is_file():
        with path.open("w", encoding="utf-8") as out:
            yield out
        return
    partial = path.with_name(f".{path.name}.partial")
    try:
        with partial.open("w", encoding="utf-8") as out:
            yield out
        partial.replace(path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
