"""Open streams against a real `arena serve` server on port 0: none of them costs a thread.

The server runs with two threads for calls: with a thread per stream, the
streams opened here would leave none for the admin. Each token, and the
streams without one (a Play stream before its Hello), may hold a few streams;
one more is refused with RESOURCE_EXHAUSTED naming the limit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import queue
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.server import rechecks
from arena.server.app import ApiServer, create_server
from arena.server.gateway import PLAY_METHOD
from arena.server.limits import UNAUTHENTICATED, StreamLimits, token_key
from arena.store import (
    Store,
    TournamentConfig,
    TournamentLease,
    TournamentStatus,
    acquire_lease,
    add_ladder_match,
    create_ladder,
    create_token,
    ensure_admin_token,
    list_tokens,
    revoke_tokens,
    set_status,
    start_live_game,
)
from arena.testing.aio import run_apart
from arena.testing.waiting import assert_stays, wait_until

Code = grpc.StatusCode
LIMITS = StreamLimits(per_token=6, unauthenticated=6, hello_wait_s=60.0)
THREADS = 2
WAIT_S = 10.0


@dataclass
class Served:
    server: ApiServer
    channel: grpc.Channel
    stub: pb_grpc.ArenaServiceStub
    admin: str
    alice: str
    bob: str
    leases: list[TournamentLease] = field(default_factory=list)
    """Held by the test: released after it."""

    def held(self, token: str | None) -> int:
        key = UNAUTHENTICATED if token is None else token_key(_auth(token))
        return self.server.counter.held(key)


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@pytest.fixture
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    store = Store.open(tmp_path_factory.mktemp("streams") / "data")
    server, port = create_server("127.0.0.1:0", store=store, max_workers=THREADS, limits=LIMITS)
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = pb_grpc.ArenaServiceStub(channel)
    alice, bob = create_token(store, "alice"), create_token(store, "bob")
    for token, bot in ((alice, "alice_remote"), (bob, "bob_remote")):
        stub.RegisterRemoteBot(pb.RegisterRemoteBotRequest(name=bot), metadata=_auth(token))
    served = Served(server, channel, stub, ensure_admin_token(store), alice, bob)
    yield served
    for lease in served.leases:
        lease.release()
    channel.close()
    server.stop(grace=None).wait(10)
    store.close()


def _until(condition: Callable[[], bool], what: str) -> None:
    wait_until(condition, what, WAIT_S)


def _seats(served: Served, token: str, bot: str) -> grpc.Future:
    request = pb.WaitForSeatsRequest(bot=bot)
    return served.stub.WaitForSeats(request, metadata=_auth(token), timeout=60)  # type: ignore[no-any-return]


def _silent_play(served: Served) -> tuple[grpc.Future, queue.SimpleQueue[bytes | None]]:
    play = served.channel.stream_stream(
        PLAY_METHOD, request_serializer=lambda b: b, response_deserializer=lambda b: b
    )
    outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    return play(iter(outbox.get, None), timeout=60), outbox  # type: ignore[no-any-return]


def _refusal(call: Iterator[object]) -> tuple[Code, str]:
    with pytest.raises(grpc.RpcError) as caught:
        next(call)
    error = caught.value
    assert isinstance(error, grpc.Call)
    return error.code(), error.details() or ""


@pytest.mark.slow
def test_streams_past_a_limit_are_refused_and_the_admin_is_still_answered(
    served: Served,
) -> None:
    calls = [_seats(served, served.alice, "alice_remote") for _ in range(LIMITS.per_token)]
    plays = [_silent_play(served) for _ in range(LIMITS.unauthenticated)]
    _until(lambda: served.held(served.alice) == LIMITS.per_token, "alice's streams open")
    _until(lambda: served.held(None) == LIMITS.unauthenticated, "the silent streams open")
    # more streams than threads, all open: the admin is answered at once
    for _ in range(5):
        started = time.monotonic()
        served.stub.ListLiveGames(
            pb.ListLiveGamesRequest(), metadata=_auth(served.admin), timeout=5
        )
        assert time.monotonic() - started < 2
    code, details = _refusal(_seats(served, served.alice, "alice_remote"))
    assert (code, details) == (
        Code.RESOURCE_EXHAUSTED,
        f"too many open streams: the limit is {LIMITS.per_token} streams per token",
    )
    code, details = _refusal(_silent_play(served)[0])
    assert code == Code.RESOURCE_EXHAUSTED
    assert details == (
        f"too many open streams: the limit is {LIMITS.unauthenticated}"
        " streams without a token (before Hello)"
    )
    bobs = _seats(served, served.bob, "bob_remote")  # another token has streams of its own
    _until(lambda: served.held(served.bob) == 1, "bob's stream open")
    for call in calls:
        call.cancel()
    _until(lambda: served.held(served.alice) == 0, "alice's streams closed")
    again = _seats(served, served.alice, "alice_remote")  # a closed stream frees its place
    _until(lambda: served.held(served.alice) == 1, "alice's new stream open")
    for call in (again, bobs):
        call.cancel()
    for play, outbox in plays:
        outbox.put(None)
        play.cancel()
    _until(lambda: served.held(None) == 0, "the silent streams closed")


@pytest.mark.slow
def test_a_refused_stream_is_not_counted(served: Served) -> None:
    """A stream that ends at once (unknown token, not the owner) leaves its token's count."""
    for token, bot in (("not-a-token", "alice_remote"), (served.bob, "alice_remote")):
        for _ in range(LIMITS.per_token + 1):
            code, _ = _refusal(_seats(served, token, bot))
            assert code in (Code.UNAUTHENTICATED, Code.PERMISSION_DENIED)
        _until(lambda: served.held(token) == 0, "the refused streams uncounted")  # noqa: B023


