"""What a bot can learn of the host's layout from /proc."""

from __future__ import annotations

import os
import re
import socket
import sys
from pathlib import Path

import pytest

from arena.referee.bytecode import compiled_tree
from arena.resources import PYTHON_BOT_MOUNTS
from arena.sandbox import BotProcess, SandboxLimits, launch_bot, process
from arena.sandbox.bwrap import ETC_FILES, python_start_hooks, runtime_trees
from arena.sandbox.staging import StagedSources, stage_root

from .conftest import Harness

pytestmark = pytest.mark.slow  # every test here starts a process or a server

PROBE = """
import os
print("BEGIN-MOUNTINFO")
print(open("/proc/self/mountinfo").read(), end="")
print("END-MOUNTINFO")
for fd in (0, 1, 2):
    print(f"fd{fd}", os.readlink(f"/proc/self/fd/{fd}"))
print("cwd", os.getcwd())
"""
# mount roots bwrap makes itself: its tmpfs root, deleted data files, /dev nodes
BWRAP_OWN = re.compile(r"^/(newroot|bindfile\S*|irq|bus|null|zero|full|random|urandom|tty)$")
# a staged source: <stage root>/<pid>-<16 hex>/(bot|referee.sock|ro<N>), seen from its filesystem
STAGED = re.compile(r"(^|/)stage/\d+-[0-9a-f]{16}/(bot|referee\.sock|ro\d+|empty)$")
# a tree compiled once per arena process in the stage root (arena/referee/bytecode.py)
COMPILED = re.compile(r"(^|/)stage/\d+-bytecode-[0-9a-f]{8}/(python|gen|kahuna)$")


def _probe(
    harness: Harness, bot_dir: Path, socket_path: Path, output: Path, *, compiled: bool = False
) -> tuple[BotProcess, Path]:
    trees = [(mount.host_dir(), mount.inside) for mount in PYTHON_BOT_MOUNTS]
    if compiled:  # as the referee binds them
        trees = [(compiled_tree(host), inside) for host, inside in trees]
    bot = launch_bot(
        bot_dir=bot_dir,
        command=["python3", "-c", PROBE, harness.marker],
        runtime="python",
        env={},
        socket_path=socket_path,
        limits=SandboxLimits(),
        extra_ro_binds=trees,
        stderr_path=output,
    )
    harness.launched.append(bot)
    return bot, output


def _mount_roots(text: str) -> set[str]:
    lines = text.splitlines()
    mountinfo = lines[lines.index("BEGIN-MOUNTINFO") + 1 : lines.index("END-MOUNTINFO")]
    return {line.split()[3] for line in mountinfo}


def _unexplained_roots(roots: set[str]) -> set[str]:
    """Mount roots (mountinfo's 4th column: a bind source's path within its
    filesystem) that are neither system paths bound at their own place, the
    runtime tree (mounted at its own path, so ``sys.prefix`` names it anyway),
    bwrap's own, nor a neutral staged source."""
    trees, _ = runtime_trees("python")
    allowed = {
        "/",
        "/usr",
        *ETC_FILES,
        *(str(Path(p).resolve()) for p in ETC_FILES),
        *(str(tree) for tree in trees),
        str(Path(sys.base_prefix).resolve()),
    }
    neutral = {r for r in roots if BWRAP_OWN.match(r) or STAGED.search(r)}
    return roots - allowed - neutral


def _opponent(tmp_path: Path) -> tuple[Path, Path, socket.socket]:
    """A second bot's directory and socket, named after an identifier that must not leak."""
    home = tmp_path / "bots" / "opponent-7f3a9c"
    home.mkdir(parents=True)
    home.chmod(0o755)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = tmp_path / "opponent-7f3a9c.sock"
    listener.bind(str(path))
    listener.listen(1)
    return home, path, listener


