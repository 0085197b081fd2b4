"""`arena serve` as a real process: port 0, the admin token file, SIGTERM, TLS flags and files
(the refusals of bad flags, made before anything serves, in this process through the
same ``arena.cli.main``)."""

from __future__ import annotations

import http.client
import json
import os
import re
import resource
import signal
import sqlite3
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import NoReturn

import grpc
import pytest

from arena.commands import serve as serve_command
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.sandbox.process import wait_gone
from arena.store import Store
from arena.store.served_delay import ServedDelay, serve_with_delay, served_delay
from arena.testing.waiting import wait_until
from tests.cli import arena_in_process
from tests.server.pki import Pki, make_pki
from tests.tournament.test_runner import _descendants

pytestmark = pytest.mark.slow


def _stored_games(data: Path) -> int:
    """Games in the store (0 while the server has not made it yet)."""
    try:
        db = sqlite3.connect(f"file:{data / 'arena.db'}?mode=ro", uri=True, timeout=5)
        try:
            return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def _read_line(process: subprocess.Popen[str], pattern: str) -> re.Match[str]:
    assert process.stdout is not None
    for _ in range(10):
        line = process.stdout.readline()
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError(f"no line matching {pattern!r}")


def test_serve_prints_its_ports_keeps_an_admin_token_and_stops_on_sigterm(tmp_path: Path) -> None:
    data = tmp_path / "data"
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--web-port", "0",
         "--data-dir", str(data), "--no-cpu-pinning"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        port = int(_read_line(process, r"listening on 127\.0\.0\.1:(\d+)").group(1))
        web_port = int(_read_line(process, r"http://127\.0\.0\.1:(\d+)/").group(1))
        token_path = Path(_read_line(process, r"admin token: (\S+)").group(1))
        assert token_path == data / "admin.token"
        assert token_path.stat().st_mode & 0o777 == 0o600
        token = token_path.read_text().strip()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ArenaServiceStub(channel)
            metadata = (("authorization", f"Bearer {token}"),)
            created = stub.CreateUserToken(pb.CreateUserTokenRequest(user="ann"), metadata=metadata)
            assert (
                stub.ListBots(
                    pb.ListBotsRequest(), metadata=(("authorization", f"Bearer {created.token}"),)
                ).bots
                == []
            )
        with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/", timeout=10) as page:
            assert page.status == 200
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)