@pytest.mark.slow
def test_a_silent_play_stream_is_told_goodbye_after_the_hello_wait(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    store = Store.open(tmp_path_factory.mktemp("hello") / "data")
    limits = StreamLimits(hello_wait_s=0.5)
    server, port = create_server("127.0.0.1:0", store=store, max_workers=THREADS, limits=limits)
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            play = channel.stream_stream(
                PLAY_METHOD, request_serializer=lambda b: b, response_deserializer=lambda b: b
            )
            outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
            started = time.monotonic()
            replies = list(play(iter(outbox.get, None), timeout=30))
            waited = time.monotonic() - started
            outbox.put(None)
        goodbyes = [referee_pb2.PlayResponse.FromString(r).goodbye.reason for r in replies]
        assert goodbyes == ["no Hello within 0.5 s"]
        assert 0.4 < waited < 5
        assert server.counter.held(UNAUTHENTICATED) == 0
    finally:
        server.stop(grace=None).wait(10)
        store.close()


@pytest.mark.slow
def test_a_connection_without_calls_is_closed_after_the_idle_limit(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    store = Store.open(tmp_path_factory.mktemp("idle") / "data")
    limits = StreamLimits(max_connection_idle_ms=300)
    server, port = create_server("127.0.0.1:0", store=store, max_workers=THREADS, limits=limits)
    server.start()
    states: queue.SimpleQueue[grpc.ChannelConnectivity] = queue.SimpleQueue()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ArenaServiceStub(channel)
            token = ensure_admin_token(store)
            stub.ListLiveGames(pb.ListLiveGamesRequest(), metadata=_auth(token), timeout=5)
            channel.subscribe(states.put, try_to_connect=False)
            seen = []
            deadline = time.monotonic() + WAIT_S
            while grpc.ChannelConnectivity.IDLE not in seen[1:]:
                assert time.monotonic() < deadline, f"the connection stayed open: {seen}"
                seen.append(states.get(timeout=WAIT_S))
            assert seen[0] is grpc.ChannelConnectivity.READY  # connected, then closed by the server
    finally:
        server.stop(grace=None).wait(10)
        store.close()


@pytest.mark.slow
def test_health_watch_streams_count_as_streams_without_a_token(served: Served) -> None:
    health = health_pb2_grpc.HealthStub(served.channel)
    request = health_pb2.HealthCheckRequest(service="")
    watches = [health.Watch(request, timeout=60) for _ in range(LIMITS.unauthenticated)]
    for watch in watches:
        assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
    assert served.held(None) == LIMITS.unauthenticated
    code, details = _refusal(health.Watch(request, timeout=60))
    assert code == Code.RESOURCE_EXHAUSTED and "streams without a token" in details
    code, _ = _refusal(_silent_play(served)[0])  # the gateway's streams share that limit
    assert code == Code.RESOURCE_EXHAUSTED
    for watch in watches:
        watch.cancel()
    _until(lambda: served.held(None) == 0, "the watches closed")


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"per_token": 0}, "stream limit per_token must be at least 1, got 0"),
        ({"unauthenticated": -1}, "stream limit unauthenticated must be at least 1, got -1"),
        ({"total": 0}, "stream limit total must be at least 1, got 0"),
        ({"hello_reads": 0}, "stream limit hello_reads must be at least 1, got 0"),
        (
            {"hello_reads_per_peer": -2},
            "stream limit hello_reads_per_peer must be at least 1, got -2",
        ),
        ({"hello_wait_s": 0.0}, "hello_wait_s must be positive, got 0.0"),
    ],
)
def test_stream_limits_refuse_nonsense(changes: dict[str, float], problem: str) -> None:
    with pytest.raises(ValueError) as caught:
        StreamLimits(**changes)  # type: ignore[arg-type]
    assert str(caught.value) == problem


