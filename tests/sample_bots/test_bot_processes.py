"""The sample bots as real processes against a real (scripted) gRPC referee.

Python bots get the SDK, the generated code and the engine on PYTHONPATH
exactly as the sandbox lays them out (top-level ``kahuna.v1``, ``arena`` a
namespace package holding ``arena.kahuna`` alone); the JavaScript bot loads
its own copy of the protos. Each must say Hello with the token, echo the
request id (a uint64 beyond 32 bits), answer with a legal action and exit 0
after MatchOver (whatever follows it), or 1 after a Goodbye or a request with no
legal actions (one line naming it, no reply sent); without its environment, exit 2
naming the missing variable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.protocol.convert import action_from_pb

from .scripted_referee import REQUEST_ID, TOKEN, ScriptedServer

pytestmark = pytest.mark.slow  # every test here starts a process or a server

REPO = Path(__file__).resolve().parents[2]
SAMPLE_BOTS = REPO / "sample_bots"
JS_BOT = SAMPLE_BOTS / "js_random"
TIMEOUT_S = 30

BOTS = [
    pytest.param(SAMPLE_BOTS / "python_random", [sys.executable, "bot.py"], id="python_random"),
    pytest.param(SAMPLE_BOTS / "python_greedy", [sys.executable, "bot.py"], id="python_greedy"),
    pytest.param(
        SAMPLE_BOTS / "python_ismcts",
        [sys.executable, "bot.py", "--think-ms", "20"],
        id="python_ismcts",
    ),
    pytest.param(JS_BOT, ["node", "bot.js"], id="js_random"),
]
SDK_BOTS = BOTS[:3]  # the Python SDK's behaviour; js_random is a bot of its own


ENGINE_ROOT: list[Path] = []  # the engine alone, as the sandbox mounts it (a fixture sets it)


@pytest.fixture(autouse=True, scope="module")
def _engine_alone(tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("engine")
    (root / "arena").mkdir()
    (root / "arena" / "kahuna").symlink_to(REPO / "arena" / "kahuna")
    ENGINE_ROOT[:] = [root]


def _env(target: str | None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": (
            f"{REPO / 'arena' / 'protocol' / 'gen'}:{SAMPLE_BOTS / 'sdk' / 'python'}"
            f":{ENGINE_ROOT[0]}"
        ),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if target is not None:
        env.update({"KAHUNA_REFEREE": target, "KAHUNA_TOKEN": TOKEN})
    return env


def _run(bot_dir: Path, command: list[str], target: str | None) -> subprocess.CompletedProcess[str]:
    if command[0] == "node" and not (bot_dir / "node_modules").is_dir():
        pytest.skip("js_random's node_modules missing: run npm ci --prefix sample_bots/js_random")
    if command[0] == "node" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    return subprocess.run(
        command, cwd=bot_dir, env=_env(target), capture_output=True, text=True, timeout=TIMEOUT_S
    )


@pytest.mark.parametrize(("bot_dir", "command"), BOTS)
def test_bot_plays_the_conversation_and_exits_0(bot_dir: Path, command: list[str]) -> None:
    with ScriptedServer() as server:
        done = _run(bot_dir, command, server.target)
        assert server.conversation.finished.wait(5)
    assert done.returncode == 0, done.stderr
    hello, reply = server.conversation.received
    assert hello.hello.token == TOKEN
    assert hello.hello.protocol_version == 1
    assert hello.hello.bot_name == bot_dir.name
    assert reply.action_reply.request_id == REQUEST_ID
    action = action_from_pb(reply.action_reply.action)
    assert action.text() in server.conversation.legal_texts


@pytest.mark.parametrize(("bot_dir", "command"), BOTS)
def test_bot_hosted_elsewhere_connects_over_tcp(bot_dir: Path, command: list[str]) -> None:
    with ScriptedServer(tcp=True) as server:
        done = _run(bot_dir, command, server.target)
        assert server.conversation.finished.wait(5)
    assert done.returncode == 0, done.stderr
    assert [request.WhichOneof("kind") for request in server.conversation.received] == [
        "hello", "action_reply",
    ]  # fmt: skip


@pytest.mark.parametrize(("bot_dir", "command"), BOTS)
def test_bot_cut_off_by_goodbye_exits_1_with_the_reason(bot_dir: Path, command: list[str]) -> None:
    with ScriptedServer(goodbye=True) as server:
        done = _run(bot_dir, command, server.target)
    assert done.returncode == 1
    assert "PROTOCOL_VIOLATION: scripted" in done.stderr


@pytest.mark.parametrize(("bot_dir", "command"), BOTS)
def test_a_request_with_no_legal_actions_ends_the_bot_naming_it(
    bot_dir: Path, command: list[str]
) -> None:
    with ScriptedServer(no_legal=True) as server:
        done = _run(bot_dir, command, server.target)
        assert server.conversation.finished.wait(5)
    assert done.returncode == 1, done.stderr
    line = (
        f"js_random: protocol error: request {REQUEST_ID} has no legal actions"
        if bot_dir == JS_BOT
        else f"kahuna_bot: protocol error: action request {REQUEST_ID} has no legal actions"
    )  # the SDK's own words for the Python bots
    assert done.stderr.splitlines()[-1:] == [line], done.stderr
    assert [request.WhichOneof("kind") for request in server.conversation.received] == ["hello"]


@pytest.mark.parametrize("after", ["goodbye", "abort"])
@pytest.mark.parametrize(("bot_dir", "command"), SDK_BOTS)
def test_the_result_stands_once_match_over_arrived(
    bot_dir: Path, command: list[str], after: str
) -> None:
    # a Goodbye or a broken stream after MatchOver must not turn a finished match into a failure
    with ScriptedServer(after_match_over=after) as server:
        done = _run(bot_dir, command, server.target)
        assert server.conversation.finished.wait(5)
    assert done.returncode == 0, done.stderr
    assert [request.WhichOneof("kind") for request in server.conversation.received] == [
        "hello", "action_reply",
    ]  # fmt: skip


@pytest.mark.parametrize(("bot_dir", "command"), BOTS)
def test_bot_without_its_environment_names_what_is_missing(
    bot_dir: Path, command: list[str]
) -> None:
    done = _run(bot_dir, command, None)
    assert done.returncode == 2
    assert "KAHUNA_REFEREE is not set" in done.stderr
    assert "Traceback" not in done.stderr