def test_ctrl_c_stops_the_server_as_sigterm_does_and_says_nothing(tmp_path: Path) -> None:
    """A Ctrl-C (SIGINT to the terminal's whole group) is the way a person stops the
    server the help names: exit 0, nothing on standard error, no process left."""
    from arena.testing.interrupt import start_interruptible

    process = start_interruptible(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--web-port", "0",
         "--data-dir", str(tmp_path / "data"), "--no-cpu-pinning"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        _read_line(process, r"admin token: (\S+)")
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
    assert (process.returncode, err) == (0, "")


class NotRefused(AssertionError):
    """`arena serve` reached its server: the flags it was given were not refused."""


def _no_server(*_args: object, **_kwargs: object) -> NoReturn:
    raise NotRefused("arena serve went on to start its server instead of refusing")


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """`arena ARGV` in this process (``arena.cli.main``, what the process runs), for a
    refusal before anything serves: its exit status (argparse's too) and standard error.
    Reaching the server fails at once (``NotRefused``) rather than serving until the
    test's timeout."""
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(serve_command, "create_server", _no_server)
        status, _out, err = arena_in_process(capsys, *argv)
    return status, err


def test_serve_refuses_a_bad_port_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err = _refused(capsys, "serve", "--port", "70000", "--data-dir", str(tmp_path))
    assert status == 2 and "--port must be a port number" in err


def test_serve_refuses_a_port_another_arena_serve_listens_on(tmp_path: Path) -> None:
    first = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--data-dir", str(tmp_path / "a")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        port = _read_line(first, r"listening on 127\.0\.0\.1:(\d+)").group(1)
        second = subprocess.run(
            [sys.executable, "-m", "arena", "serve", "--port", port,
             "--data-dir", str(tmp_path / "b")],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert second.returncode == 1 and second.stdout == "", second.stdout
        assert f"arena: cannot listen on 127.0.0.1:{port}" in second.stderr
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(15)


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("127.0.0.1", "Address already in use"),  # the port below is taken
        ("no-such-host.invalid", "cannot resolve 'no-such-host.invalid'"),
        ("192.0.2.1", "Cannot assign requested address"),  # TEST-NET-1: not this machine's
    ],
    ids=["port-taken", "unknown-host", "not-local"],
)
def test_serve_says_why_it_cannot_listen(tmp_path: Path, host: str, reason: str) -> None:
    """It said only gRPC's 'Failed to bind to address ...; set GRPC_VERBOSITY=debug'."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "arena", "serve", "--host", host, "--port", str(port),
             "--data-dir", str(tmp_path)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 1 and done.stdout == "", done.stdout
    last = done.stderr.splitlines()[-1]
    assert last.startswith(f"arena: cannot listen on {host}:{port}: {reason}"), done.stderr


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"), "serve")


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--tls-cert", "{d}/serve-server.crt"], "--tls-cert needs --tls-key"),
        (["--tls-key", "{d}/serve-server.key"], "--tls-key needs --tls-cert"),
        (["--tls-client-ca", "{d}/serve-ca.crt"], "--tls-client-ca needs --tls-cert and --tls-key"),
        (
            ["--tls-cert", "{d}/gone.crt", "--tls-key", "{d}/serve-server.key"],
            "--tls-cert {d}/gone.crt: no such file",
        ),
        (
            ["--tls-cert", "{d}/serve-server.crt", "--tls-key", "{d}/serve-client.key"],
            "--tls-key {d}/serve-client.key does not match the certificate in --tls-cert",
        ),
        (
            ["--tls-cert", "{d}/serve-server.key", "--tls-key", "{d}/serve-server.key"],
            "--tls-cert {d}/serve-server.key: not a PEM certificate",
        ),
    ],
)
def test_serve_refuses_unusable_tls_flags_by_name_before_serving(
    pki: Pki, tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str],
    expected: str,
) -> None:  # fmt: skip
    directory = pki.ca.cert_path.parent
    status, err = _refused(capsys, "serve", "--port", "0", "--data-dir", str(tmp_path),
                           *[f.format(d=directory) for f in flags])  # fmt: skip
    assert status == 2, err
    assert err.startswith("arena: ") and expected.format(d=directory) in err
    assert not (tmp_path / "admin.token").exists()  # refused before anything started


def test_serve_with_tls_serves_grpc_and_the_web_pages_over_tls_only(
    pki: Pki, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--web-port", "0",
         "--data-dir", str(data), "--tls-cert", str(pki.server.cert_path),
         "--tls-key", str(pki.server.key_path)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        port = int(_read_line(process, r"\(gRPC, TLS\) listening on 127\.0\.0\.1:(\d+)").group(1))
        web_port = int(_read_line(process, r"https://127\.0\.0\.1:(\d+)/").group(1))
        token = Path(_read_line(process, r"admin token: (\S+)").group(1)).read_text().strip()
        credentials = grpc.ssl_channel_credentials(pki.ca.cert_pem)
        with grpc.secure_channel(f"127.0.0.1:{port}", credentials) as channel:
            stub = pb_grpc.ArenaServiceStub(channel)
            metadata = (("authorization", f"Bearer {token}"),)
            assert stub.ListBots(pb.ListBotsRequest(), metadata=metadata, timeout=10).bots == []
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel, pytest.raises(grpc.RpcError):
            pb_grpc.ArenaServiceStub(channel).ListBots(
                pb.ListBotsRequest(), metadata=metadata, timeout=10
            )
        trusting = ssl.create_default_context(cafile=str(pki.ca.cert_path))
        url = f"https://127.0.0.1:{web_port}/api/leaderboard"
        with urllib.request.urlopen(url, timeout=10, context=trusting) as page:
            assert page.status == 200
        with pytest.raises(urllib.error.URLError):  # the system roots do not know this CA
            urllib.request.urlopen(url, timeout=10, context=ssl.create_default_context())
        with pytest.raises((urllib.error.URLError, ConnectionError, http.client.HTTPException)):
            urllib.request.urlopen(f"http://127.0.0.1:{web_port}/", timeout=10)
        with urllib.request.urlopen(url, timeout=10, context=trusting) as page:
            assert page.status == 200  # refused clients left the server serving
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)


def test_serve_without_tls_on_a_network_address_warns_that_tokens_travel_in_clear(
    tmp_path: Path,
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--host", "0.0.0.0", "--port", "0",
         "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _read_line(process, r"\(gRPC, plaintext\) listening on 0\.0\.0\.0:\d+")
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=15)
        assert process.returncode == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
    assert "warning" in stderr and "plaintext_api_on_network" in stderr
    assert "travel in clear" in stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--streams-per-token", "0"], "argument --streams-per-token: must be at least 1, got 0"),
        (
            ["--streams-unauthenticated", "-3"],
            "argument --streams-unauthenticated: must be at least 1",
        ),
        (["--streams-total", "0"], "argument --streams-total: must be at least 1, got 0"),
        (["--connections", "0"], "argument --connections: must be at least 1, got 0"),
        (
            ["--hello-wait-s", "0"],
            "argument --hello-wait-s: must be a positive number of seconds, got 0",
        ),
        (
            ["--hello-wait-s", "nan"],
            "argument --hello-wait-s: must be a positive number of seconds, got nan",
        ),
        (["--streams-total", "lots"], "argument --streams-total: 'lots' is not a whole number"),
        (["--calls-per-token", "0"], "argument --calls-per-token: must be at least 1, got 0"),
        (["--limit-bots", "-1"], "argument --limit-bots: must be at least 0, got -1"),
        (["--limit-checks-total", "0"], "argument --limit-checks-total: must be at least 1, got 0"),
        (["--limit-rated-play", "2"], "limit rated_play must be 0 (off) or 1 (on), got 2"),
        (
            ["--limit-checks-total", "200", "--limit-check-queue", "100"],
            "checks_total + check_queue must be at most 256, got 300",
        ),
    ],
)
def test_serve_refuses_a_stream_limit_out_of_range_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    status, err = _refused(capsys, "serve", "--port", "0", "--data-dir", str(tmp_path), *flags)
    assert status == 2 and message in err


def test_serve_holds_the_stream_limit_its_flag_gives(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--data-dir", str(tmp_path),
         "--no-cpu-pinning", "--streams-per-token", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        port = int(_read_line(process, r"listening on 127\.0\.0\.1:(\d+)").group(1))
        admin = Path(_read_line(process, r"admin token: (\S+)").group(1)).read_text().strip()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ArenaServiceStub(channel)
            as_admin = (("authorization", f"Bearer {admin}"),)
            created = stub.CreateUserToken(pb.CreateUserTokenRequest(user="ann"), metadata=as_admin)
            token = created.token
            auth = (("authorization", f"Bearer {token}"),)
            stub.RegisterRemoteBot(pb.RegisterRemoteBotRequest(name="ann_remote"), metadata=auth)
            request = pb.WaitForSeatsRequest(bot="ann_remote")
            first = stub.WaitForSeats(request, metadata=auth, timeout=30)
            refused = None
            for _ in range(100):  # until the first stream is open on the server
                with pytest.raises(grpc.RpcError) as caught:
                    next(iter(stub.WaitForSeats(request, metadata=auth, timeout=0.5)))
                refused = caught.value
                assert isinstance(refused, grpc.Call)
                if refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    break
            assert isinstance(refused, grpc.Call)
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert refused.details() == "too many open streams: the limit is 1 streams per token"
            first.cancel()
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)


def test_stopping_the_server_interrupts_its_tournaments_saying_so(tmp_path: Path) -> None:
    """The tournaments are stopped before the store is closed under them: each reads
    interrupted, "the server was stopped", never 'stopped by an error: ProgrammingError:
    Cannot operate on a closed database.'; and no worker or bot of the server outlives
    it (systemd's KillMode=mixed SIGKILLs only what is left in the service's group,
    and a bot's own control group is outside it on cgroup v2)."""
    _stop_a_long_tournament(tmp_path, whole_group=False)


def test_sigterm_to_the_whole_group_stops_the_server_not_its_workers(tmp_path: Path) -> None:
    """SIGTERM to every process of the server at once (systemd's default KillMode, a
    terminal's group): the pool's workers and forkserver ignore it, so the server's
    own shutdown stops them and the match in play is interrupted as a stopped server's,
    never failed as a worker's death."""
    _stop_a_long_tournament(tmp_path, whole_group=True)


def _stop_a_long_tournament(tmp_path: Path, *, whole_group: bool) -> None:
    import json
    import shutil

    from arena.bots.smoke import SAMPLE_RANDOM_BOT
    from arena.referee import load_bot
    from arena.store import Store, add_bot_version

    data = tmp_path / "data"
    with Store.open(data) as store:
        for name in ("r1", "r2"):
            bot = tmp_path / name
            shutil.copytree(SAMPLE_RANDOM_BOT, bot)
            toml = (bot / "bot.toml").read_text().replace('"python_random"', f'"{name}"')
            (bot / "bot.toml").write_text(toml)
            add_bot_version(store, load_bot(bot))
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--data-dir", str(data),
         "--concurrency", "1", "--no-cpu-pinning"],
        stdout=subprocess.PIPE, stderr=(tmp_path / "stderr").open("w"), text=True,
        start_new_session=whole_group,
    )  # fmt: skip
    try:
        port = int(_read_line(process, r"listening on 127\.0\.0\.1:(\d+)").group(1))
        token = Path(_read_line(process, r"admin token: (\S+)").group(1)).read_text().strip()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            pb_grpc.ArenaServiceStub(channel).CreateTournament(
                pb.CreateTournamentRequest(name="long", format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN,
                                           bots=["r1", "r2"], games_per_match=100, start=True),
                metadata=(("authorization", f"Bearer {token}"),),
            )  # fmt: skip
        wait_until(lambda: _stored_games(data) >= 1, "a game stored", 60, interval_s=0.05)
        family = _descendants(process.pid)  # the forkserver, workers, sandboxes and bots
        assert family, "no worker or bot under the server"
        if whole_group:  # the server, its forkserver and workers (bots: sessions of their own)
            os.killpg(process.pid, signal.SIGTERM)
        else:
            process.send_signal(signal.SIGTERM)  # the server alone, as KillMode=mixed sends it
        assert process.wait(60) == 0
        assert wait_gone(sorted(family), 10), "a worker or bot outlived the stopped server"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
    status = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "status", "long", "--json",
         "--data-dir", str(data)], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    stderr = (tmp_path / "stderr").read_text()  # the API loop ended before the process
    assert "Traceback" not in stderr and "Bad file descriptor" not in stderr, stderr
    assert "match_failed" not in stderr and "worker died" not in stderr, stderr
    shown = json.loads(status.stdout)
    reason = ("interrupted", "the server was stopped")
    assert (shown["status"], shown["interrupted_reason"]) == reason
    assert shown["games_played"] < 100