def test_mountinfo_names_no_host_path_of_this_bot_or_its_opponent(
    harness: Harness, tmp_path: Path
) -> None:
    home, other_socket, listener = _opponent(tmp_path)
    try:
        opponent, _ = _probe(harness, home, other_socket, tmp_path / "opponent.out")
        bot, output = _probe(harness, harness.bot_dir, harness.socket_path, tmp_path / "bot.out")
        assert bot.wait(20) == 0, output.read_text()
        text = output.read_text()
        roots = _mount_roots(text)
        assert not _unexplained_roots(roots), roots
        staged = {root for root in roots if STAGED.search(root)}
        masks = {root for root in staged if root.endswith("/empty")}  # Python's start-up hooks
        assert len(masks) == (1 if python_start_hooks() else 0)
        assert len(staged - masks) == 2 + len(PYTHON_BOT_MOUNTS)
        for secret in (
            str(tmp_path),
            "opponent-7f3a9c",
            str(harness.socket_path.parent),
            *(str(m.host_dir()) for m in PYTHON_BOT_MOUNTS),
        ):
            assert secret not in text
        assert opponent.wait(20) == 0
    finally:
        listener.close()


def test_the_compiled_trees_are_bound_from_the_stage_under_neutral_names(
    harness: Harness, tmp_path: Path
) -> None:
    """The referee's compiled SDK, generated code and engine are bound from where they
    were made, once per process, in the stage root: mountinfo names no host path."""
    bot, output = _probe(
        harness, harness.bot_dir, harness.socket_path, tmp_path / "bot.out", compiled=True
    )
    assert bot.wait(20) == 0, output.read_text()
    text = output.read_text()
    roots = _mount_roots(text)
    compiled = {root for root in roots if COMPILED.search(root)}
    assert len(compiled) == len(PYTHON_BOT_MOUNTS), roots
    assert not _unexplained_roots(roots - compiled), roots
    for secret in (str(tmp_path), str(harness.socket_path.parent),
                   *(str(m.host_dir()) for m in PYTHON_BOT_MOUNTS)):  # fmt: skip
        assert secret not in text


def test_control_unstaged_binds_show_the_host_paths(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: bound from their own paths, the sources show."""

    def unstaged(
        bot_dir: Path, socket_path: Path, extra: tuple[tuple[Path, str], ...],
        writable_owner: int | None = None,
    ) -> StagedSources:
        return StagedSources(tmp_path / "nothing-to-remove", bot_dir, socket_path, extra)

    monkeypatch.setattr(process, "stage_sources", unstaged)
    bot, output = _probe(harness, harness.bot_dir, harness.socket_path, tmp_path / "bot.out")
    assert bot.wait(20) == 0, output.read_text()
    roots = _mount_roots(output.read_text())
    assert str(harness.bot_dir.resolve()) in _unexplained_roots(roots)
    assert str(harness.socket_path.resolve()) in _unexplained_roots(roots)


def test_staged_sources_are_removed_with_the_bot(harness: Harness, tmp_path: Path) -> None:
    before = set(stage_root().iterdir()) if stage_root().exists() else set()
    bot, output = _probe(harness, harness.bot_dir, harness.socket_path, tmp_path / "bot.out")
    assert bot.wait(20) == 0, output.read_text()
    assert (harness.bot_dir / "bot.txt").read_text() == "the bot's own file\n"
    bot.kill()
    mine = {p for p in stage_root().iterdir() if p.name.startswith(f"{os.getpid()}-")}
    assert not mine - before
    assert harness.socket_path.exists() and (harness.bot_dir / "bot.txt").exists()


def test_output_descriptors_and_mounts_name_no_arena_data_path(
    harness: Harness, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data_dir = tmp_path_factory.mktemp("arena-data")  # where the referee keeps bot output
    output = data_dir / "bot0-1.stderr"
    bot = launch_bot(
        bot_dir=harness.bot_dir,
        command=["python3", "-c", PROBE, harness.marker],
        runtime="python",
        env={},
        socket_path=harness.socket_path,
        limits=SandboxLimits(),
        stderr_path=output,
    )
    harness.launched.append(bot)
    assert bot.wait(20) == 0, output.read_text()
    text = output.read_text()
    assert str(data_dir) not in text  # fd 1 and 2 (the output file) name no host path
    lines = text.splitlines()
    links = dict(line.split(" ", 1) for line in lines[lines.index("END-MOUNTINFO") + 1 :])
    assert links["fd0"] == "/dev/null"
    assert links["fd1"].startswith("pipe:[") and links["fd2"] == links["fd1"]
    assert links["cwd"] == "/bot"
    assert not _unexplained_roots(_mount_roots(text))
