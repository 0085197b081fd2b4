"""`arena remote export` against a real server on loopback: the local export's files, only
what a participant may fetch (no withheld record, nothing within the spectator delay)."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pyarrow.parquet as pq
import pytest

from arena import store as st
from arena.cli import main
from arena.commands import remote
from arena.export.writer import export_public_games
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.server.app import create_server
from arena.server.arena_service import ServiceOptions
from arena.server.exports import game_message
from arena.server.limits import StreamLimits, token_key
from arena.store import create_token, ensure_admin_token
from arena.store.export import stored_games
from arena.testing.demo_data import play_demo_tournament
from arena.testing.waiting import wait_until

pytestmark = pytest.mark.slow

OLD = "2026-01-01T00:00:00.000+00:00"  # long before any spectator delay's cut


@dataclass
class Data:
    directory: Path
    withheld: int  # a game whose deal is still to be played from the other seat
    recent: int  # the one game that ended just now; every other ended at OLD


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Data:
    work = tmp_path_factory.mktemp("remote-export")
    with st.Store.open(work / "data") as store:
        paired = play_demo_tournament(store, work / "bots", name="pair", bots=("a", "b"),
                                      games_per_match=4, max_games=3)  # fmt: skip
        cup = play_demo_tournament(store, work / "bots", name="cup", bots=("a", "b"),
                                   forfeits=1)  # its last game lost on time  # fmt: skip
        withheld = [g for g in paired.game_ids if st.record_withheld(store, g) is not None]
        assert len(withheld) == 1
        recent = max(cup.game_ids)
        with store.transaction() as db:
            db.execute("UPDATE games SET finished_at = ? WHERE id != ?", (OLD, recent))
            # start-up carried by some games, by either seat (the rest, 0: none carried)
            db.execute("UPDATE games SET startup0_ms = id * 100.25 WHERE id % 2 = 1")
            db.execute("UPDATE games SET startup1_ms = id * 7.5 WHERE id % 2 = 0")
    return Data(work / "data", withheld[0], recent)


Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def served(
    data: Data, request: pytest.FixtureRequest, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> Iterator[Callable[[str], Cli]]:  # fmt: skip
    """A server on loopback with the spectator delay ``request.param``; a CLI logged in."""
    store = st.Store.open(data.directory)
    server, port = create_server(
        "127.0.0.1:0", store=store, options=ServiceOptions(spectator_delay_s=request.param)
    )
    server.start()
    tokens = {"admin": ensure_admin_token(store), "user": create_token(store, "alice")}
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    def cli_as(who: str) -> Cli:
        def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
            capsys.readouterr()
            status = main(["remote", *argv])
            out, err = capsys.readouterr()
            return status, out, err

        status, _, err = run("login", f"grpc://127.0.0.1:{port}", stdin=tokens[who] + "\n")
        assert status == 0, err
        return run

    try:
        yield cli_as
    finally:
        server.stop(grace=None)
        store.close()


def _rows(out: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    games: list[dict[str, Any]] = pq.read_table(out / "games.parquet").to_pylist()
    decisions: list[dict[str, Any]] = pq.read_table(out / "decisions.parquet").to_pylist()
    return games, decisions


def _local(data: Data, out: Path, tournament: str | None = None) -> Path:
    with st.Store.open(data.directory) as store:
        tid = None if tournament is None else st.get_tournament(store, tournament).id
        export_public_games(store, out, tid)
    return out


@pytest.mark.parametrize("served", [600.0], indirect=True)
@pytest.mark.parametrize("tournament", [None, "pair"], ids=["every-game", "one-tournament"])
def test_the_admins_remote_export_is_the_local_export(
    data: Data, served: Callable[[str], Cli], tmp_path: Path, tournament: str | None
) -> None:
    run = served("admin")
    scope = [] if tournament is None else ["--tournament", tournament]
    status, out, err = run("export", *scope, "--out", str(tmp_path / "remote"))
    assert status == 0, err
    remote = _rows(tmp_path / "remote")
    assert remote == _rows(_local(data, tmp_path / "local", tournament))
    assert data.withheld not in {g["game_id"] for g in remote[0]}
    assert f"{len(remote[0])} games and {len(remote[1])} decisions written" in out
    if tournament is None:  # the edge cases are in it: a forfeit (no points)
        forfeit = [g for g in remote[0] if g["reason"] == "forfeit"]
        assert forfeit and forfeit[0]["seat0_points"] is None
    startups = {(g["seat0_startup_ms"], g["seat1_startup_ms"]) for g in remote[0]}
    assert any(s0 > 0 for s0, _ in startups) and any(s1 > 0 for _, s1 in startups)
    schema = pq.read_schema(tmp_path / "local" / "games.parquet")
    assert pq.read_schema(tmp_path / "remote" / "games.parquet") == schema


@pytest.mark.parametrize(
    ("served", "recent_sent"), [(600.0, False), (0.0, True)],
    ids=["within-the-delay", "control: no delay"], indirect=["served"],
)  # fmt: skip
def test_a_user_gets_no_withheld_game_and_none_within_the_spectator_delay(
    data: Data, served: Callable[[str], Cli], tmp_path: Path, recent_sent: bool
) -> None:
    status, _, err = served("user")("export", "--out", str(tmp_path / "remote"))
    assert status == 0, err
    games, decisions = _rows(tmp_path / "remote")
    local, local_decisions = _rows(_local(data, tmp_path / "local"))
    sent = {g["game_id"] for g in games}
    assert data.withheld not in sent
    assert (data.recent in sent) is recent_sent
    expected = [g for g in local if recent_sent or g["game_id"] != data.recent]
    assert games == expected
    assert decisions == [d for d in local_decisions if d["game_id"] in sent]


@pytest.mark.parametrize("served", [0.0], indirect=True)
@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (["--tournament", "nope"], 5, "no tournament 'nope'"),
        (["--out", "FILE"], 2, "is not a directory"),
    ],
    ids=["unknown-tournament", "out-is-a-file"],
)
def test_bad_requests_are_one_line_naming_the_problem(
    served: Callable[[str], Cli], tmp_path: Path, argv: list[str], status: int, message: str
) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    out = [] if "--out" in argv else ["--out", str(tmp_path / "out")]
    args = [str(a_file) if value == "FILE" else value for value in argv]
    done, _, err = served("user")("export", *out, *args)
    assert done == status, err
    assert err.count("\n") == 1 and err.startswith("arena remote: ") and message in err
    assert not (tmp_path / "out").exists()


@pytest.fixture
def stub(data: Data) -> Iterator[tuple[pb_grpc.ArenaServiceStub, str]]:
    """ExportGames called directly on a server with no delay, and the admin's token."""
    store = st.Store.open(data.directory)
    server, port = create_server("127.0.0.1:0", store=store)
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield pb_grpc.ArenaServiceStub(channel), ensure_admin_token(store)
    finally:
        server.stop(grace=None)
        store.close()


