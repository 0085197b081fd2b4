"""The C++ and TypeScript starter kits, built for real and played for real.

Each kit is built once per run (tests/kits/kit_builds.py), then: a real
sandboxed match against python_random with no failure status; the same
bot in the sandbox against a scripted referee, which must see Hello with
the token and a reply carrying the request's id, after which the bot exits
0 on its own; exit 1 after a Goodbye and 2 without its environment; a
rebuild in another directory gives the same bot version. The C++ binary
must need nothing of the host: no dynamic section at all, and it plays in
a sandbox whose root holds only the bot and the referee's socket.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.commands.kits import copy_sources
from arena.kahuna import parse_record, replay
from arena.protocol.convert import action_from_pb
from arena.referee import BotStatus, MatchConfig, load_bot, run_match
from arena.referee.botdir import content_hash
from arena.sandbox import SANDBOX_SOCKET, SandboxLimits, launch_bot, probe_host
from tests.sample_bots.scripted_referee import REQUEST_ID, TOKEN, ScriptedServer

from .kit_builds import Built, build_kit, kit_source, run_build, shared_root

KITS = ["cpp_random", "ts_random"]
RULE_REASONS = {"points", "final_points", "bridges", "draw", "no_bridges"}
MAX_FILE_BYTES = 16 * 1024 * 1024  # the per-file limit of an upload (arena/server/archive.py)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # builds: C++ takes ~30 s of CPU

Builder = Callable[[str], Built]


@pytest.fixture(scope="session")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Builder:
    root = shared_root(tmp_path_factory)
    made: dict[str, Built] = {}

    def get(kit: str) -> Built:
        if kit not in made:
            made[kit] = build_kit(kit_source(kit), root)
        return made[kit]

    return get


def _command(directory: Path) -> list[str]:
    return list(load_bot(directory).command)


def _run_bare(directory: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
    return subprocess.run(
        _command(directory), cwd=directory, env=env, capture_output=True, text=True, timeout=30
    )


def _needs_sandbox() -> None:
    missing = probe_host().missing
    if missing:
        pytest.skip(f"no sandbox here: {missing}")


@pytest.mark.parametrize("kit", KITS)
def test_kit_plays_a_sandboxed_match_against_python_random(builds: Builder, kit: str) -> None:
    _needs_sandbox()
    bot = load_bot(builds(kit).directory)
    opponent = load_bot(kit_source("python_random"))
    report = run_match(MatchConfig(games=2, seed=13), bot, opponent)
    assert {game.bots_by_seat for game in report.games} == {
        (kit, "python_random"), ("python_random", kit),
    }  # fmt: skip
    for game in report.games:
        assert dict(game.statuses) == {kit: BotStatus.OK, "python_random": BotStatus.OK}
        assert game.reason in RULE_REASONS
        assert game.actions > 20
        result = replay(parse_record(json.dumps(game.record)))
        assert result.error is None and result.state.is_finished
    assert sum(report.score.values()) == 2.0


@pytest.mark.parametrize("kit", KITS)
def test_kit_in_the_sandbox_answers_by_id_and_exits_0_after_match_over(
    builds: Builder, kit: str, tmp_path: Path
) -> None:
    _needs_sandbox()
    directory = builds(kit).directory
    with ScriptedServer() as server:
        bot = launch_bot(
            bot_dir=directory, command=_command(directory), runtime=load_bot(directory).runtime,
            env={"KAHUNA_REFEREE": f"unix://{SANDBOX_SOCKET}", "KAHUNA_TOKEN": TOKEN},
            socket_path=Path(server.target.removeprefix("unix://")), limits=SandboxLimits(),
            stderr_path=tmp_path / "stderr",
        )  # fmt: skip
        try:
            status = bot.wait(30)  # the bot ends by itself once MatchOver arrived
        finally:
            bot.kill()
        assert server.conversation.finished.wait(5)
    assert status == 0, (tmp_path / "stderr").read_text()
    hello, reply = server.conversation.received
    assert hello.hello.token == TOKEN and hello.hello.protocol_version == 1
    assert hello.hello.bot_name == kit
    assert reply.action_reply.request_id == REQUEST_ID  # a uint64 beyond 32 bits, echoed
    assert action_from_pb(reply.action_reply.action).text() in server.conversation.legal_texts


@pytest.mark.parametrize("tcp", [False, True], ids=["unix", "tcp"])
@pytest.mark.parametrize("kit", KITS)
def test_kit_plays_the_conversation_unsandboxed(builds: Builder, kit: str, tcp: bool) -> None:
    with ScriptedServer(tcp=tcp) as server:
        done = _run_bare(builds(kit).directory,
                         {"KAHUNA_REFEREE": server.target, "KAHUNA_TOKEN": TOKEN})  # fmt: skip
        assert server.conversation.finished.wait(5)
    assert done.returncode == 0, done.stderr
    assert [r.WhichOneof("kind") for r in server.conversation.received] == [
        "hello", "action_reply",
    ]  # fmt: skip


@pytest.mark.parametrize("after", ["goodbye", "abort"])
@pytest.mark.parametrize("kit", KITS)
def test_kit_result_stands_once_match_over_arrived(builds: Builder, kit: str, after: str) -> None:
    with ScriptedServer(after_match_over=after) as server:
        done = _run_bare(builds(kit).directory,
                         {"KAHUNA_REFEREE": server.target, "KAHUNA_TOKEN": TOKEN})  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("kit", KITS)
def test_kit_cut_off_by_goodbye_exits_1_with_the_reason(builds: Builder, kit: str) -> None:
    with ScriptedServer(goodbye=True) as server:
        done = _run_bare(builds(kit).directory,
                         {"KAHUNA_REFEREE": server.target, "KAHUNA_TOKEN": TOKEN})  # fmt: skip
    assert done.returncode == 1
    assert "PROTOCOL_VIOLATION: scripted" in done.stderr


@pytest.mark.parametrize("kit", KITS)
def test_kit_without_its_environment_names_what_is_missing(builds: Builder, kit: str) -> None:
    done = _run_bare(builds(kit).directory, {})
    assert done.returncode == 2
    assert "KAHUNA_REFEREE is not set" in done.stderr
    done = _run_bare(builds(kit).directory, {"KAHUNA_REFEREE": "unix:///nowhere"})
    assert done.returncode == 2
    assert "KAHUNA_TOKEN is not set" in done.stderr


@pytest.mark.parametrize("kit", KITS)
def test_a_rebuild_elsewhere_gives_the_same_bot_version(
    builds: Builder, kit: str, tmp_path: Path
) -> None:
    first = builds(kit).directory
    second = tmp_path / "elsewhere" / kit
    copy_sources(kit_source(kit), second)
    run_build(second)
    assert content_hash(second) == content_hash(first)


def test_cpp_bot_is_one_static_stripped_binary(builds: Builder) -> None:
    binary = builds("cpp_random").directory / "bot"
    assert binary.stat().st_size < MAX_FILE_BYTES
    headers = subprocess.run(["readelf", "-lSdW", str(binary)], capture_output=True, text=True)
    assert headers.returncode == 0, headers.stderr
    assert "There is no dynamic section in this file." in headers.stdout
    assert "INTERP" not in headers.stdout  # no loader, so no shared library at all
    assert ".symtab" not in headers.stdout  # stripped


def test_cpp_bot_plays_with_nothing_of_the_host_visible(builds: Builder) -> None:
    """A root holding only the bot and the socket: no /usr, /lib, libgrpc++ or libc."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap is not installed")
    directory = builds("cpp_random").directory
    with ScriptedServer() as server:
        socket_dir = Path(server.target.removeprefix("unix://")).parent
        done = subprocess.run(
            [bwrap, "--unshare-all", "--die-with-parent", "--tmpfs", "/",
             "--ro-bind", str(directory), "/bot", "--bind", str(socket_dir), "/run/kahuna",
             "--chdir", "/bot", "--clearenv",
             "--setenv", "KAHUNA_REFEREE", "unix:///run/kahuna/referee.sock",
             "--setenv", "KAHUNA_TOKEN", TOKEN, "./bot"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert server.conversation.finished.wait(5)
    if "Operation not permitted" in done.stderr or "No permissions" in done.stderr:
        pytest.skip(f"bwrap cannot make namespaces here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert [r.WhichOneof("kind") for r in server.conversation.received] == [
        "hello", "action_reply",
    ]  # fmt: skip


def test_ts_bot_ships_no_build_only_packages(builds: Builder) -> None:
    directory = builds("ts_random").directory
    assert (directory / "dist" / "bot.js").is_file()
    assert (directory / "node_modules" / "@grpc" / "grpc-js").is_dir()
    assert not (directory / "node_modules" / "typescript").exists()
