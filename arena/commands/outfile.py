"""An output file written whole or not at all (`--records`, `--out`, `-o`).

The text goes to a hidden ``.NAME.partial`` beside the file, which is renamed
over it once written: a full disk (or any error) leaves no truncated file for
`arena replay` to call malformed, and a file already there as it was.
"""

from __future__ import annotations

from pathlib import Path


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
