"""TLS on the `arena serve` port: the files checked up front, and real servers on port 0.

Certificates are made per test module (tests/server/pki.py). Clients are real
gRPC channels; the remote bot is the SDK's connector as a real process (one
TLS arena) and in process with a client certificate (a mutual-TLS arena),
against a sandboxed sample bot.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from kahuna_bot import Action, Observation
from kahuna_bot.remote import serve_seats, tls_credentials

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.bots.submission import SubmissionCheck
from arena.logs import get_logger
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.referee import load_bot
from arena.server.app import create_server
from arena.server.arena_service import ServiceOptions
from arena.server.tls import TlsConfigError, is_loopback, load_server_tls
from arena.store import (
    Store,
    add_bot_version,
    create_token,
    ensure_admin_token,
    get_tournament,
    list_games,
)
from tests.server.pki import Pki, encrypted_key_pem, make_pki

Code = grpc.StatusCode
REPO = Path(__file__).resolve().parents[2]
SDK_DIR = REPO / "sample_bots" / "sdk" / "python"
TOURNAMENT_TIMEOUT_S = 120.0


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"), "arena")


@pytest.fixture(scope="module")
def other(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """A second CA that signed nothing the arena trusts."""
    return make_pki(tmp_path_factory.mktemp("other-pki"), "other")


# ------------------------------------------------------------- the files, checked up front


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


GARBAGE_CERTIFICATE = b"-----BEGIN CERTIFICATE-----\nbm9wZQ==\n-----END CERTIFICATE-----\n"
BadFiles = Callable[[Pki, Pki, Path], tuple[Path, Path, Path | None]]
BAD_FILES: dict[str, tuple[BadFiles, str]] = {
    "missing certificate": (
        lambda p, o, d: (d / "nope.crt", p.server.key_path, None),
        "--tls-cert {d}/nope.crt: no such file",
    ),
    "missing key": (
        lambda p, o, d: (p.server.cert_path, d / "nope.key", None),
        "--tls-key {d}/nope.key: no such file",
    ),
    "certificate is a directory": (
        lambda p, o, d: (d, p.server.key_path, None),
        "--tls-cert {d}: is a directory, not a PEM file",
    ),
    "certificate not PEM": (
        lambda p, o, d: (_write(d / "c.der", b"\x30\x82\x01\x0a"), p.server.key_path, None),
        "not a PEM certificate",
    ),
    "certificate file holds a key": (
        lambda p, o, d: (p.server.key_path, p.server.key_path, None),
        "--tls-cert {pki}/arena-server.key: not a PEM certificate",
    ),
    "certificate block is garbage": (
        lambda p, o, d: (
            _write(d / "g.crt", GARBAGE_CERTIFICATE),
            p.server.key_path,
            None,
        ),
        "a certificate block does not parse",
    ),
    "key not PEM": (
        lambda p, o, d: (p.server.cert_path, _write(d / "k.txt", b"hunter2\n"), None),
        "--tls-key {d}/k.txt: not a PEM private key",
    ),
    "key file holds a certificate": (
        lambda p, o, d: (p.server.cert_path, p.server.cert_path, None),
        "--tls-key {pki}/arena-server.crt: not a PEM private key",
    ),
    "key of another certificate": (
        lambda p, o, d: (p.server.cert_path, o.server.key_path, None),
        "--tls-key {other}/other-server.key does not match the certificate in --tls-cert",
    ),
    "key encrypted with a passphrase": (
        lambda p, o, d: (
            p.server.cert_path,
            _write(d / "e.key", encrypted_key_pem(p.server.key_pem)),
            None,
        ),
        "the key is encrypted with a passphrase",
    ),
    "missing client CA": (
        lambda p, o, d: (p.server.cert_path, p.server.key_path, d / "ca.pem"),
        "--tls-client-ca {d}/ca.pem: no such file",
    ),
    "client CA not a certificate": (
        lambda p, o, d: (p.server.cert_path, p.server.key_path, p.ca.key_path),
        "--tls-client-ca {pki}/arena-ca.key: not a PEM certificate",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_unusable_files_are_refused_by_flag_file_and_problem(
    case: str, pki: Pki, other: Pki, tmp_path: Path
) -> None:
    make, expected = BAD_FILES[case]
    cert, key, client_ca = make(pki, other, tmp_path)
    with pytest.raises(TlsConfigError) as refused:
        load_server_tls(cert, key, client_ca)
    assert expected.format(
        d=tmp_path, pki=pki.server.cert_path.parent, other=other.server.cert_path.parent
    ) in str(refused.value)


def test_good_files_give_credentials_and_say_whether_clients_need_certificates(pki: Pki) -> None:
    plain = load_server_tls(pki.server.cert_path, pki.server.key_path)
    mutual = load_server_tls(pki.server.cert_path, pki.server.key_path, pki.ca.cert_path)
    assert not plain.mutual and plain.client_ca is None
    assert mutual.mutual and mutual.client_ca == pki.ca.cert_pem
    assert plain.certificate_chain == pki.server.cert_pem
    assert isinstance(mutual.grpc_credentials(), grpc.ServerCredentials)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("[::]", False),
        ("192.0.2.10", False),
        ("no-such-host.invalid", False),
    ],
)
def test_loopback_hosts_are_told_apart_from_the_network(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.slow
@pytest.mark.parametrize(
    ("host", "tls", "warned"),
    [("0.0.0.0", False, True), ("0.0.0.0", True, False), ("127.0.0.1", False, False)],
)
def test_plaintext_on_a_network_address_is_warned_about(
    pki: Pki, tmp_path: Path, host: str, tls: bool, warned: bool
) -> None:
    credentials = (
        load_server_tls(pki.server.cert_path, pki.server.key_path).grpc_credentials()
        if tls
        else None
    )
    get_logger()  # configured before the capture, so the capture is what sees the events
    with Store.open(tmp_path / "data") as store, structlog.testing.capture_logs() as logs:
        server, _ = create_server(f"{host}:0", store=store, credentials=credentials)
        server.stop(grace=None)
    warnings = [e for e in logs if e["event"] == "plaintext_api_on_network"]
    assert bool(warnings) is warned
    if warned:
        assert warnings[0]["log_level"] == "warning"
        assert "travel in clear" in warnings[0]["message"]


# ------------------------------------------------------------- real servers on port 0


@dataclass
class TlsArena:
    store: Store
    port: int
    admin: str
    alice: str
    credentials: grpc.ChannelCredentials | None
    """What a client that should get in uses."""

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def channel(self, credentials: grpc.ChannelCredentials | None) -> grpc.Channel:
        if credentials is None:
            return grpc.insecure_channel(self.target)
        return grpc.secure_channel(self.target, credentials)

    def play_tournament(self, name: str, bots: list[str], games: int) -> int:
        """Create and start a tournament over TLS; wait for its end; its id."""
        with self.channel(self.credentials) as channel:
            stub = pb_grpc.ArenaServiceStub(channel)
            request = pb.CreateTournamentRequest(
                name=name, format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN, bots=bots,
                games_per_match=games, seed=11, start=True,
            )  # fmt: skip
            created = stub.CreateTournament(request, metadata=_auth(self.admin))
            events = stub.WatchTournament(
                pb.WatchTournamentRequest(name=name), metadata=_auth(self.admin),
                timeout=TOURNAMENT_TIMEOUT_S,
            )  # fmt: skip
            assert [e.message for e in events][-1] in ("finished", "tournament is finished")
        tournament_id = int(created.tournament.id)
        assert get_tournament(self.store, tournament_id).status == "finished"
        return tournament_id


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def _serve(
    directory: Path, pki: Pki, *, client_ca: Path | None, credentials: grpc.ChannelCredentials
) -> Iterator[TlsArena]:
    store = Store.open(directory / "data")
    add_bot_version(store, load_bot(SAMPLE_RANDOM_BOT))
    tls = load_server_tls(pki.server.cert_path, pki.server.key_path, client_ca)
    options = ServiceOptions(
        concurrency=2, smoke_check=lambda directory: SubmissionCheck("no smoke here")
    )
    server, port = create_server(
        "127.0.0.1:0", store=store, options=options, credentials=tls.grpc_credentials()
    )
    server.start()
    try:
        yield TlsArena(
            store, port, ensure_admin_token(store), create_token(store, "alice"), credentials
        )
    finally:
        server.stop(grace=None)
        store.close()


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory, pki: Pki) -> Iterator[TlsArena]:
    """TLS with the server's certificate; any client that trusts the CA may connect."""
    credentials = grpc.ssl_channel_credentials(pki.ca.cert_pem)
    yield from _serve(tmp_path_factory.mktemp("tls"), pki, client_ca=None, credentials=credentials)


