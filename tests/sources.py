"""The project's own sources parsed for the tests that read its code (layers, imports).

CPython 3.11 keeps the counter that ``ast.parse`` checks as it builds a tree in one
place per interpreter, not per thread (python/cpython#106905): if the thread that is
parsing gives up the GIL midway, for a garbage collection whose finalizers run Python
or at a switch interval, and another thread with a deeper stack parses in the meantime
(3.11's traceback formatting does, to place its carets), the first parse fails with
"SystemError: AST constructor recursion depth mismatch". A test worker may still run
threads that an earlier test's servers left, so a parse here keeps the GIL: the
collector paused and no timed switch for the length of the parse.
"""

from __future__ import annotations

import ast
import gc
import sys
from pathlib import Path


def parse_source(path: Path) -> ast.Module:
    """``ast.parse`` of the file at ``path`` (UTF-8), safe beside other threads."""
    text = path.read_text(encoding="utf-8")
    collecting = gc.isenabled()
    interval = sys.getswitchinterval()
    gc.disable()
    sys.setswitchinterval(60.0)
    try:
        return ast.parse(text, filename=str(path))
    finally:
        sys.setswitchinterval(interval)
        if collecting:
            gc.enable()
