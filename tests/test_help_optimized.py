"""Every help text survives `python -OO`, which strips docstrings: no code reads one.

A command's help is a text constant of its module, never its docstring: under
`-OO` (or `PYTHONOPTIMIZE=2`, as some packagers run) ``__doc__`` is None, and
a help built from it loses its description or fails outright.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.cli import build_parser
from tests.parsers import every_parser
from tests.sources import parse_source

ROOT = Path(__file__).resolve().parent.parent
READ_FROM = ("arena", "scripts", "sample_bots")

DUMP = "\n".join([
    "import json, sys",
    "from tests.test_help_optimized import helps",
    "json.dump(helps(), sys.stdout)",
])


def _docstring_reads(tree: ast.Module) -> Iterator[int]:
    """The lines of ``tree`` that read a ``__doc__``."""
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
        if name == "__doc__" and isinstance(node, ast.Name | ast.Attribute):
            yield node.lineno


def helps() -> dict[str, str]:
    """Every (sub-)command's help, as this process builds it."""
    return {path: parser.format_help() for path, parser in every_parser(build_parser())}


def test_no_code_reads_a_docstring() -> None:
    found = [f"{path.relative_to(ROOT)}:{line}"
             for folder in READ_FROM for path in sorted((ROOT / folder).rglob("*.py"))
             for line in _docstring_reads(parse_source(path))]  # fmt: skip
    assert not found, "read a __doc__ (None under python -OO):\n" + "\n".join(found)


def test_the_scan_finds_a_docstring_read() -> None:
    """The scan's control: both ways of reading a docstring are found."""
    tree = ast.parse("def f():\n    'x'\nA = __doc__\nB = f.__doc__\n")
    assert list(_docstring_reads(tree)) == [3, 4]


@pytest.mark.slow
def test_every_help_is_the_same_under_python_oo() -> None:
    """`python -OO -m arena ... --help` prints what the help prints with docstrings kept
    (the remote commands' exit-status table and every description included)."""
    done = subprocess.run(
        [sys.executable, "-OO", "-c", DUMP], capture_output=True, text=True, cwd=ROOT,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    optimized = json.loads(done.stdout)
    kept = helps()
    assert set(optimized) == set(kept)
    differ = [path for path in kept if optimized[path] != kept[path]]
    assert not differ, f"help differs under -OO: {differ}"
    assert "the exit status says which" in optimized["arena remote tournament list"]
