"""The staging of a launch's bind sources (arena/sandbox/staging.py), without a sandbox."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.sandbox.staging import stage_sources


@pytest.fixture
def sources(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bot directory, the referee's socket (a file stands for it: it is linked by its
    inode all the same) and a stage root under ``tmp_path``."""
    bot = tmp_path / "bots" / "secret-bot-name"
    bot.mkdir(parents=True)
    (bot / "bot.py").write_text("pass\n")
    sock = tmp_path / "referee.sock"
    sock.write_text("")
    return bot, sock, tmp_path / "stage"


def test_a_tree_outside_the_stage_root_is_linked_under_a_neutral_name(
    sources: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    bot, sock, root = sources
    tree = tmp_path / "site" / "kahuna_bot"
    tree.mkdir(parents=True)
    (tree / "__init__.py").write_text("")
    staged = stage_sources(bot, sock, ((tree, "/opt/kahuna/sdk"),), root=root)
    ((source, inside),) = staged.extra_ro_binds
    assert (source, inside) == (staged.directory / "ro0", "/opt/kahuna/sdk")
    assert os.path.samefile(source / "__init__.py", tree / "__init__.py")
    staged.remove()
    assert (tree / "__init__.py").exists()


def test_a_tree_inside_the_stage_root_is_bound_from_where_it_is(
    sources: tuple[Path, Path, Path],
) -> None:
    """A compiled copy made once per process in the stage root (``compiled_tree``) has a
    neutral name already: it is not linked again for every launch."""
    bot, sock, root = sources
    tree = root / f"{os.getpid()}-bytecode-0123abcd" / "python"
    (tree / "kahuna_bot").mkdir(parents=True)
    (tree / "kahuna_bot" / "__init__.py").write_text("")
    other = root.parent / "gen"
    other.mkdir()
    staged = stage_sources(
        bot, sock, ((tree, "/opt/kahuna/sdk"), (other, "/opt/kahuna/proto")), root=root
    )
    assert staged.extra_ro_binds == (
        (tree, "/opt/kahuna/sdk"),
        (staged.directory / "ro1", "/opt/kahuna/proto"),
    )
    assert not (staged.directory / "ro0").exists()
    staged.remove()
    assert (tree / "kahuna_bot" / "__init__.py").exists()  # the launch's removal leaves it