def _watch_ladder(served: Served, token: str) -> Iterator[object]:
    """A WatchTournament of a ladder another process runs (its lease held here): its status
    first, then the store followed until the ladder ends."""
    store = _store(served)
    ladder = create_ladder(store, "ladder", TournamentConfig(), {})
    served.leases.append(acquire_lease(store, ladder, name="ladder"))
    set_status(store, ladder, TournamentStatus.RUNNING)
    call = served.stub.WatchTournament(
        pb.WatchTournamentRequest(name="ladder"), metadata=_auth(token), timeout=30
    )
    next(call)  # past the call's own check of the token
    return call  # type: ignore[no-any-return]


def _watch_live(served: Served, token: str) -> Iterator[object]:
    """The admin's WatchGame of a game in play: its head first, then its entries as they come."""
    store = _store(served)
    ladder = create_ladder(store, "ladder", TournamentConfig(), {})
    with store.reading() as db:  # alice's and bob's remote bots
        first, second = (row[0] for row in db.execute("SELECT id FROM bot_versions"))
    match = add_ladder_match(store, ladder, first, second, games=2, seed=1)
    start_live_game(store, match, 0, {"bots": ["a", "b"]})
    call = served.stub.WatchGame(
        pb.WatchGameRequest(match_id=match, game_index=0), metadata=_auth(token), timeout=30
    )
    assert next(call).head_json  # type: ignore[attr-defined]
    return call  # type: ignore[no-any-return]


def _wait_for_seats(served: Served, token: str) -> Iterator[object]:
    service = served.server.service
    assert service is not None
    call = _seats(served, token, "alice_remote")
    _until(lambda: service.seats.waiting.get("alice_remote"), "the stream waiting for seats")
    return call  # type: ignore[no-any-return]


def _store(served: Served) -> Store:
    assert served.server.service is not None
    return served.server.service.store


@pytest.mark.slow
@pytest.mark.parametrize(
    ("open_stream", "role", "ends"),
    [
        (_wait_for_seats, "user", "revoked"),
        (_watch_ladder, "user", "revoked"),
        (_watch_ladder, "user", "revoked through the API"),
        (_watch_live, "admin", "revoked"),
        (_watch_ladder, "user", "expired"),
        (_watch_ladder, "user", "control: live"),
    ],
    ids=["WaitForSeats", "WatchTournament", "WatchTournament, RevokeUserToken",
         "WatchGame, the admin's", "expired", "control"],
)  # fmt: skip
def test_an_open_stream_ends_once_its_token_is_revoked_or_expires_saying_which(
    served: Served, monkeypatch: pytest.MonkeyPatch,
    open_stream: Callable[[Served, str], Iterator[object]], role: str, ends: str,
) -> None:  # fmt: skip
    """Every long-lived stream checks its token again while it is open (arena.server.rechecks,
    here every 0.2 s): a token revoked or expired since ends it UNAUTHENTICATED, saying
    which; a live one keeps it open."""
    monkeypatch.setattr(rechecks, "TOKEN_RECHECK_S", 0.2)
    store = _store(served)
    user = "alice" if role == "user" else "admin"
    lifetime = timedelta(seconds=2) if ends == "expired" else None
    token = create_token(store, user, role, lifetime=lifetime)
    call = open_stream(served, token)
    if ends.startswith("revoked"):
        digest = hashlib.sha256(token.encode()).hexdigest()
        [row] = [r for r in list_tokens(store, user) if r.digest == digest]
        if ends == "revoked":
            revoke_tokens(store, token_id=row.id)
        else:  # the admin, away from the server (`arena remote token revoke ID`)
            request = pb.RevokeUserTokenRequest(id=row.id)
            served.stub.RevokeUserToken(request, metadata=_auth(served.admin), timeout=10)
    if ends.startswith("control"):
        assert_stays(lambda: served.held(token) == 1, 1.0, "the stream open")
        call.cancel()  # type: ignore[attr-defined]
        return
    with pytest.raises(grpc.RpcError) as ended:
        list(call)
    assert ended.value.code() == Code.UNAUTHENTICATED  # type: ignore[attr-defined]
    assert ended.value.details().startswith(f"token {ends.split()[0]} at "), ended.value.details()  # type: ignore[attr-defined]
    _until(lambda: served.held(token) == 0, "the ended stream uncounted")


