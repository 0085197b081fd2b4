"""A Python bot's read-only mounts: the protocol code, the SDK and the engine alone."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import arena.kahuna
from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.referee import BotStatus, MatchConfig, load_bot, run_match
from arena.referee.bytecode import compiled_tree
from arena.resources import ENGINE_MOUNT, PROTO_MOUNT, PYTHON_BOT_MOUNTS, SDK_MOUNT


def test_sandboxed_bots_get_the_engine_package_and_nothing_else_of_the_arena() -> None:
    assert PYTHON_BOT_MOUNTS == (PROTO_MOUNT, SDK_MOUNT, ENGINE_MOUNT)
    engine = Path(arena.kahuna.__file__).resolve().parent
    assert ENGINE_MOUNT.host_dir().resolve() == engine
    assert ENGINE_MOUNT.inside == "/opt/kahuna/engine/arena/kahuna"
    assert ENGINE_MOUNT.path_entry(True) == "/opt/kahuna/engine"  # import arena.kahuna


def test_unsandboxed_bots_find_the_engine_under_the_host_path_entry() -> None:
    entry = Path(ENGINE_MOUNT.path_entry(False))
    assert (entry / "arena" / "kahuna").resolve() == ENGINE_MOUNT.host_dir().resolve()


TAG = sys.implementation.cache_tag

PROBE = """
import os, sys
import arena.kahuna.state, kahuna_bot.session, kahuna.v1.referee_pb2
modules = [sys.modules[n] for n in ("arena.kahuna.state", "kahuna_bot.session",
                                    "kahuna.v1.referee_pb2")]
print("compiled", [os.path.exists(m.__spec__.cached) for m in modules], file=sys.stderr)
sys.exit(3)
"""


@pytest.mark.slow
def test_a_sandboxed_python_bot_finds_the_bytecode_of_what_it_imports(tmp_path: Path) -> None:
    """Each half of a paired match launches its own processes: none of them compiles
    the engine, the SDK or the protocol code again (a launch
    costs CPU that no game needs)."""
    tmp_path.chmod(0o755)
    probe = tmp_path / "probe"
    probe.mkdir(mode=0o755)
    (probe / "bot.py").write_text(PROBE)
    (probe / "bot.toml").write_text(
        'name = "probe"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'
    )
    for path in probe.iterdir():
        path.chmod(0o644)
    config = MatchConfig(games=1, max_restarts=0, hello_timeout_ms=20_000)
    report = run_match(config, load_bot(probe), load_bot(SAMPLE_RANDOM_BOT))
    assert report.games[0].statuses["probe"] is BotStatus.CRASH
    assert "compiled [True, True, True]" in report.games[0].stderr["probe"]


def test_a_compiled_tree_has_every_module_compiled_and_the_same_sources(tmp_path: Path) -> None:
    host = SDK_MOUNT.host_dir()
    tree = compiled_tree(host)

    def sources(root: Path) -> list[Path]:
        return sorted(
            p.relative_to(root) for p in root.rglob("*.py") if "__pycache__" not in p.parts
        )

    assert sources(tree) == sources(host)
    for source in sources(host):
        beside = tree / source.parent / "__pycache__" / f"{source.stem}.{TAG}.pyc"
        assert beside.is_file(), source  # where a bot's interpreter looks
        assert os.path.samefile(tree / source, host / source)  # linked, not copied
    assert compiled_tree(host) == tree  # once per process


def test_a_compiled_tree_is_compiled_beside_its_sources_whatever_the_pycache_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot's interpreter looks for bytecode beside the module: an arena run with
    PYTHONPYCACHEPREFIX must not compile its bots' trees elsewhere."""
    host = tmp_path / "package"
    (host / "inner").mkdir(parents=True)
    (host / "module.py").write_text("X = 1\n")
    (host / "inner" / "deeper.py").write_text("Y = 2\n")
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "elsewhere"))
    tree = compiled_tree(host)
    assert (tree / "__pycache__" / f"module.{TAG}.pyc").is_file()
    assert (tree / "inner" / "__pycache__" / f"deeper.{TAG}.pyc").is_file()
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.slow  # forks a process
def test_a_forked_child_compiles_a_tree_of_its_own() -> None:
    """The sandbox binds the compiled tree itself, and a process's tree goes with it: a
    forked child must not launch its bots on its parent's."""
    host = SDK_MOUNT.host_dir()
    parents = compiled_tree(host)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its tree and leave without the parent's exit handlers
        try:
            os.write(write_fd, str(compiled_tree(host)).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd) as stream:
        childs = Path(stream.read())
    os.waitpid(pid, 0)
    assert childs != parents
    assert childs.parent.name.startswith(f"{pid}-bytecode-")
    assert parents.parent.name.startswith(f"{os.getpid()}-bytecode-")
