"""The staging of a launch's bind sources (arena/sandbox/staging.py), without a sandbox."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from arena.sandbox.staging import stage_sources
from arena.testing.other_user import tried_as_nobody


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


def _read_as_another_user(path: Path) -> str:
    """What reading ``path`` gives a process of uid 65534: its text or the error's name."""
    return tried_as_nobody([("read", path.read_text)]).get("read", "")


@pytest.mark.slow  # another user's process: a fork
def test_a_launchs_staged_bot_is_closed_to_other_users(sources: tuple[Path, Path, Path]) -> None:
    """bwrap's command line names the staging directory, and any user of the machine
    reads it in /proc: the directory itself keeps them from the bot's files, which are
    world-readable (for the bot's uid)."""
    bot, sock, _ = sources
    (bot / "bot.py").chmod(0o644)
    root = Path(tempfile.mkdtemp(prefix="kahuna-stage-test-"))  # a way in, as /run's is
    try:
        root.chmod(0o711)
        staged = stage_sources(bot, sock, (), root=root)
        assert stat.S_IMODE(staged.directory.stat().st_mode) == 0o700
        if os.geteuid() == 0:
            assert _read_as_another_user(staged.bot_dir / "bot.py") == "PermissionError"
            staged.directory.chmod(0o711)  # the control: the directory is all that keeps out
            assert _read_as_another_user(staged.bot_dir / "bot.py") == "pass\n"
        staged.remove()
    finally:
        shutil.rmtree(root, ignore_errors=True)