def test_after_game_id_resumes_after_the_last_game_received(
    data: Data, stub: tuple[pb_grpc.ArenaServiceStub, str]
) -> None:
    service, token = stub
    metadata = (("authorization", f"Bearer {token}"),)
    every = [m.game_id for m in service.ExportGames(pb.ExportGamesRequest(), metadata=metadata)]
    assert every == sorted(every) and data.withheld not in every and len(every) > 3
    rest = service.ExportGames(pb.ExportGamesRequest(after_game_id=every[2]), metadata=metadata)
    assert [m.game_id for m in rest] == every[3:]


@pytest.mark.parametrize(
    ("request_", "token", "code", "message"),
    [
        (pb.ExportGamesRequest(), None, grpc.StatusCode.UNAUTHENTICATED, "token"),
        (pb.ExportGamesRequest(after_game_id=-1), "admin", grpc.StatusCode.INVALID_ARGUMENT,
         "after_game_id must be 0 or a game id, not -1"),
        (pb.ExportGamesRequest(tournament="nope"), "admin", grpc.StatusCode.NOT_FOUND,
         "no tournament 'nope'"),
    ],
    ids=["no-token", "negative-after", "unknown-tournament"],
)  # fmt: skip
def test_refusals_name_the_problem(
    stub: tuple[pb_grpc.ArenaServiceStub, str], request_: pb.ExportGamesRequest,
    token: str | None, code: grpc.StatusCode, message: str,
) -> None:  # fmt: skip
    service, admin = stub
    metadata = () if token is None else (("authorization", f"Bearer {admin}"),)
    with pytest.raises(grpc.RpcError) as refused:
        list(service.ExportGames(request_, metadata=metadata, timeout=20))
    assert refused.value.code() == code
    assert message in (refused.value.details() or "")


# ------------------------------------------------------------------ a hostile or flaky arena


