"""`arena remote`: the pure parts table-driven, then the commands against real servers on port 0.

Two arenas per module: plaintext (with the real smoke match against the
sample random bot) and TLS (certificates from tests/server/pki.py). The
commands run through ``arena.cli.main`` with their own config directory;
`arena remote play` runs as a real process with the SDK's connector.
"""

from __future__ import annotations

import argparse
import http.server
import io
import json
import os
import random
import shlex
import shutil
import stat
import subprocess
import sys
import tarfile
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from arena.bots.archive import unpack_bot_archive
from arena.bots.smoke import SAMPLE_RANDOM_BOT, smoke_failure
from arena.bots.submission import SubmissionCheck
from arena.cli import main
from arena.commands import remote
from arena.commands.remote_grpc import Client, Endpoint
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.referee import load_bot
from arena.server.app import create_server
from arena.server.arena_service import ServiceOptions
from arena.server.tls import load_server_tls
from arena.server.uploads import MAX_REQUEST_BYTES
from arena.store import (
    Store,
    add_bot_version,
    create_token,
    ensure_admin_token,
    game_record,
    get_tournament,
    list_games,
)
from arena.testing.demo_data import play_demo_tournament
from arena.testing.waiting import wait_until
from tests.server.pki import Pki, make_pki
from tests.server.test_disk_full import small_disk

REPO = Path(__file__).resolve().parents[2]
TOURNAMENT_TIMEOUT_S = 120.0

# ------------------------------------------------------------------ pure parts


@pytest.mark.parametrize(
    ("code", "status", "words"),
    [
        ("UNAUTHENTICATED", remote.EXIT_UNAUTHENTICATED, "the arena refuses this token"),
        ("PERMISSION_DENIED", remote.EXIT_PERMISSION, "not allowed"),
        ("NOT_FOUND", remote.EXIT_NOT_FOUND, "not found"),
        ("INVALID_ARGUMENT", remote.EXIT_REFUSED, "refused"),
        ("FAILED_PRECONDITION", remote.EXIT_REFUSED, "refused"),
        ("RESOURCE_EXHAUSTED", remote.EXIT_LIMIT, "over a limit"),
        ("UNAVAILABLE", remote.EXIT_UNREACHABLE, "cannot be reached"),
        ("DEADLINE_EXCEEDED", remote.EXIT_UNREACHABLE, "in time"),
        ("INTERNAL", remote.EXIT_SERVER, "the arena failed"),
    ],
)
def test_each_grpc_code_becomes_one_line_and_its_exit_status(
    code: str, status: int, words: str
) -> None:
    error = remote.refusal(code, "some\ndetail  here", "h:1")
    assert error.status == status
    assert words in error.message and code in error.message
    assert "\n" not in error.message and "some detail here" in error.message


def test_grpcs_words_for_a_request_over_the_arenas_limit_name_the_limit_and_upload_bot() -> None:
    error = remote.refusal(
        "RESOURCE_EXHAUSTED", "SERVER: Received message larger than max (307204 vs. 262144)",
        "h:1",
    )  # fmt: skip
    assert error.status == remote.EXIT_LIMIT
    assert "the request is 307204 bytes; the arena takes at most 262144 bytes" in error.message
    assert "UploadBot" in error.message and "upgrade the arena CLI" in error.message


@pytest.mark.parametrize(
    ("form", "points", "leader", "header", "value"),
    [(pb.TOURNAMENT_FORMAT_ROUND_ROBIN, 3.5, "leader ann 3.5 pts", "points", "3.5"),
     # a ladder ranks by the conservative rating, which is no count of points
     (pb.TOURNAMENT_FORMAT_LADDER, 28.22951, "leader ann (mu-3sigma 28.23)", "mu-3sigma",
      "28.23")],
)  # fmt: skip
def test_watch_names_what_ranks_the_standings(
    form: int, points: float, leader: str, header: str, value: str
) -> None:
    event = pb.WatchTournamentResponse(
        tournament=pb.Tournament(name="t", format=form, status="running"), message="m",
        standings=[pb.Standing(rank=1, bot="ann", points=points, games=4, wins=3)],
    )  # fmt: skip
    assert remote.watch_line(event).endswith(leader)
    head, row = remote.standings_lines(event)
    assert head.split() == ["#", "bot", header, "games", "W/D/L"]
    assert row.split() == ["1", "ann", value, "4", "3/0/0"]


def test_every_exit_status_is_in_the_help_table() -> None:
    statuses = {v for k, v in vars(remote).items() if k.startswith("EXIT_") and isinstance(v, int)}
    assert statuses
    for value in statuses:
        assert f"\n  {value}  " in remote.EXIT_STATUSES


@pytest.mark.parametrize(
    ("url", "address", "tls"),
    [
        ("grpc://127.0.0.1:50051", "127.0.0.1:50051", False),
        ("127.0.0.1:7", "127.0.0.1:7", False),
        ("grpcs://arena.example:443/", "arena.example:443", True),
        ("grpcs://[::1]:5", "[::1]:5", True),
    ],
)
def test_urls_give_an_address_and_whether_tls(url: str, address: str, tls: bool) -> None:
    assert remote.parse_url(url) == remote.Target(address, tls)


@pytest.mark.parametrize(
    "url", ["http://h:1", "grpc://h", "h:port", "grpcs://:5", "h:0", "h:70000", ""]
)
def test_bad_urls_are_refused_by_name(url: str) -> None:
    with pytest.raises(remote.RemoteError) as refused:
        remote.parse_url(url)
    assert refused.value.status == remote.EXIT_USAGE
    assert repr(url) in refused.value.message


