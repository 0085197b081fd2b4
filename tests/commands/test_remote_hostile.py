"""`arena remote` against an arena that attacks its participants.

A hostile arena is a real gRPC server on loopback whose ArenaService puts
terminal escapes (OSC 52 clipboard writes, window titles, screen clears, BEL)
in every text it sends and offers far more seats than a machine should run.
The participant's side must print none of those bytes, run at most
``--max-parallel`` bots, keep the user token out of argv and out of the bots'
environment, and refuse to send it in clear to another machine.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from types import ModuleType

import grpc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.cli import main
from arena.commands import remote
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.quoting import HIDDEN
from arena.tournament.policy.audit import AuditReport
from tests.server.test_disk_full import small_disk

REPO = Path(__file__).resolve().parents[2]
SDK_DIR = REPO / "sample_bots" / "sdk" / "python"
sys.path.insert(0, str(SDK_DIR))


def _connector() -> ModuleType:
    """The SDK's connector, imported when a test runs, not when this module is collected:
    the SDK registers the arena's generated code as the top-level package ``kahuna``,
    which would hide tests/kahuna/ from every test module collected after this one."""
    return importlib.import_module("kahuna_bot.remote")


EVIL = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;owned\x07\x1b[2J\x9b31m\u202eevil\r\x08"
TOKEN = "participant-secret-token"
SEATS = 24

# ------------------------------------------------------------------ pure parts


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain name", "plain name"),
        ("\x1b[2J", "\\u001b[2J"),
        ("bell\x07", "bell\\u0007"),
        ("a\nb\rc\td", "a\\u000ab\\u000dc\\u0009d"),
        ("csi\x9b", "csi\\u009b"),
        ("del\x7f", "del\\u007f"),
        ("\u202eabc\u2066", "\\u202eabc\\u2066"),
        ("line\u2028sep", "line\\u2028sep"),
        ("ünïcödé ♔", "ünïcödé ♔"),
    ],
)
def test_control_characters_are_shown_not_sent_to_the_terminal(text: str, shown: str) -> None:
    assert remote.visible(text) == shown
    assert _connector().visible(text) == shown


def test_a_record_keeps_its_newlines_and_stays_json_with_escapes_inside_strings() -> None:
    record = json.dumps({"bot": "x"}).replace('"x"', '"x\x1b]0;t\x07"')
    text = remote.record_text(pb.GetGameRecordResponse(record_json=record + "\n{}"))
    assert "\x1b" not in text and "\x07" not in text and text.endswith("{}\n")
    assert json.loads(text.splitlines()[0]) == {"bot": "x\x1b]0;t\x07"}


@given(st.text())
def test_nothing_visible_prints_can_drive_a_terminal(text: str) -> None:
    shown = remote.visible(text)
    assert not HIDDEN.search(shown)
    assert shown == _connector().visible(text)
    assert all(ord(c) >= 0x20 and not 0x7F <= ord(c) <= 0x9F for c in shown)


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("127.0.0.1:1", True), ("127.8.9.1:50051", True), ("localhost:1", True),
        ("LOCALHOST:1", True), ("[::1]:50051", True), ("10.0.0.1:1", False),
        ("arena.example:1", False), ("localhost.evil.example:1", False),
        ("[::2]:1", False), ("0.0.0.0:1", False), ("127.0.0.1.nip.io:1", False),
    ],
)  # fmt: skip
def test_only_loopback_literals_count_as_this_machine(address: str, loopback: bool) -> None:
    assert remote.is_loopback(address) is loopback


def test_the_connector_gets_no_token_in_argv_and_a_parallel_limit() -> None:
    argv = remote.play_argv(remote.Endpoint("h:1", TOKEN), "mine", [sys.executable, "b.py"])
    assert TOKEN not in argv and "--user-token" not in argv
    assert argv[argv.index("--max-parallel") + 1] == str(remote.default_parallel())
    with pytest.raises(remote.RemoteError, match="--max-parallel must be at least 1, got 0"):
        remote.play_argv(remote.Endpoint("h:1", TOKEN), "mine", [sys.executable], None, 0)


# ------------------------------------------------------------------ login


@pytest.fixture
def cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[object]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        capsys.readouterr()
        status = main(["remote", *argv])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    yield run


@pytest.mark.parametrize("url", ["grpc://10.1.2.3:50051", "arena.example:50051"])
def test_a_plaintext_login_to_another_machine_needs_insecure(cli: object, url: str) -> None:
    status, out, err = cli("login", url, stdin=TOKEN + "\n")  # type: ignore[operator]
    assert status == remote.EXIT_USAGE and out == ""
    assert "in clear" in err and "--insecure" in err and "grpcs://" in err
    # With --insecure it goes on (to read the token: none given here, so nothing is sent).
    status, out, err = cli("login", url, "--insecure", stdin="")  # type: ignore[operator]
    assert status == remote.EXIT_USAGE
    assert err.startswith("warning: plaintext to ") and "no token given" in err


# ------------------------------------------------------------------ a hostile arena


class Hostile(pb_grpc.ArenaServiceServicer):
    """Every text an ArenaService sends, with terminal escapes in it."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.tokens: list[str] = []

    def _seen(self, context: grpc.ServicerContext) -> None:
        self.tokens += [v for k, v in context.invocation_metadata() if k == "authorization"]

    def ListBots(self, request: object, context: grpc.ServicerContext) -> pb.ListBotsResponse:
        self._seen(context)
        return pb.ListBotsResponse(bots=[pb.BotVersion(name=EVIL, version=EVIL, owner=EVIL)])

    def ListTournaments(self, request: object, context: grpc.ServicerContext) -> object:
        self._seen(context)
        t = pb.Tournament(id=1, name=EVIL, status=EVIL, entrants=[EVIL])
        return pb.ListTournamentsResponse(tournaments=[t])

    def GetLeaderboard(self, request: object, context: grpc.ServicerContext) -> object:
        entry = pb.LeaderboardEntry(rank=1, bot=pb.BotVersion(name=EVIL, version=EVIL))
        return pb.GetLeaderboardResponse(entries=[entry])

    def GetGameRecord(self, request: pb.GetGameRecordRequest, context: grpc.ServicerContext
                      ) -> object:  # fmt: skip
        if request.game_id == 2:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no game {EVIL}")
        return pb.GetGameRecordResponse(record_json=f'{{"bots": ["{EVIL}"]}}')

    def WatchTournament(self, request: object, context: grpc.ServicerContext) -> object:
        t = pb.Tournament(id=1, name=EVIL, status="finished")
        yield pb.WatchTournamentResponse(
            tournament=t, message=EVIL, standings=[pb.Standing(rank=1, bot=EVIL)]
        )

    def CreateUserToken(self, request: object, context: grpc.ServicerContext) -> object:
        return pb.CreateUserTokenResponse(token=EVIL)

    def ListUserTokens(self, request: object, context: grpc.ServicerContext) -> object:
        token = pb.UserToken(id=1, user=EVIL, role=EVIL, state=EVIL, created_at=EVIL,
                             expires_at=EVIL, sha256_prefix=EVIL)  # fmt: skip
        return pb.ListUserTokensResponse(tokens=[token])

    def RevokeUserToken(self, request: object, context: grpc.ServicerContext) -> object:
        return pb.RevokeUserTokenResponse(revoked=[pb.UserToken(id=1, user=EVIL, role=EVIL)])

    def WaitForSeats(self, request: pb.WaitForSeatsRequest, context: grpc.ServicerContext
                     ) -> Iterator[pb.WaitForSeatsResponse]:  # fmt: skip
        self._seen(context)
        deadline = int((time.time() + 3.0) * 1000)
        for n in range(SEATS):
            yield pb.WaitForSeatsResponse(
                bot=request.bot, version="v", match_id=f"{EVIL}{n}", seat_token=f"seat-{n}",
                deadline_unix_ms=deadline,
            )  # fmt: skip
        time.sleep(4.0)  # the arena holds the stream past every deadline, then refuses
        context.abort(grpc.StatusCode.PERMISSION_DENIED, f"go away {EVIL}")


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[tuple[Hostile, int]]:
    service = Hostile(tmp_path / "bots.log")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    pb_grpc.add_ArenaServiceServicer_to_server(service, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield service, port
    finally:
        server.stop(grace=None)


def _no_escapes(text: str) -> None:
    assert not HIDDEN.search(text.replace("\n", "")), repr(text)
    assert "\\u001b]52;c;" in text  # shown, not sent


@pytest.mark.slow
def test_nothing_a_hostile_arena_sends_reaches_the_terminal_raw(
    cli: object, hostile: tuple[Hostile, int]
) -> None:
    _, port = hostile
    run = cli  # type: ignore[assignment]
    status, out, err = run("login", f"grpc://127.0.0.1:{port}", stdin=TOKEN + "\n")
    assert status == 0, err
    for argv in (["bots"], ["bots", "--json"], ["tournaments"], ["tournaments", "--json"],
                 ["leaderboard"], ["leaderboard", "--json"], ["record", "1"],
                 ["record", "2"], ["watch", "t"], ["token", "create", "ann"], ["token", "list"],
                 ["token", "list", "--json"], ["token", "revoke", "1"]):  # fmt: skip
        status, out, err = run(*argv)
        _no_escapes(out + err)
    assert status == 0 and "\\u001b]0;owned\\u0007" in out
    status, out, err = run("record", "2")
    assert status == remote.EXIT_NOT_FOUND and err.count("\n") == 1


@pytest.mark.slow
def test_play_runs_at_most_max_parallel_bots_without_the_user_token(
    tmp_path: Path, hostile: tuple[Hostile, int]
) -> None:
    service, port = hostile
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), PYTHONPATH=str(REPO))
    login = subprocess.run(
        [sys.executable, "-m", "arena", "remote", "login", f"grpc://127.0.0.1:{port}"],
        input=TOKEN + "\n", env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert login.returncode == 0, login.stderr
    log = tmp_path / "bots.log"
    bot = (
        "import os, sys, time\n"
        f"log = open({str(log)!r}, 'a')\n"
        "log.write(f'start {os.getpid()} {os.environ.get(\"KAHUNA_USER_TOKEN\", \"-\")}\\n')\n"
        "log.flush(); time.sleep(0.5)\n"
        "log.write(f'end {os.getpid()}\\n')\n"
    )
    play = subprocess.Popen(
        [sys.executable, "-m", "arena", "remote", "play", "--max-parallel", "2", "mine", "--",
         sys.executable, "-c", bot],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert TOKEN not in Path(f"/proc/{play.pid}/cmdline").read_text()
        _, stderr = play.communicate(timeout=60)
    finally:
        play.kill()
    assert play.returncode == remote.EXIT_PERMISSION, stderr  # the table of `arena remote`
    assert stderr.splitlines()[-1].startswith("arena remote: not allowed: go away "), stderr
    running, most, started = 0, 0, 0
    for line in log.read_text().splitlines():
        word, *rest = line.split()
        if word == "start":
            assert rest[1] == "-"  # the bot never sees the user's token
            running, started = running + 1, started + 1
        else:
            running -= 1
        most = max(most, running)
    assert most == 2 and 2 <= started < SEATS
    assert "seat let go" in stderr and "--max-parallel 2" in stderr
    _no_escapes(stderr)
    assert service.tokens == [f"Bearer {TOKEN}"] * 2  # login, then the connector: from env


@pytest.mark.slow
def test_the_connector_refuses_a_token_in_argv(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(SDK_DIR))
    env.pop("KAHUNA_USER_TOKEN", None)
    base = [sys.executable, "-m", "kahuna_bot.remote", "--arena", "127.0.0.1:9", "--bot", "b"]
    argv = [*base[:5], "--user-token", TOKEN, *base[5:], "--", "true"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "KAHUNA_USER_TOKEN" in done.stderr and "ps" in done.stderr
    done = subprocess.run([*base, "--", "true"], env=env, capture_output=True, text=True,
                          timeout=30)  # fmt: skip
    assert done.returncode == 2 and "no user token" in done.stderr
    empty = tmp_path / "empty"
    empty.write_text("\n")
    done = subprocess.run([*base, "--user-token-file", str(empty), "--", "true"], env=env,
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert done.returncode == 2 and "no token on its first line" in done.stderr


@pytest.mark.parametrize(
    "parts",
    [
        [pb.GetAuditBundleResponse(head_json="[1]")],
        [pb.GetAuditBundleResponse(head_json="{}"), pb.GetAuditBundleResponse(match_json="{")],
        [pb.GetAuditBundleResponse(head_json="{}"), pb.GetAuditBundleResponse(match_json="{}"),
         pb.GetAuditBundleResponse(game_json="[" * 100_000)],
    ],
)  # fmt: skip
def test_a_bundle_part_that_is_no_json_object_is_the_arenas_fault(
    parts: list[pb.GetAuditBundleResponse],
) -> None:
    """An audit bundle's part that is not a JSON object is refused as the arena's fault
    (exit 1, naming the part), not a traceback on the participant's machine."""
    with pytest.raises(remote.RemoteError, match="not a JSON object") as raised:
        remote.assemble_bundle(parts)
    assert raised.value.status == remote.EXIT_SERVER


def test_an_arena_that_answers_with_another_tournaments_bundle_fails_its_audit() -> None:
    """`arena remote audit spring` given autumn's bundle (which may well pass its own
    audit) fails; an id asked for is no name to compare."""
    passed = AuditReport("autumn", True, 2, "c" * 64, "s" * 64, None, ("all checks",))
    refused = remote.of_asked(passed, "autumn", "spring")
    assert not refused.ok and refused.checked == ()
    assert refused.problem == (
        "the arena sent the audit bundle of tournament 'autumn', not of 'spring'")
    assert remote.of_asked(passed, "autumn", "autumn") is passed
    assert remote.of_asked(passed, "autumn", "17") is passed


def test_a_bundle_part_with_a_key_twice_is_the_arenas_fault() -> None:
    """Two checkers must not read two bundles from one stream (one the first "winner_seat",
    the other the last)."""
    parts = [pb.GetAuditBundleResponse(head_json='{"status": "finished", "status": "x"}')]
    with pytest.raises(remote.RemoteError, match="key 'status' given twice"):
        remote.assemble_bundle(parts)


def _broken_stream() -> Iterator[pb.GetAuditBundleResponse]:
    yield pb.GetAuditBundleResponse(head_json='{"format": "kahuna-arena/audit/2"}')
    yield pb.GetAuditBundleResponse(match_json='{"match_id": 1}')
    raise remote.RemoteError("the arena went away", remote.EXIT_SERVER)


def test_audit_save_writes_the_whole_bundle_or_nothing(tmp_path: Path) -> None:
    """`arena remote audit --save FILE` receives the stream whole into a spool (the
    deadline is the transfer's, not the audit's), audits it from there, and copies it to
    FILE; a stream that breaks leaves no file (and no partial file either)."""
    saved = tmp_path / "bundle.json"
    parts = [pb.GetAuditBundleResponse(head_json='{"format": "other"}'),
             pb.GetAuditBundleResponse(match_json='{"match_id": 1}'),
             pb.GetAuditBundleResponse(game_json='{"game_id": 2}')]  # fmt: skip
    with tempfile.TemporaryFile() as spool:
        remote.spool_bundle(parts, spool)
        report = remote.audited_spool(spool, saved)
    assert not report.ok and "not an audit bundle" in (report.problem or "")
    assert json.loads(saved.read_text()) == {
        "format": "other", "matches": [{"match_id": 1, "played": [{"game_id": 2}]}]}
    with tempfile.TemporaryFile() as spool, pytest.raises(remote.RemoteError, match="went away"):
        remote.spool_bundle(_broken_stream(), spool)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle.json"]


def test_an_arena_that_sends_past_the_audits_limits_is_cut_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stream of parts without end is not spooled to disk without end."""
    monkeypatch.setattr(remote, "MAX_BUNDLE_GAMES", 3)
    monkeypatch.setattr(remote, "MAX_BUNDLE_MATCHES", 1)

    def endless() -> Iterator[pb.GetAuditBundleResponse]:
        yield pb.GetAuditBundleResponse(head_json="{}")
        yield pb.GetAuditBundleResponse(match_json="{}")
        while True:
            yield pb.GetAuditBundleResponse(game_json="{}")

    with tempfile.TemporaryFile() as spool, pytest.raises(
        remote.RemoteError, match="more than 1 matches and 3 games, the most an audit reads"
    ):
        remote.spool_bundle(endless(), spool)


@pytest.mark.slow  # mounts a tmpfs
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
@pytest.mark.parametrize(("keep_free", "said"), [
    (4 << 20, "would leave {where} less than 4 MiB free (SPOOL_KEEPS_FREE)"),
    (0, "cannot be kept in {where} after"),  # nothing kept free: the disk fills
])  # fmt: skip
def test_an_arena_that_sends_more_than_the_disk_holds_is_cut_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep_free: int, said: str
) -> None:
    """A stream of large games, within the audit's counts, is spooled only while the disk
    that holds it keeps SPOOL_KEEPS_FREE bytes free (a full disk, with nothing kept, is
    named too); the spool is gone after, and the disk's room with it."""
    monkeypatch.setattr(remote, "SPOOL_KEEPS_FREE", keep_free)
    monkeypatch.setattr(remote, "SPOOL_CHECK_BYTES", 256 << 10)
    game = json.dumps({"game_id": 1, "pad": "x" * (100 << 10)})

    def large() -> Iterator[pb.GetAuditBundleResponse]:
        yield pb.GetAuditBundleResponse(head_json="{}")
        yield pb.GetAuditBundleResponse(match_json="{}")
        for _ in range(1000):  # 100 MB in all, on a disk of 16 MiB
            yield pb.GetAuditBundleResponse(game_json=game)

    with small_disk(tmp_path / "small") as disk:
        where = str(disk.root)
        with tempfile.TemporaryFile(dir=where) as spool, pytest.raises(remote.RemoteError) as cut:
            remote.spool_bundle(large(), spool, where)
        assert said.format(where=where) in str(cut.value)
        room = os.statvfs(where)
        assert room.f_bavail * room.f_frsize > 15 << 20  # the spool's room given back