class Flaky(pb_grpc.ArenaServiceServicer):
    """ExportGames sending ``games`` as ``mode`` says: a stream that breaks after two games
    (once, or before any game every time), out of order, with one seat, or a bad record."""

    def __init__(self, games: list[pb.ExportGamesResponse], mode: str) -> None:
        self.games, self.mode = games, mode
        self.asked: list[int] = []

    def ListBots(self, request: object, context: grpc.ServicerContext) -> pb.ListBotsResponse:
        return pb.ListBotsResponse()

    def ExportGames(
        self, request: pb.ExportGamesRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.ExportGamesResponse]:
        self.asked.append(request.after_game_id)
        rest = [g for g in self.games if g.game_id > request.after_game_id]
        if self.mode == "always-breaks":
            context.abort(grpc.StatusCode.UNAVAILABLE, "going away")
        if self.mode == "breaks-once" and len(self.asked) == 1:
            yield from rest[:2]
            context.abort(grpc.StatusCode.UNAVAILABLE, "going away")
        if self.mode == "out-of-order":
            rest = [rest[1], rest[0], *rest[2:]]
        if self.mode == "one-seat":
            del rest[1].bots[1]
        if self.mode == "bad-record":
            rest[1].record_json = "{"
        yield from rest


@pytest.fixture
def flaky_cli(
    data: Data, request: pytest.FixtureRequest, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> Iterator[tuple[Flaky, Cli]]:  # fmt: skip
    with st.Store.open(data.directory) as store:
        games = [game_message(g) for g in stored_games(store)
                 if st.record_withheld(store, g.game_id) is None]  # fmt: skip
    service = Flaky(games, request.param)  # type: ignore[abstract]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pb_grpc.add_ArenaServiceServicer_to_server(service, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(remote, "EXPORT_RESUME_WAIT_S", 0.0)

    def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        capsys.readouterr()
        status = main(["remote", *argv])
        out, err = capsys.readouterr()
        return status, out, err

    assert run("login", f"grpc://127.0.0.1:{port}", stdin="token\n")[0] == 0
    try:
        yield service, run
    finally:
        server.stop(grace=None)


@pytest.mark.parametrize("flaky_cli", ["breaks-once"], indirect=True)
def test_a_broken_stream_is_reopened_after_the_last_game_received(
    data: Data, flaky_cli: tuple[Flaky, Cli], tmp_path: Path
) -> None:
    service, run = flaky_cli
    status, _, err = run("export", "--out", str(tmp_path / "remote"))
    assert status == 0, err
    assert service.asked == [0, service.games[1].game_id]
    assert _rows(tmp_path / "remote") == _rows(_local(data, tmp_path / "local"))


@pytest.mark.parametrize(
    ("flaky_cli", "status", "message"),
    [
        ("always-breaks", remote.EXIT_UNREACHABLE, "going away"),
        ("out-of-order", remote.EXIT_SERVER, "not in id order"),
        ("one-seat", remote.EXIT_SERVER, "not of two seats"),
        ("bad-record", remote.EXIT_SERVER, "cannot be exported"),
    ],
    indirect=["flaky_cli"],
)
def test_a_bad_stream_is_one_line_and_leaves_no_file(
    flaky_cli: tuple[Flaky, Cli], tmp_path: Path, status: int, message: str
) -> None:
    service, run = flaky_cli
    done, _, err = run("export", "--out", str(tmp_path / "out"))
    assert done == status, err
    assert err.count("\n") == 1 and err.startswith("arena remote: ") and message in err
    out = tmp_path / "out"
    assert not out.exists() or not list(out.iterdir())  # not even a partial file
    if service.mode == "always-breaks":
        assert service.asked == [0] * (remote.EXPORT_RESUMES + 1)


def test_an_export_counts_against_the_tokens_open_streams(data: Data) -> None:
    store = st.Store.open(data.directory)
    server, port = create_server("127.0.0.1:0", store=store, limits=StreamLimits(per_token=1))
    server.start()
    alice, bob = create_token(store, "alice"), create_token(store, "bob")
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            service = pb_grpc.ArenaServiceStub(channel)
            as_alice = (("authorization", f"Bearer {alice}"),)
            service.RegisterRemoteBot(pb.RegisterRemoteBotRequest(name="held"), metadata=as_alice)
            held = service.WaitForSeats(pb.WaitForSeatsRequest(bot="held"), metadata=as_alice)
            wait_until(lambda: server.counter.held(token_key(as_alice)) >= 1,
                       "alice's stream open", 10)  # fmt: skip
            with pytest.raises(grpc.RpcError) as refused:
                list(service.ExportGames(pb.ExportGamesRequest(), metadata=as_alice, timeout=20))
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "the limit is 1 streams per token" in (refused.value.details() or "")
            as_bob = (("authorization", f"Bearer {bob}"),)  # control: a token with room
            assert list(service.ExportGames(pb.ExportGamesRequest(), metadata=as_bob))
            held.cancel()  # type: ignore[no-untyped-call]
    finally:
        server.stop(grace=None)
        store.close()
