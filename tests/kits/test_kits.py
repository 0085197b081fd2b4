"""The Go, Rust, Java, C++ and TypeScript starter kits, built by their own build.sh.

Each kit plays a real sandboxed match against python_random with no failure
status; launched in the sandbox against a scripted referee it says Hello with
its token, echoes a request id beyond 32 bits with a legal action and exits 0
by itself after MatchOver; a Goodbye makes it exit 1 naming the reason, as
does a request with no legal actions (one line, no reply sent), a
missing environment 2 naming the variable; and building a copy of its sources elsewhere gives the
same bot version (byte-reproducible builds); and the built directory packs, as
`arena remote submit` packs it, under the upload limit and unpacks on the
server's side to the same bot version.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from arena.bots.archive import MAX_ARCHIVE_BYTES, unpack_bot_archive
from arena.commands.remote import pack_bot
from arena.kahuna import parse_record, replay
from arena.protocol.convert import action_from_pb
from arena.referee import BotStatus, MatchConfig, load_bot, run_match
from arena.referee.botdir import content_hash
from arena.referee.types import BotSpec
from arena.sandbox import launch_bot
from arena.sandbox.limits import SANDBOX_SOCKET, SandboxLimits
from tests.sample_bots.scripted_referee import REQUEST_ID, TOKEN, ScriptedServer

from .building import BUILD_TIMEOUT_S, SAMPLE_BOTS, Kit, rebuilt_elsewhere, source_hash

RULE_REASONS = {"points", "final_points", "bridges", "draw", "no_bridges"}
# Generous: on a 2-core machine shared by several test suites a sandboxed JVM can
# take longer than the contract's 10 s to its Hello. What is
# tested here is the protocol, not start-up speed (benchmarks/kits.py measures it).
TIMEOUT_S = 120
HELLO_TIMEOUT_MS = 60_000

# The first test of a kit may build it (session fixture): cold, Rust takes minutes.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(BUILD_TIMEOUT_S + 300)]


def test_kit_plays_python_random_in_a_sandboxed_match(built_kit: tuple[Kit, BotSpec]) -> None:
    kit, bot = built_kit
    random_bot = load_bot(SAMPLE_BOTS / "python_random")
    config = MatchConfig(games=2, seed=13, hello_timeout_ms=HELLO_TIMEOUT_MS)
    report = run_match(config, bot, random_bot)
    assert len(report.games) == 2
    for game in report.games:
        failure = (game.statuses, game.reason, game.stderr, game.record.get("match"))
        assert dict(game.statuses) == {
            kit.name: BotStatus.OK, "python_random": BotStatus.OK
        }, failure
        assert game.reason in RULE_REASONS
        result = replay(parse_record(json.dumps(game.record)))
        assert result.error is None and result.state.is_finished
    assert sum(report.score.values()) == 2.0


def test_kit_exits_0_by_itself_after_match_over_in_the_sandbox(
    built_kit: tuple[Kit, BotSpec], tmp_path: Path
) -> None:
    kit, bot = built_kit
    with ScriptedServer() as server:
        process = launch_bot(
            bot_dir=bot.directory, command=bot.command, runtime=bot.runtime,
            env={"KAHUNA_REFEREE": f"unix://{SANDBOX_SOCKET}", "KAHUNA_TOKEN": TOKEN},
            socket_path=Path(server.target.removeprefix("unix://")),
            limits=SandboxLimits(), stderr_path=tmp_path / "stderr",
        )
        try:
            status = process.wait(TIMEOUT_S)  # no kill: the bot must end on its own
        finally:
            process.kill()
        assert server.conversation.finished.wait(5)
    assert status == 0, (tmp_path / "stderr").read_text()
    hello, reply = server.conversation.received
    assert hello.hello.token == TOKEN
    assert hello.hello.protocol_version == 1
    assert hello.hello.bot_name == kit.name
    assert reply.action_reply.request_id == REQUEST_ID
    assert action_from_pb(reply.action_reply.action).text() in server.conversation.legal_texts


def _run(kit: Kit, bot: BotSpec, target: str | None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if target is not None:
        env.update({"KAHUNA_REFEREE": target, "KAHUNA_TOKEN": TOKEN})
    return subprocess.run(
        list(bot.command), cwd=kit.directory, env=env, capture_output=True, text=True,
        timeout=TIMEOUT_S, check=False,
    )


def test_kit_cut_off_by_goodbye_exits_1_with_the_reason(built_kit: tuple[Kit, BotSpec]) -> None:
    kit, bot = built_kit
    with ScriptedServer(goodbye=True) as server:
        done = _run(kit, bot, server.target)
    assert done.returncode == 1
    assert "PROTOCOL_VIOLATION: scripted" in done.stderr


def test_a_request_with_no_legal_actions_ends_the_kit_naming_it(
    built_kit: tuple[Kit, BotSpec]
) -> None:
    # before choose is called (the samples' choose would divide by zero or index nothing)
    kit, bot = built_kit
    with ScriptedServer(no_legal=True) as server:
        done = _run(kit, bot, server.target)
        assert server.conversation.finished.wait(5)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1:] == [
        f"{kit.name}: protocol error: request {REQUEST_ID} has no legal actions"
    ], done.stderr
    assert [request.WhichOneof("kind") for request in server.conversation.received] == ["hello"]


@pytest.mark.parametrize("after", ["goodbye", "abort"])
def test_the_result_stands_once_match_over_arrived(
    built_kit: tuple[Kit, BotSpec], after: str
) -> None:
    kit, bot = built_kit
    with ScriptedServer(after_match_over=after) as server:
        done = _run(kit, bot, server.target)
        assert server.conversation.finished.wait(5)
    assert done.returncode == 0, done.stderr


def test_kit_hosted_elsewhere_connects_over_tcp(built_kit: tuple[Kit, BotSpec]) -> None:
    kit, bot = built_kit
    with ScriptedServer(tcp=True) as server:
        done = _run(kit, bot, server.target)
        assert server.conversation.finished.wait(5)
    assert done.returncode == 0, done.stderr


def test_kit_without_its_environment_names_what_is_missing(
    built_kit: tuple[Kit, BotSpec]
) -> None:
    kit, bot = built_kit
    done = _run(kit, bot, None)
    assert done.returncode == 2
    assert "KAHUNA_REFEREE is not set" in done.stderr
    done = subprocess.run(
        list(bot.command), cwd=kit.directory, capture_output=True, text=True, timeout=TIMEOUT_S,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "KAHUNA_REFEREE": "unix:///nowhere"},
    )  # fmt: skip
    assert done.returncode == 2
    assert "KAHUNA_TOKEN is not set" in done.stderr


def test_a_rebuild_elsewhere_gives_the_same_bot_version(built_kit: tuple[Kit, BotSpec]) -> None:
    """The kit's clean sources built in another directory (built ahead by .ci/run's
    build step, keyed by the sources: building.rebuilt_elsewhere) are the same bytes."""
    kit, bot = built_kit
    copy = rebuilt_elsewhere(kit)
    assert copy.resolve() != kit.directory.resolve()
    assert source_hash(kit, copy) == source_hash(kit), "not a copy of the kit's sources"
    assert content_hash(copy) == bot.version == content_hash(kit.directory)


def test_the_built_kit_uploads_under_the_limit_as_the_same_version(
    built_kit: tuple[Kit, BotSpec], tmp_path: Path
) -> None:
    kit, bot = built_kit
    data = pack_bot(kit.directory)  # refuses past MAX_ARCHIVE_BYTES, naming the size
    assert len(data) <= MAX_ARCHIVE_BYTES
    (tmp_path / "upload").mkdir()
    unpacked = unpack_bot_archive(data, tmp_path / "upload")  # the server's per-file limits
    assert content_hash(unpacked) == bot.version