def test_a_damaged_database_stops_the_ladder_in_one_line_and_every_answer_says_so(
    tmp_path: Path,
) -> None:
    """`arena serve --ladder` whose database has damaged pages (bot_versions': the server
    starts, the ladder's first read meets them): one log line names the file and says
    it is damaged, the ladder stops there for good (no traceback, no retry), the API
    (DATA_LOSS) and the web (500) say so to calls that meet the damage, and nothing
    more is written to the file (the ladder's row is left as the run found it)."""
    from arena.store import DAMAGED_ANSWER
    from arena.testing.waiting import assert_stays
    from tests.store.damage import damage_tables
    from tests.tournament.test_ladder import _add

    data = tmp_path / "data"
    _add(data, tmp_path, "a", "b")
    damage_tables(data, "bot_versions")
    log = tmp_path / "stderr"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "arena", "serve", "--port", "0", "--web-port", "0",
             "--ladder", "--concurrency", "1", "--data-dir", str(data), "--no-cpu-pinning"],
            stdout=subprocess.PIPE, stderr=stderr, text=True,
        )  # fmt: skip
    try:
        port = int(_read_line(process, r"listening on 127\.0\.0\.1:(\d+)").group(1))
        web_port = int(_read_line(process, r"http://127\.0\.0\.1:(\d+)/").group(1))
        token = Path(_read_line(process, r"admin token: (\S+)").group(1)).read_text().strip()
        line = f"{data / 'arena.db'}: the database is damaged (database disk image is malformed);"
        wait_until(lambda: "ladder_stopped" in log.read_text(), "the ladder's stop", 60)
        stopped = [s for s in log.read_text().splitlines() if "ladder_stopped" in s]
        assert len(stopped) == 1 and line in stopped[0], stopped
        assert "the ladder stopped there: restore the file from a backup" in stopped[0]
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ArenaServiceStub(channel)
            admin = (("authorization", f"Bearer {token}"),)
            with pytest.raises(grpc.RpcError) as refused:
                stub.ListBots(pb.ListBotsRequest(), metadata=admin)
        assert (refused.value.code(), refused.value.details()) == (
            grpc.StatusCode.DATA_LOSS, DAMAGED_ANSWER
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as page:
            urllib.request.urlopen(f"http://127.0.0.1:{web_port}/api/leaderboard", timeout=10)
        assert page.value.code == 500 and DAMAGED_ANSWER in page.value.read().decode()
        assert_stays(  # stopped for good: not started again
            lambda: log.read_text().count("ladder_stopped") == 1, 1.0, "one ladder_stopped"
        )
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
    text = log.read_text()
    for sign in ("Traceback", "ladder_crashed", "Exception"):
        assert sign not in text, text
    assert text.count(str(data / "arena.db")) >= 3, text  # the ladder, the API, the web
    db = sqlite3.connect(data / "arena.db")
    try:
        row = db.execute("SELECT status, interrupted_reason FROM tournaments").fetchone()
    finally:
        db.close()
    assert row == ("running", None), row  # the lease file keeps the reason instead


_OPEN_FILES = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[1]), int(sys.argv[2])))
from arena.commands.serve import open_files_for
warning = open_files_for(int(sys.argv[3]))
print(json.dumps([warning, resource.getrlimit(resource.RLIMIT_NOFILE)[0]]))
"""


@pytest.mark.parametrize(
    ("soft", "hard", "connections", "after", "warned"),
    [
        (1024, 8192, 2048, 3072, False),  # a distribution's default soft limit: raised
        (1024, 2000, 2048, 2000, True),  # as far as the hard limit goes, and said
        (8192, 8192, 2048, 8192, False),  # enough already: left alone
        (1024, 1024, 10, 1024, True),  # no room at all beside the connections
    ],
    ids=["raised", "hard-limit-short", "enough", "no-room"],
)  # fmt: skip
def test_the_server_raises_its_open_file_limit_for_its_connections_or_says_why_not(
    soft: int, hard: int, connections: int, after: int, warned: bool
) -> None:
    """Past the open-file limit every accept and open fails (the store's, the bots'), not
    only one more connection's: the server makes room for its connections and the rest."""
    if resource.getrlimit(resource.RLIMIT_NOFILE)[1] < hard:
        pytest.skip(f"this host's hard open-file limit is below {hard}")
    result = subprocess.run(
        [sys.executable, "-c", _OPEN_FILES, str(soft), str(hard), str(connections)],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    warning, soft_after = json.loads(result.stdout)
    assert soft_after == after
    assert (warning is not None) == warned
    if warned:
        assert warning.startswith(f"the open-file limit is {after} (its hard limit), below the"
                                  f" {connections + serve_command.FILES_BESIDE_CONNECTIONS}")
        assert "lower --connections" in warning


def test_serve_stores_its_spectator_delay_and_serves_with_it_when_not_given(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    for flags in (["--spectator-delay-s", "2.5"], []):  # the second start: no flag
        process = subprocess.Popen(
            [sys.executable, "-m", "arena", "serve", "--port", "0", "--data-dir", str(data),
             "--no-cpu-pinning", *flags],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        try:
            assert process.stdout is not None
            lines = [process.stdout.readline()]
            while lines[-1] and not lines[-1].startswith("admin token:"):  # its last line
                lines.append(process.stdout.readline())
            assert "spectator delay: 2.5 s (the data directory's" in "".join(lines), lines
            with Store.open(data) as store:
                assert served_delay(store) == ServedDelay(2.5)
            process.send_signal(signal.SIGTERM)
            assert process.wait(15) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(5)


@pytest.mark.parametrize(
    ("flags", "status", "message"),
    [
        (["--spectator-delay-s", "60"], 2, "--spectator-delay-s 60 is shorter than this data"
         " directory's spectator delay of 3600 seconds (stored by arena serve)"),
        (["--spectator-delay-s", "0"], 2, "give --allow-shorter-delay to use 0 anyway"),
    ],
    ids=["shorter", "none"],
)  # fmt: skip
def test_serve_refuses_a_delay_shorter_than_the_stored_one_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], status: int,
    message: str,
) -> None:
    with Store.open(tmp_path) as store:
        serve_with_delay(store, 3600.0)
    got, err = _refused(capsys, "serve", "--data-dir", str(tmp_path), *flags)
    assert got == status and message in err, err
    with Store.open(tmp_path) as store:
        assert served_delay(store) == ServedDelay(3600)


def test_serve_lowers_the_stored_delay_when_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(tmp_path) as store:
        serve_with_delay(store, 3600.0)
    with pytest.raises(NotRefused):  # it goes on to serve
        _refused(capsys, "serve", "--data-dir", str(tmp_path), "--spectator-delay-s", "0",
                 "--allow-shorter-delay")  # fmt: skip