@pytest.fixture(scope="module")
def mutual(tmp_path_factory: pytest.TempPathFactory, pki: Pki) -> Iterator[TlsArena]:
    """Mutual TLS: clients also present a certificate signed by the CA."""
    credentials = tls_credentials(pki.ca.cert_path, pki.client.cert_path, pki.client.key_path)
    yield from _serve(
        tmp_path_factory.mktemp("mtls"), pki, client_ca=pki.ca.cert_path, credentials=credentials
    )


def _list_bots(arena: TlsArena, credentials: grpc.ChannelCredentials | None) -> list[str]:
    with arena.channel(credentials) as channel:
        stub = pb_grpc.ArenaServiceStub(channel)
        reply = stub.ListBots(pb.ListBotsRequest(), metadata=_auth(arena.alice), timeout=10)
    return [bot.name for bot in reply.bots]


def _refused(arena: TlsArena, credentials: grpc.ChannelCredentials | None) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as refused:
        _list_bots(arena, credentials)
    assert isinstance(refused.value, grpc.Call)
    return refused.value


@pytest.mark.slow
def test_a_client_trusting_the_ca_calls_every_service_over_tls(arena: TlsArena) -> None:
    assert arena.credentials is not None
    assert "python_random" in _list_bots(arena, arena.credentials)
    with arena.channel(arena.credentials) as channel:
        created = pb_grpc.ArenaServiceStub(channel).CreateUserToken(
            pb.CreateUserTokenRequest(user="carol"), metadata=_auth(arena.admin)
        )
        assert created.token
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "kahuna.v1.ArenaService", "kahuna.v1.RefereeService"):
            reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        (answer,) = reflection.ServerReflectionInfo(iter([request]), timeout=10)
        listed = {s.name for s in answer.list_services_response.service}
        assert {"kahuna.v1.ArenaService", "kahuna.v1.RefereeService"} <= listed


