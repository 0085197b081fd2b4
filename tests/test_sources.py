"""tests/sources.py: a parse of our own files that leaves the interpreter as it found it."""

from __future__ import annotations

import ast
import gc
import sys
from pathlib import Path

import pytest

from tests.sources import parse_source


@pytest.mark.parametrize("collecting", [True, False])
def test_a_parse_gives_the_tree_and_restores_the_collector_and_switch_interval(
    collecting: bool,
) -> None:
    path = Path(__file__)
    interval = sys.getswitchinterval()
    was = gc.isenabled()
    try:
        (gc.enable if collecting else gc.disable)()
        tree = parse_source(path)
        assert ast.dump(tree) == ast.dump(ast.parse(path.read_text(encoding="utf-8")))
        assert gc.isenabled() is collecting
        assert sys.getswitchinterval() == interval
    finally:
        (gc.enable if was else gc.disable)()


def test_a_file_that_does_not_parse_names_itself_and_restores_both(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n", encoding="utf-8")
    interval = sys.getswitchinterval()
    with pytest.raises(SyntaxError) as raised:
        parse_source(broken)
    assert raised.value.filename == str(broken)
    assert gc.isenabled() and sys.getswitchinterval() == interval