def test_config_dir_follows_xdg_only_when_absolute(tmp_path: Path) -> None:
    assert remote.config_dir({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "kahuna-arena"
    home = Path.home() / ".config" / "kahuna-arena"
    assert remote.config_dir({"XDG_CONFIG_HOME": "relative"}) == home
    assert remote.config_dir({}) == home


def test_a_login_is_saved_0600_and_read_back(tmp_path: Path) -> None:
    endpoint = Endpoint("h:1", "tok", True, tmp_path / "ca.pem")
    directory = tmp_path / "cfg"
    path = remote.save_login(endpoint, directory)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert remote.load_login(directory) == endpoint
    path.chmod(0o644)
    remote.save_login(endpoint, directory)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_missing_or_broken_logins_are_refused(tmp_path: Path) -> None:
    with pytest.raises(remote.RemoteError, match="not logged in"):
        remote.load_login(tmp_path)
    (tmp_path / remote.CONFIG_NAME).write_text("{}")
    with pytest.raises(remote.RemoteError, match="not a saved login"):
        remote.load_login(tmp_path)


@pytest.mark.parametrize(("text", "token"), [("abc\n", "abc"), ("  xyz  \nmore\n", "xyz")])
def test_the_token_is_the_first_line_of_stdin(text: str, token: str) -> None:
    assert remote.read_token(io.StringIO(text)) == token


@pytest.mark.parametrize("text", ["", "\n", "two words\n"])
def test_an_empty_or_spaced_token_is_refused(text: str) -> None:
    with pytest.raises(remote.RemoteError, match="no token"):
        remote.read_token(io.StringIO(text))


def test_a_packed_bot_unpacks_on_the_server_side_to_the_same_bot(tmp_path: Path) -> None:
    bot = tmp_path / "mine"
    shutil.copytree(SAMPLE_RANDOM_BOT, bot)
    (bot / "__pycache__").mkdir(exist_ok=True)  # (as an import of the bot leaves it)
    (bot / "__pycache__" / "x.pyc").write_bytes(b"junk")
    data = remote.pack_bot(bot)
    target = tmp_path / "unpacked"
    target.mkdir()
    root = unpack_bot_archive(data, target, "tar.gz")
    assert load_bot(root).name == load_bot(bot).name
    assert sorted(p.name for p in root.iterdir()) == sorted(
        p.name for p in bot.iterdir() if p.name != "__pycache__"
    )
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        names = archive.getnames()
    assert all(not n.endswith(".pyc") for n in names)


def test_bad_bot_directories_are_refused_before_upload(tmp_path: Path) -> None:
    with pytest.raises(remote.RemoteError, match="not a directory"):
        remote.pack_bot(tmp_path / "nothing")
    with pytest.raises(remote.RemoteError, match=r"bot\.toml"):
        remote.pack_bot(tmp_path)
    bot = tmp_path / "escape"
    shutil.copytree(SAMPLE_RANDOM_BOT, bot)
    (bot / "out").symlink_to("/etc/passwd")
    with pytest.raises(remote.RemoteError, match="outside") as refused:
        remote.pack_bot(bot)
    assert refused.value.status == remote.EXIT_USAGE


@pytest.mark.parametrize("megabytes", [40, 1], ids=["40 MB file", "control: 1 MB"])
def test_a_bot_too_big_to_upload_is_refused_while_packing(tmp_path: Path, megabytes: int) -> None:
    """A directory over the upload limit is refused while it is packed, never packed whole
    in memory first (a 150 MB file would cost 200 MB of RSS)."""
    import tracemalloc

    bot = tmp_path / "heavy"
    shutil.copytree(SAMPLE_RANDOM_BOT, bot)
    (bot / "weights.bin").write_bytes(os.urandom(megabytes * 1024 * 1024))  # incompressible
    tracemalloc.start()
    try:
        if megabytes == 1:
            assert len(remote.pack_bot(bot)) > megabytes * 1024 * 1024
            return
        limit = r"packs to .*bytes; the arena takes at most 8388608"
        with pytest.raises(remote.RemoteError, match=limit) as refused:
            remote.pack_bot(bot)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert refused.value.status == remote.EXIT_LIMIT
    assert peak < 3 * 8388608, peak


def test_rows_are_aligned_and_numbers_right_justified() -> None:
    reply = pb.ListBotsResponse(
        bots=[pb.BotVersion(name="b", version="v2", games=10), pb.BotVersion(name="a", games=3)]
    )
    lines = remote.bots_lines(reply)
    assert lines[0].split() == ["bot", "version", "owner", "mu", "sigma", "games", "W/D/L"]
    assert [line.split()[0] for line in lines[1:]] == ["a", "b"]
    assert len({len(line) for line in lines}) == 1
    assert remote.bots_lines(pb.ListBotsResponse())[0].startswith("no bots")


def test_tournaments_are_rows_with_their_progress() -> None:
    reply = pb.ListTournamentsResponse(
        tournaments=[
            pb.Tournament(id=2, name="swiss-1", format=pb.TOURNAMENT_FORMAT_SWISS,
                          status="running", entrants=["a", "b", "c"], games_played=4,
                          games_scheduled=12),
            pb.Tournament(id=1, name="rr", format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN,
                          status="finished", entrants=["a", "b"], games_played=2,
                          games_scheduled=2, seed_commitment="c0ffee"),
        ]
    )  # fmt: skip
    lines = remote.tournaments_lines(reply)
    assert [line.split() for line in lines[1:]] == [
        ["2", "swiss-1", "swiss", "running", "3", "4/12", "-"],
        ["1", "rr", "round-robin", "finished", "2", "2/2", "c0ffee"],
    ]
    # as the local list, with the seed commitment
    assert lines[0].split() == [
        "id", "name", "format", "status", "bots", "games", "seed", "commitment",
    ]  # fmt: skip
    assert remote.tournament_json(reply.tournaments[0])["format"] == "swiss"
    assert remote.tournaments_lines(pb.ListTournamentsResponse()) == ["no tournaments yet"]


@pytest.mark.parametrize(("flags", "bank"), [([], None), (["--bank-ms", "0"], 0),
                                           (["--bank-ms", "500"], 500)])  # fmt: skip
def test_a_bank_of_0_is_sent_and_an_unset_one_left_to_the_server(
    flags: list[str], bank: int | None
) -> None:
    parser = argparse.ArgumentParser()
    remote.register(parser.add_subparsers())
    args = parser.parse_args(["remote", "tournament", "create", "t", "a", "b", *flags])
    request = remote.create_request(args)
    assert (request.bank_ms if request.HasField("bank_ms") else None) == bank


def test_play_passes_the_login_to_the_connector(tmp_path: Path) -> None:
    endpoint = Endpoint("h:1", "tok", True, tmp_path / "ca.pem")
    argv = remote.play_argv(endpoint, "mine", [sys.executable, "bot.py"], 2, 3)
    assert argv == ["--arena", "h:1", "--bot", "mine", "--max-seats", "2", "--max-parallel",
                    "3", "--tls", "--tls-ca", str(tmp_path / "ca.pem"), "--", sys.executable,
                    "bot.py"]  # fmt: skip
    with pytest.raises(remote.RemoteError, match="after --"):
        remote.play_argv(endpoint, "mine", [])
    with pytest.raises(remote.RemoteError, match="no such program"):
        remote.play_argv(endpoint, "mine", ["no-such-program-here"])


# ------------------------------------------------------------------ real servers


@dataclass
class Served:
    store: Store
    port: int
    admin: str
    alice: str
    bob: str
    url: str
    login_flags: list[str]
    credentials: grpc.ChannelCredentials | None

    def stub(self) -> tuple[grpc.Channel, pb_grpc.ArenaServiceStub]:
        target = f"127.0.0.1:{self.port}"
        channel = (
            grpc.insecure_channel(target)
            if self.credentials is None
            else grpc.secure_channel(target, self.credentials)
        )
        return channel, pb_grpc.ArenaServiceStub(channel)

    def tournament(self, name: str, bots: list[str], games: int = 2) -> None:
        channel, stub = self.stub()
        with channel:
            stub.CreateTournament(
                pb.CreateTournamentRequest(
                    name=name, format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN, bots=bots,
                    games_per_match=games, seed=3, start=True,
                ),
                metadata=(("authorization", f"Bearer {self.admin}"),),
            )  # fmt: skip


def _serve(directory: Path, server_credentials: object, **fields: object) -> Iterator[Served]:
    store = Store.open(directory / "data")
    opponent = load_bot(SAMPLE_RANDOM_BOT)
    add_bot_version(store, opponent)

    def smoke(bot_dir: Path) -> SubmissionCheck:
        return SubmissionCheck(refusal=smoke_failure(load_bot(bot_dir), opponent))

    server, port = create_server(
        "127.0.0.1:0", store=store, options=ServiceOptions(concurrency=2, smoke_check=smoke),
        credentials=server_credentials,  # type: ignore[arg-type]
    )  # fmt: skip
    server.start()
    try:
        yield Served(
            store, port, ensure_admin_token(store), create_token(store, "alice"),
            create_token(store, "bob"), **fields,  # type: ignore[arg-type]
        )  # fmt: skip
    finally:
        server.stop(grace=None)
        store.close()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"), "arena")


@pytest.fixture(scope="module", params=["plain", "tls"])
def arena(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          pki: Pki) -> Iterator[Served]:  # fmt: skip
    directory = tmp_path_factory.mktemp(request.param)
    if request.param == "plain":
        yield from _serve(directory, None, url="grpc://127.0.0.1:{port}", login_flags=[],
                          credentials=None)  # fmt: skip
        return
    tls = load_server_tls(pki.server.cert_path, pki.server.key_path, None)
    yield from _serve(
        directory, tls.grpc_credentials(), url="grpcs://127.0.0.1:{port}",
        login_flags=["--tls-ca", str(pki.ca.cert_path)],
        credentials=grpc.ssl_channel_credentials(pki.ca.cert_pem),
    )  # fmt: skip


@dataclass
class Run:
    status: int
    out: str
    err: str


Cli = Callable[..., Run]


@pytest.fixture
def arena_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Cli]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("COLUMNS", raising=False)  # a pipe: every column (xdist may set it)

    def run(*argv: str, stdin: str = "") -> Run:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        capsys.readouterr()
        status = main(["remote", *argv])
        captured = capsys.readouterr()
        return Run(status, captured.out, captured.err)

    yield run


def _login(arena: Served, run: Cli, token: str) -> Run:
    url = arena.url.format(port=arena.port)
    return run("login", url, *arena.login_flags, stdin=token + "\n")


def _refusal(result: Run, status: int, words: str, *, notices: int = 0) -> None:
    """One refusal line on standard error (after ``notices`` lines said before a long
    wait: a submission's), nothing on standard output."""
    assert result.status == status, result
    assert result.out == "", result.out
    refusal = "".join(result.err.splitlines(keepends=True)[notices:])
    assert refusal.count("\n") == 1 and refusal.startswith("arena remote: "), result.err
    assert words in refusal
    assert "Traceback" not in result.err


@pytest.mark.slow
def test_login_goes_through_while_the_bots_are_not_public_yet(
    arena_cli: Cli, tmp_path: Path
) -> None:
    """Under a spectator delay, a list first asked for just after a game ended is not
    public yet (UNAVAILABLE): the arena checked the token before that, so login saves it;
    a wrong token is still refused."""
    store = Store.open(tmp_path / "data")
    demo = play_demo_tournament(store, tmp_path / "bots", bots=("ann", "bob"), max_games=1)
    server, port = create_server(
        "127.0.0.1:0", store=store, options=ServiceOptions(spectator_delay_s=3600.0)
    )
    server.start()
    try:
        login = ("login", f"grpc://127.0.0.1:{port}")
        _refusal(arena_cli(*login, stdin="wrong\n"), remote.EXIT_UNAUTHENTICATED, "unknown token")
        result = arena_cli(*login, stdin=create_token(store, "alice") + "\n")
        assert result.status == 0, result
        assert "bots not public yet: the spectator delay" in result.out
        _refusal(arena_cli("bots"), remote.EXIT_UNREACHABLE, "not public yet")
    finally:
        server.stop(grace=None)
        assert demo.lease is not None
        demo.lease.release()
        store.close()


@pytest.mark.slow
def test_login_checks_the_token_and_saves_it_0600(
    arena: Served, arena_cli: Cli, tmp_path: Path
) -> None:
    _refusal(_login(arena, arena_cli, "wrong"), remote.EXIT_UNAUTHENTICATED, "unknown token")
    assert not (tmp_path / "config" / "kahuna-arena" / remote.CONFIG_NAME).exists()
    result = _login(arena, arena_cli, arena.alice)
    assert result.status == 0, result
    saved = tmp_path / "config" / "kahuna-arena" / remote.CONFIG_NAME
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert json.loads(saved.read_text())["token"] == arena.alice
    bots = arena_cli("bots")
    assert bots.status == 0 and "python_random" in bots.out


def test_commands_before_login_say_so(arena_cli: Cli) -> None:
    _refusal(arena_cli("bots"), remote.EXIT_USAGE, "not logged in")


REACHABLE_LOGIN = '{"address": "127.0.0.1:1", "token": "tok"}'
LOCAL_REFUSALS = [
    # (case, saved login, arguments, stdin, exit status, words). Nothing listens on port 1:
    # a command that gets as far as calling the arena says it cannot be reached (8).
    ("login a JSON list", "[]", ["bots"], "", remote.EXIT_USAGE, "not a saved login"),
    ("login a JSON string", '"x"', ["bots"], "", remote.EXIT_USAGE, "not a saved login"),
    ("saved token not ASCII", '{"address": "127.0.0.1:1", "token": "\u00e9"}', ["bots"], "",
     remote.EXIT_USAGE, "not a saved login"),
    ("control: a saved login", REACHABLE_LOGIN, ["bots"], "", remote.EXIT_UNREACHABLE,
     "cannot be reached"),
    ("game id past int64", REACHABLE_LOGIN, ["record", str(2**63)], "", remote.EXIT_USAGE,
     f"GAME_ID must be a positive game id, at most {2**63 - 1}, got {2**63}"),
    ("game id 0", REACHABLE_LOGIN, ["record", "0"], "", remote.EXIT_USAGE, "got 0"),
    ("control: the last game id", REACHABLE_LOGIN, ["record", str(2**63 - 1)], "",
     remote.EXIT_UNREACHABLE, "cannot be reached"),
    ("token not ASCII", None, ["login", "127.0.0.1:1"], "t\u00f6ken\n", remote.EXIT_USAGE,
     "the token must be printable ASCII"),
    ("token with a control byte", None, ["login", "127.0.0.1:1"], "tok\x01\n",
     remote.EXIT_USAGE, "the token must be printable ASCII"),
    ("control: an ASCII token", None, ["login", "127.0.0.1:1"], "tok\n",
     remote.EXIT_UNREACHABLE, "cannot be reached"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("saved", "argv", "stdin", "status", "words"), [case[1:] for case in LOCAL_REFUSALS],
    ids=[case[0] for case in LOCAL_REFUSALS],
)  # fmt: skip
def test_broken_logins_and_values_no_call_can_carry_are_one_line(
    arena_cli: Cli, tmp_path: Path, saved: str | None, argv: list[str], stdin: str, status: int,
    words: str,
) -> None:  # fmt: skip
    """Each is one line and a status: no traceback (AttributeError, protobuf's ValueError),
    no INTERNAL."""
    if saved is not None:
        directory = tmp_path / "config" / "kahuna-arena"
        directory.mkdir(parents=True)
        (directory / remote.CONFIG_NAME).write_text(saved, encoding="utf-8")
    _refusal(arena_cli(*argv, stdin=stdin), status, words)


class _Quiet(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Nothing on stderr: the test reads the command's."""


@pytest.fixture
def web_like_port() -> Iterator[int]:
    """A port that speaks HTTP/1, as `arena serve --web-port`'s does (it answers 400 here)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("scheme", "words"),
    [("grpc", "an HTTP/1 server answered, as the web pages' port does: log in to the arena"
              " API's port, which `arena serve` prints (50051 unless --port)"),
     ("grpcs", "that port does not speak TLS: an arena that serves plaintext (`arena serve`"
               " says so) is logged in to with grpc://")],
)  # fmt: skip
def test_a_login_to_a_port_that_is_not_the_api_says_which_port_to_use(
    arena_cli: Cli, web_like_port: int, scheme: str, words: str
) -> None:
    """The web pages' port (the address `arena serve` prints first to a browser), or TLS to
    a plaintext port: gRPC's words (HTTP/2 framing, an SSL version) and what to do."""
    url = f"{scheme}://127.0.0.1:{web_like_port}"
    _refusal(arena_cli("login", url, stdin="tok\n"), remote.EXIT_UNREACHABLE, words)


def _login_tls_flags(pki: Pki, tmp_path: Path, case: str) -> tuple[list[str], str]:
    """The TLS flags of one case of LOGIN_TLS, and the words its refusal must hold."""
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    ca, cert, key = str(pki.ca.cert_path), str(pki.client.cert_path), str(pki.client.key_path)
    cases = {
        "CA not PEM": (["--tls-ca", str(garbage)], f"--tls-ca {garbage}: not a PEM certificate"),
        "CA a directory": (["--tls-ca", str(tmp_path)], "is a directory, not a PEM file"),
        "CA missing": (["--tls-ca", str(tmp_path / "no.pem")], "no.pem: no such file"),
        "cert not PEM": (["--tls-ca", ca, "--tls-cert", str(garbage), "--tls-key", key],
                         f"--tls-cert {garbage}: not a PEM certificate"),
        "key of another cert": (["--tls-ca", ca, "--tls-cert", cert,
                                 "--tls-key", str(pki.server.key_path)], "does not match"),
        "control: good files": (["--tls-ca", ca, "--tls-cert", cert, "--tls-key", key],
                                "cannot be reached"),
    }  # fmt: skip
    return cases[case]


@pytest.mark.parametrize("case", ["CA not PEM", "CA a directory", "CA missing", "cert not PEM",
                                  "key of another cert", "control: good files"])  # fmt: skip
def test_login_checks_its_tls_files_before_any_call(
    arena_cli: Cli, pki: Pki, tmp_path: Path, case: str
) -> None:
    """Each bad TLS file is named by login before any call (exit 2), not reported as 'the
    arena cannot be reached ... Failed to create security handshaker' (exit 8) after a line
    of gRPC's own log."""
    flags, words = _login_tls_flags(pki, tmp_path, case)
    status = remote.EXIT_UNREACHABLE if case.startswith("control") else remote.EXIT_USAGE
    _refusal(arena_cli("login", "grpcs://127.0.0.1:1", *flags, stdin="tok\n"), status, words)


def test_a_login_that_cannot_be_saved_is_one_refusal(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory\n")
    with pytest.raises(remote.RemoteError, match="cannot save the login") as refused:
        remote.save_login(Endpoint("h:1", "tok"), tmp_path / "file" / "kahuna-arena")
    assert refused.value.status == remote.EXIT_USAGE


def test_an_unreachable_arena_is_one_line(arena_cli: Cli, tmp_path: Path) -> None:
    remote.save_login(Endpoint("127.0.0.1:1", "tok"), tmp_path / "config" / "kahuna-arena")
    _refusal(arena_cli("leaderboard"), remote.EXIT_UNREACHABLE, "127.0.0.1:1")


@pytest.mark.slow
def test_submit_plays_the_smoke_match_and_owns_the_bot(
    arena: Served, arena_cli: Cli, tmp_path: Path
) -> None:
    bot = tmp_path / "alice_bot"
    shutil.copytree(SAMPLE_RANDOM_BOT, bot)
    toml = (bot / "bot.toml").read_text()
    (bot / "bot.toml").write_text(toml.replace('"python_random"', '"alice_bot"'))
    # larger than the API's message limit: the archive goes in chunks (UploadBot)
    (bot / "weights.bin").write_bytes(random.Random(5).randbytes(MAX_REQUEST_BYTES + 1024))
    assert _login(arena, arena_cli, arena.alice).status == 0
    first = arena_cli("submit", str(bot))
    assert first.status == 0, first
    assert "alice_bot version" in first.out and "smoke match: passed" in first.out
    assert first.err.startswith("uploading alice_bot (")  # said before the minute's wait
    assert "the submission scenarios of `arena bot check`, then a 2-game smoke match" in first.err
    again = arena_cli("submit", str(bot))
    assert again.status == 0 and "already on the arena" in again.out
    assert _login(arena, arena_cli, arena.bob).status == 0
    (bot / "note.txt").write_text("a new version")
    _refusal(arena_cli("submit", str(bot)), remote.EXIT_PERMISSION, "another user", notices=1)


@pytest.mark.slow
def test_a_bot_that_fails_its_smoke_match_is_refused_with_the_reason(
    arena: Served, arena_cli: Cli, tmp_path: Path
) -> None:
    bot = tmp_path / "crasher"
    shutil.copytree(SAMPLE_RANDOM_BOT, bot)
    toml = (bot / "bot.toml").read_text()
    (bot / "bot.toml").write_text(toml.replace('"python_random"', '"crasher"'))
    (bot / "bot.py").write_text("import sys\nsys.exit(3)\n")
    assert _login(arena, arena_cli, arena.alice).status == 0
    _refusal(arena_cli("submit", str(bot)), remote.EXIT_REFUSED, "bot refused", notices=1)


@pytest.mark.slow
def test_watch_leaderboard_and_record_follow_a_tournament(
    arena: Served, arena_cli: Cli, tmp_path: Path
) -> None:
    assert _login(arena, arena_cli, arena.alice).status == 0
    _refusal(arena_cli("watch", "no-such"), remote.EXIT_NOT_FOUND, "no-such")
    arena.tournament("cli-watch", ["python_random", _second_bot(arena)])
    watched = arena_cli("watch", "cli-watch")
    assert watched.status == 0, watched
    lines = watched.out.splitlines()
    assert lines[0].startswith("cli-watch: ")
    assert any("finished" in line for line in lines)
    assert any(line.split()[:2] == ["#", "bot"] for line in lines)
    again = arena_cli("watch", "cli-watch")  # finished: where it stands, said once
    heads = [line for line in again.out.splitlines() if line.startswith("cli-watch: ")]
    assert len(heads) == 1 and "finished: tournament is finished" in heads[0], again.out
    listed = arena_cli("tournament", "list")
    assert listed.status == 0, listed
    assert listed.out.split()[:6] == ["id", "name", "format", "status", "bots", "games"]
    row = next(line.split() for line in listed.out.splitlines() if "cli-watch" in line)
    assert row[2:6] == ["round-robin", "finished", "2", "2/2"]
    assert row[6] == get_tournament(arena.store, "cli-watch").commitment
    as_json = json.loads(arena_cli("tournaments", "--json").out)
    assert any(t["name"] == "cli-watch" and t["status"] == "finished" for t in as_json)
    board = arena_cli("leaderboard", "--json")
    assert board.status == 0
    entries = json.loads(board.out)
    assert {e["bot"] for e in entries} >= {"python_random"}
    assert all(e["games"] >= 1 for e in entries if e["bot"] == "python_random")
    table = arena_cli("leaderboard")
    assert table.out.split()[:3] == ["#", "bot", "version"]
    game = list_games(arena.store)[-1].id
    out = tmp_path / "game.json"
    fetched = arena_cli("record", str(game), "-o", str(out))
    assert fetched.status == 0, fetched
    assert json.loads(out.read_text()) == game_record(arena.store, game)
    printed = arena_cli("record", str(game))
    assert json.loads(printed.out) == json.loads(out.read_text())
    _refusal(arena_cli("record", "999999"), remote.EXIT_NOT_FOUND, "999999")
    _refusal(arena_cli("record", "0"), remote.EXIT_USAGE, "positive")


@pytest.mark.slow
def test_remote_audit_checks_a_real_tournament_from_what_the_arena_publishes(
    arena: Served, arena_cli: Cli, tmp_path: Path
) -> None:
    """A tournament played by the server's runner passes `arena remote audit` (the
    participant's own check of the published bundle); a changed stored record, or a
    commitment other than the one noted at creation, fails it with exit 9."""
    assert _login(arena, arena_cli, arena.bob).status == 0
    _refusal(arena_cli("audit", "no-such"), remote.EXIT_NOT_FOUND, "no-such")
    arena.tournament("cli-audit", ["python_random", _second_bot(arena)])
    noted = get_tournament(arena.store, "cli-audit").commitment
    assert noted is not None
    shown = json.loads(arena_cli("tournaments", "--json").out)
    assert {t["name"]: t["seed_commitment"] for t in shown}["cli-audit"] == noted
    watched = arena_cli("watch", "cli-audit")
    assert watched.status == 0 and "finished" in watched.out
    saved = tmp_path / "bundle.json"
    passed = arena_cli("audit", "cli-audit", "--commitment", noted, "--save", str(saved))
    assert passed.status == 0, passed
    assert "pass: the revealed secret and the published parameters hash to the commitment" \
        in passed.out
    assert "all 2 games are stored" in passed.out
    assert json.loads(saved.read_text())["commitment"] == noted
    held = arena_cli("audit", "cli-audit")  # to the commitment the listing above noted
    assert held.status == 0 and "the commitment is the one this computer noted on" in held.out
    wrong = arena_cli("audit", "cli-audit", "--commitment", "0" * 64)
    assert wrong.status == remote.EXIT_AUDIT_FAILED and "you noted" in wrong.err
    game = list_games(arena.store, tournament_id=get_tournament(arena.store, "cli-audit").id)[0].id
    record = game_record(arena.store, game)
    deal = [str(card) for card in record["deal"]]  # type: ignore[attr-defined]
    swap = next(i for i, card in enumerate(deal) if card != deal[0])
    deal[0], deal[swap] = deal[swap], deal[0]
    record["deal"] = deal
    with arena.store.transaction() as db:
        db.execute("UPDATE games SET record = ? WHERE id = ?", (json.dumps(record), game))
    failed = arena_cli("audit", "cli-audit", "--json")
    verdict = json.loads(failed.out)
    assert failed.status == remote.EXIT_AUDIT_FAILED and not verdict["ok"]
    assert f"game {game} " in verdict["problem"] and "deal" in verdict["problem"]


@pytest.mark.slow
def test_the_admin_creates_starts_and_stops_tournaments_from_the_remote_cli(
    arena: Served, arena_cli: Cli
) -> None:
    second = _second_bot(arena)
    assert _login(arena, arena_cli, arena.alice).status == 0
    _refusal(arena_cli("tournament", "create", "cli-admin", "python_random", second),
             remote.EXIT_PERMISSION, "admin")  # fmt: skip
    assert _login(arena, arena_cli, arena.admin).status == 0
    created = arena_cli("tournament", "create", "cli-admin", "python_random", second,
                        "--games", "2", "--seed", "5")  # fmt: skip
    assert created.status == 0, created
    assert created.out.startswith("created tournament 'cli-admin' (id ")
    assert "round-robin, 2 entrants): created, 0/2 games; seed commitment " in created.out
    _refusal(arena_cli("tournament", "stop", "cli-admin"), remote.EXIT_REFUSED,
             "'cli-admin' is not running in this server: tournament is created")  # fmt: skip
    _refusal(arena_cli("tournament", "start", "no-such"), remote.EXIT_NOT_FOUND, "no-such")
    started = arena_cli("tournament", "start", "cli-admin")
    assert started.status == 0 and "started tournament 'cli-admin'" in started.out, started
    watched = arena_cli("watch", "cli-admin")
    assert watched.status == 0 and "finished" in watched.out, watched
    long = arena_cli("tournament", "create", "cli-long", "python_random", second,
                     "--games", "40", "--start")  # fmt: skip
    assert long.status == 0 and "created tournament 'cli-long'" in long.out, long
    assert ": running, " in long.out, long  # started, though its thread may not have stored it
    stopped = arena_cli("tournament", "stop", "cli-long")
    assert stopped.status == 0, stopped
    assert "stopped tournament 'cli-long'" in stopped.out and ": interrupted, " in stopped.out
    assert "stopped by the admin (admin) through StopTournament" in stopped.out
    _refusal(arena_cli("tournament", "create", "cli-bad", "python_random", second,
                       "--format", "sprt"), remote.EXIT_REFUSED, "sprt")  # fmt: skip


def _second_bot(arena: Served) -> str:
    """A second entrant: the greedy sample bot, stored directly."""
    greedy = SAMPLE_RANDOM_BOT.parent / "python_greedy"
    return add_bot_version(arena.store, load_bot(greedy))[0].bot


@pytest.mark.slow
def test_play_hosts_a_remote_bot_through_the_connector(
    arena: Served, arena_cli: Cli, tmp_path: Path, pki: Pki
) -> None:
    config = tmp_path / "config"  # arena_cli's XDG_CONFIG_HOME: the login is saved there
    # Only the arena on the path, as for anyone who installed it: `remote play` gives the
    # sample bot (an SDK bot, as uploaded) its SDK, without which importing kahuna_bot fails.
    env = dict(os.environ, XDG_CONFIG_HOME=str(config), PYTHONPATH=str(REPO))
    login = _login(arena, arena_cli, arena.alice)  # in this process; the connector reads it
    assert login.status == 0, login.err
    channel, stub = arena.stub()
    name = f"alice_remote_{'tls' if arena.credentials else 'plain'}"
    with channel:
        stub.RegisterRemoteBot(pb.RegisterRemoteBotRequest(name=name),
                               metadata=(("authorization", f"Bearer {arena.alice}"),))  # fmt: skip
    seen = tmp_path / "bot-env"  # what the bot's environment says of gRPC's experiments
    wrapper = (f'printf %s "${{GRPC_EXPERIMENTS-unset}}" > {shlex.quote(str(seen))}; exec'
               f' {shlex.quote(sys.executable)} {shlex.quote(str(SAMPLE_RANDOM_BOT / "bot.py"))}')
    connector = subprocess.Popen(
        [sys.executable, "-m", "arena", "remote", "play", "--max-seats", "1", name, "--",
         "sh", "-c", wrapper],
        env={k: v for k, v in env.items() if k != "GRPC_EXPERIMENTS"}, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        arena.tournament(f"cli-play-{name}", [name, "python_random"])
        try:
            _, stderr = connector.communicate(timeout=TOURNAMENT_TIMEOUT_S)
        except subprocess.TimeoutExpired as late:
            raise AssertionError(f"the connector did not finish: {late.stderr!r}") from None
    finally:
        connector.kill()
    assert connector.returncode == 0, stderr
    assert "seat offered" in stderr
    assert seen.read_text() == "unset"  # the arena's own tuning stays the arena's
    def status() -> str:
        return str(get_tournament(arena.store, f"cli-play-{name}").status)

    wait_until(lambda: status() == "finished", "the tournament finished", TOURNAMENT_TIMEOUT_S,
               interval_s=0.1, state=status)  # fmt: skip
    games = [g for g in list_games(arena.store) if name in g.bots]
    assert len(games) == 2 and all(g.statuses == ("ok", "ok") for g in games)


PLAY_REFUSALS = [
    # (case, who logs in, bot, exit status, words): the arena refuses the connector
    ("another user's bot", "alice", "bob_remote", remote.EXIT_PERMISSION, "another user"),
    ("no such bot", "alice", "no_such_bot", remote.EXIT_NOT_FOUND, "no_such_bot"),
    ("not a remote bot", "admin", "python_random", remote.EXIT_REFUSED,
     "not a remote bot: the arena runs it; register a remote bot under a name of its own"
     " (`arena remote submit DIR` of a bot.toml with runtime = \"remote\""),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    ("who", "bot", "status", "words"), [case[1:] for case in PLAY_REFUSALS],
    ids=[case[0] for case in PLAY_REFUSALS],
)  # fmt: skip
def test_play_refused_by_the_arena_is_one_line_and_the_status_of_the_table(
    arena: Served, arena_cli: Cli, monkeypatch: pytest.MonkeyPatch,
    who: str, bot: str, status: int, words: str,
) -> None:  # fmt: skip
    monkeypatch.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))  # play sets both
    monkeypatch.delenv(remote.TOKEN_ENV, raising=False)
    channel, stub = arena.stub()
    with channel:  # again unchanged: the same version
        stub.RegisterRemoteBot(pb.RegisterRemoteBotRequest(name="bob_remote"),
                               metadata=(("authorization", f"Bearer {arena.bob}"),))  # fmt: skip
    assert _login(arena, arena_cli, getattr(arena, who)).status == 0
    _refusal(arena_cli("play", bot, "--", sys.executable, str(SAMPLE_RANDOM_BOT / "bot.py")),
             status, words)  # fmt: skip


def test_submit_lines_report_the_conformance_findings() -> None:
    report = pb.ConformanceReport(
        scenarios=[
            pb.ConformanceScenario(name="hand_of_five", passed=True),
            pb.ConformanceScenario(name="final_turns", passed=False, problem="illegal_action"),
        ],
        launch_ms_median=212.0, decision_ms_median=0.35, decision_ms_p99=4.3,
    )  # fmt: skip
    bot = pb.BotVersion(name="mine", version="abc", owner="alice")
    lines = remote.submit_lines(
        pb.SubmitBotResponse(bot=bot, created=True, conformance=report), "python"
    )
    assert lines[1] == "conformance: 1 of 2 scenarios passed"
    assert lines[2] == "  failed final_turns: illegal_action"
    assert "launch to Hello 212 ms" in lines[3] and "4.30 ms p99" in lines[3]
    assert lines[-1] == "smoke match: passed"
    plain = remote.submit_lines(pb.SubmitBotResponse(bot=bot, created=True), "python")
    assert plain == ["mine version abc: submitted (owner alice)", "smoke match: passed"]


@pytest.mark.slow
@pytest.mark.parametrize("size", ["4k", "16m"], ids=["disk full", "control: room"])
def test_record_to_a_full_disk_leaves_no_truncated_file(
    arena: Served, arena_cli: Cli, tmp_path: Path, size: str
) -> None:
    """`arena remote record -o` left a truncated record on a full disk."""
    with small_disk(tmp_path / "disk", size, mode=None) as mounted:
        disk = mounted.root
        assert _login(arena, arena_cli, arena.alice).status == 0
        arena.tournament(f"cli-full-{size}", ["python_random", _second_bot(arena)])
        assert arena_cli("watch", f"cli-full-{size}").status == 0  # until it is finished
        game = list_games(arena.store)[-1].id
        out = disk / "game.json"
        fetched = arena_cli("record", str(game), "-o", str(out))
        left = sorted(path.name for path in disk.iterdir())
        whole = json.loads(out.read_text()) if left else None
    if size == "16m":
        assert fetched.status == 0 and left == ["game.json"], fetched
        assert whole == game_record(arena.store, game)
        return
    _refusal(fetched, remote.EXIT_USAGE, f"{out}: cannot be written (No space left on device)")
    assert left == []


def test_tournament_show_prints_the_committed_parameters_and_checks_them_once_revealed(
    tmp_path: Path,
) -> None:
    """From creation: every field in words and the exact text; once finished, whether the
    revealed secret and that text give the commitment (a changed text does not); text
    that is not parameters is named, never a traceback."""
    from arena import store as st
    from arena.server.convert import tournament_pb
    from arena.tournament.view.committed import shown_parameters
    from tests.tournament.test_committed import committed_cup

    with st.Store.open(tmp_path / "data") as store:
        cup = committed_cup(store, tmp_path / "bots")
        text = shown_parameters(store, cup)
        secret = st.tournament_secret(store, cup.id)
    created = tournament_pb(cup, None, None, text)
    lines = remote.tournament_lines(created)
    assert "  time control:     750 ms per action, 9000 ms bank" in lines
    assert f"  exact text:       {text}" in lines
    assert lines[-1] == "the secret is revealed once the tournament is finished"
    assert remote.tournament_json(created)["committed_parameters"] == text
    finished = tournament_pb(cup, secret, None, text)
    assert remote.tournament_lines(finished)[-1] == (
        "the revealed secret and this text give the seed commitment")
    digested = tournament_pb(cup, secret, None, text, "ab" * 32)
    assert remote.tournament_lines(digested)[-2:] == [
        f"audit bundle digest {'ab' * 32}",
        "(`arena remote audit` prints the digest of the bundle it checked: it must be this"
        " one, and every other participant's)"]  # fmt: skip
    assert remote.tournament_json(digested)["audit_digest"] == "ab" * 32
    assert remote.tournament_json(finished)["audit_digest"] is None
    digested.audit_digest = "\x1b]52;c;aGk=\x07"  # a hostile arena's: never printed as is
    assert remote.tournament_lines(digested)[-1] == (
        "audit bundle digest: the arena sent one that is not 64 hex digits")
    finished.committed_parameters = text.replace('"action_ms":750', '"action_ms":751')
    assert "do NOT give" in remote.tournament_lines(finished)[-1]
    finished.committed_parameters = "\x1b]52;c;aGk=\x07{"
    said = remote.tournament_lines(finished)
    assert any("does not read as parameters" in line for line in said)
    assert "do NOT give" in said[-1]
    bare = remote.tournament_lines(pb.Tournament(name="old", status="finished"))
    assert bare[-1].startswith("committed parameters: none published")


class _OlderArena(pb_grpc.ArenaServiceServicer):
    """An arena without UploadBot (its base answers UNIMPLEMENTED): SubmitBot only."""

    def __init__(self) -> None:
        self.archives: list[bytes] = []

    def SubmitBot(
        self, request: pb.SubmitBotRequest, context: grpc.ServicerContext
    ) -> pb.SubmitBotResponse:
        self.archives.append(request.archive)
        return pb.SubmitBotResponse(bot=pb.BotVersion(name="old_bot", version="v1"), created=True)


@pytest.mark.slow
def test_submit_to_an_arena_without_upload_bot_falls_back_to_submit_bot() -> None:
    older = _OlderArena()
    server = grpc.server(futures.ThreadPoolExecutor(2))
    pb_grpc.add_ArenaServiceServicer_to_server(older, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with Client(Endpoint(f"127.0.0.1:{port}", "tok")) as client:
            reply = client.submit(pb.SubmitBotRequest(archive=b"archive bytes"))
    finally:
        server.stop(None)
    assert reply.created and reply.bot.name == "old_bot"
    assert older.archives == [b"archive bytes"]