_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes.fromhex("000000040000000000")
"""A client's HTTP/2 connection preface and an empty SETTINGS frame: a connection that
then says nothing, as a stranger's idle crowd would."""


def _health(port: int) -> grpc.StatusCode:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=2)
        except grpc.RpcError as error:
            return error.code()  # type: ignore[no-any-return]
    return Code.OK


@pytest.mark.slow
@pytest.mark.parametrize("cap", [3, 0], ids=["capped", "control: no cap"])
def test_idle_connections_past_the_cap_are_closed_and_the_server_takes_new_ones_after(
    tmp_path: Path, cap: int
) -> None:
    """A crowd of idle connections holds at most ``connections`` of them: the rest are
    closed as they are accepted, and once the crowd goes the server takes callers again."""
    limits = StreamLimits(connections=cap) if cap else StreamLimits()
    store = Store.open(tmp_path / "data")
    server, port = create_server("127.0.0.1:0", store=store, limits=limits)
    server.start()
    crowd = []
    try:
        for _ in range(6):
            crowd.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            crowd[-1].sendall(_PREFACE)

        def closed(connection: socket.socket) -> bool:
            connection.settimeout(0.05)
            try:
                while data := connection.recv(4096):  # the server's SETTINGS, its GOAWAY
                    del data
                return True  # end of stream: closed by the server
            except TimeoutError:
                return False
            except ConnectionResetError:
                return True

        if cap:
            wait_until(lambda: sum(closed(c) for c in crowd) >= 6 - cap,
                       "the connections past the cap closed", WAIT_S)  # fmt: skip
            assert sum(not closed(c) for c in crowd) == cap
            assert _health(port) is Code.UNAVAILABLE  # every connection is taken
        else:
            assert_stays(lambda: not any(closed(c) for c in crowd), 0.5, "the crowd kept")
            assert _health(port) is Code.OK
        for connection in crowd:
            connection.close()
        wait_until(lambda: _health(port) is Code.OK, "a caller served after the crowd", WAIT_S)
    finally:
        for connection in crowd:
            connection.close()
        server.stop(grace=None)
        store.close()


class _CountingPool(concurrent.futures.ThreadPoolExecutor):
    """A real thread pool that counts the work handed to it."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.submitted = 0

    def submit(self, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        self.submitted += 1
        return super().submit(*args, **kwargs)


def test_the_streams_of_one_token_share_each_check(tmp_path: Path) -> None:
    """A crowd of watchers of one token rechecks it with one hop to the thread pool that
    unary calls share, not one each; each stream still gets the token's own answer."""
    with Store.open(tmp_path / "data") as store:
        alice, bob = create_token(store, "alice"), create_token(store, "bob")
        revoke_tokens(store, user="bob")
        checks = rechecks.SharedChecks(store)
        pool = _CountingPool()

        async def crowd() -> list[str | None]:
            asyncio.get_running_loop().set_default_executor(pool)
            asks = [f"Bearer {alice}"] * 40 + [f"Bearer {bob}"] * 40 + [None] * 5
            return await asyncio.gather(*(checks.refusal(a) for a in asks))

        answers = run_apart(crowd())
        pool.shutdown()
    assert answers[:40] == [None] * 40
    assert all(str(a).startswith("token revoked at ") for a in answers[40:80])
    assert answers[80:] == ["missing 'authorization: Bearer <token>'"] * 5
    assert pool.submitted == 3