@pytest.mark.slow
def test_a_plaintext_client_gets_nothing_from_the_tls_port(arena: TlsArena) -> None:
    assert _refused(arena, None).code() == Code.UNAVAILABLE


@pytest.mark.slow
def test_a_client_trusting_another_ca_refuses_the_server(arena: TlsArena, other: Pki) -> None:
    error = _refused(arena, grpc.ssl_channel_credentials(other.ca.cert_pem))
    assert error.code() == Code.UNAVAILABLE
    assert "CERTIFICATE_VERIFY_FAILED" in (error.details() or "")


@pytest.mark.slow
def test_a_remote_bot_plays_through_tls_with_the_connector(arena: TlsArena, pki: Pki) -> None:
    with arena.channel(arena.credentials) as channel:
        pb_grpc.ArenaServiceStub(channel).RegisterRemoteBot(
            pb.RegisterRemoteBotRequest(name="alice_tls"), metadata=_auth(arena.alice)
        )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SDK_DIR), str(REPO)]),
               KAHUNA_USER_TOKEN=arena.alice)
    connector = subprocess.Popen(
        [sys.executable, "-m", "kahuna_bot.remote", "--arena", arena.target,
         "--tls-ca", str(pki.ca.cert_path), "--bot", "alice_tls",
         "--max-seats", "1", "--", sys.executable, str(SAMPLE_RANDOM_BOT / "bot.py")],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        tournament_id = arena.play_tournament("tls-remote", ["alice_tls", "python_random"], 2)
        _, stderr = connector.communicate(timeout=30)
    finally:
        connector.kill()
    assert connector.returncode == 0, stderr
    games = list_games(arena.store, tournament_id=tournament_id)
    assert len(games) == 2
    assert all(g.statuses == ("ok", "ok") for g in games), [g.statuses for g in games]


REGISTER_WITH_SYSTEM_ROOTS = (
    "import sys\n"
    "from kahuna_bot.remote import ConnectorError, register, tls_credentials\n"
    "try:\n"
    "    print(register(sys.argv[1], sys.argv[2], sys.argv[3], credentials=tls_credentials()))\n"
    "except ConnectorError as error:\n"
    "    sys.exit(str(error))\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("trusted", [True, False], ids=["ca-in-system-roots", "system-roots"])
def test_plain_tls_flag_checks_the_server_against_the_system_roots(
    arena: TlsArena, pki: Pki, trusted: bool
) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SDK_DIR), str(REPO)]))
    env.pop("SSL_CERT_FILE", None)
    if trusted:  # OpenSSL's way to name the system bundle; the arena's CA stands in for it
        env["SSL_CERT_FILE"] = str(pki.ca.cert_path)
    name = f"alice_roots_{trusted}".lower()
    done = subprocess.run(
        [sys.executable, "-c", REGISTER_WITH_SYSTEM_ROOTS, arena.target, arena.alice, name],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    if trusted:
        assert done.returncode == 0 and done.stdout.strip(), done.stderr
    else:
        assert done.returncode == 1 and "CERTIFICATE_VERIFY_FAILED" in done.stderr


@pytest.mark.slow
def test_mutual_tls_admits_only_clients_with_a_certificate_from_the_ca(
    mutual: TlsArena, pki: Pki, other: Pki
) -> None:
    assert "python_random" in _list_bots(mutual, mutual.credentials)
    no_certificate = grpc.ssl_channel_credentials(pki.ca.cert_pem)
    assert _refused(mutual, no_certificate).code() == Code.UNAVAILABLE
    foreign = tls_credentials(pki.ca.cert_path, other.client.cert_path, other.client.key_path)
    assert _refused(mutual, foreign).code() == Code.UNAVAILABLE


@pytest.mark.slow
def test_a_remote_bot_plays_in_process_through_mutual_tls(mutual: TlsArena) -> None:
    with mutual.channel(mutual.credentials) as channel:
        pb_grpc.ArenaServiceStub(channel).RegisterRemoteBot(
            pb.RegisterRemoteBotRequest(name="alice_mtls"), metadata=_auth(mutual.alice)
        )
    status: list[int] = []

    def first_legal(observation: Observation, legal_actions: tuple[Action, ...]) -> Action:
        return legal_actions[0]

    def play() -> None:
        credentials = mutual.credentials
        name = "alice_mtls"
        status.append(
            serve_seats(first_legal, arena=mutual.target, user_token=mutual.alice, name=name,
                        max_seats=1, credentials=credentials)
        )  # fmt: skip

    player = threading.Thread(target=play)
    player.start()
    tournament_id = mutual.play_tournament("mtls-remote", ["alice_mtls", "python_random"], 1)
    player.join(30)
    assert status == [0]
    (game,) = list_games(mutual.store, tournament_id=tournament_id)
    assert game.statuses == ("ok", "ok")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--tls-cert", "{pki}/arena-client.crt"], "--tls-cert and --tls-key go together"),
        (["--tls-ca", "{pki}/missing.pem"], "--tls-ca {pki}/missing.pem: cannot be read"),
        (["--tls-ca", "{pki}/arena-ca.key"], "--tls-ca {pki}/arena-ca.key: not a PEM file"),
    ],
)
def test_the_connector_refuses_unusable_tls_flags_by_name(
    pki: Pki, flags: list[str], expected: str
) -> None:
    directory = pki.ca.cert_path.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SDK_DIR), str(REPO)]),
               KAHUNA_USER_TOKEN="t")
    done = subprocess.run(
        [sys.executable, "-m", "kahuna_bot.remote", "--arena", "127.0.0.1:9", "--bot", "b",
         *[f.format(pki=directory) for f in flags],
         "--", "true"],
        env=env, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 2
    assert expected.format(pki=directory) in done.stderr
