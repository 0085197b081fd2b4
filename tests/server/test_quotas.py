"""Per-user limits, the shared check queue, reserved names and token lifecycle, against a
real API server and web server on loopback port 0 (one store, one check queue).

Smoke checks here wait on an event the test sets, so a check is "running" exactly as long
as a test needs; everything else is the server's own path. The limits' cache is also
checked on its own (``Quotas`` over a store), where a race needs a hold inside it.
"""

from __future__ import annotations

import io
import json
import tarfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from arena.bots.submission import SubmissionCheck
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.server.app import ApiServer, create_server
from arena.server.arena_service import ServiceOptions
from arena.server.gateway import PLAY_METHOD
from arena.server.limits import StreamLimits
from arena.server.quotas import Quotas, UserLimits
from arena.server.submissions import WebSubmitter
from arena.store import (
    Store,
    add_seat_offer,
    create_token,
    ensure_admin_token,
    get_bot,
    list_tokens,
    revoke_tokens,
)
from arena.store.remote import get_seat_offer
from arena.testing.waiting import wait_until
from arena.web import WebServer, create_web_server

pytestmark = pytest.mark.slow
Code = grpc.StatusCode


@dataclass
class Arena:
    store: Store
    server: ApiServer
    port: int
    web: WebServer
    web_port: int
    stub: pb_grpc.ArenaServiceStub
    admin: str
    gate: threading.Event  # set: smoke checks finish (and pass)
    checking: threading.Semaphore  # released once per check that started

    def auth(self, token: str) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {token}"),)

    def submit(self, token: str, archive: bytes, timeout: float = 30) -> pb.SubmitBotResponse:
        request = pb.SubmitBotRequest(archive=archive)
        return self.stub.SubmitBot(request, metadata=self.auth(token), timeout=timeout)

    def web_submit(self, token: str, archive: bytes) -> tuple[int, dict[str, Any], Any]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.web_port}/api/submit", data=archive, method="POST",
            headers={"Content-Type": "application/octet-stream",
                     "Authorization": f"Bearer {token}"},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read()), response.headers
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read()), error.headers

    def user(self, name: str, **limits: int) -> str:
        for limit, value in limits.items():
            request = pb.SetLimitRequest(user=name, name=limit, value=value)
            self.stub.SetLimit(request, metadata=self.auth(self.admin))
        return create_token(self.store, name)


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    store = Store.open(tmp_path / "data")
    gate, checking = threading.Event(), threading.Semaphore(0)

    def smoke(directory: Path) -> SubmissionCheck:
        checking.release()
        assert gate.wait(60)
        return SubmissionCheck()

    options = ServiceOptions(
        smoke_check=smoke, limits=UserLimits(checks_total=1, check_queue=1)
    )
    server, port = create_server("127.0.0.1:0", store=store, options=options)
    server.start()
    assert server.quotas is not None
    web, web_port = create_web_server(
        store, "127.0.0.1", 0, submitter=WebSubmitter(store, smoke, server.quotas)
    )
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield Arena(store, server, port, web, web_port, pb_grpc.ArenaServiceStub(channel),
                    ensure_admin_token(store), gate, checking)  # fmt: skip
    finally:
        gate.set()
        channel.close()
        web.stop()
        server.stop(grace=None).wait(10)
        store.close()


def archive(name: str, runtime: str = "python", extra: bytes = b"") -> bytes:
    toml = f'name = "{name}"\nruntime = "{runtime}"\n'
    if runtime != "remote":
        toml += 'command = ["python3", "bot.py"]\n'
    files = [(f"{name}/bot.toml", toml.encode()), (f"{name}/bot.py", b"print('hi')\n" + extra)]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, data in files:
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def details(error: grpc.RpcError) -> tuple[int | None, list[str]]:
    """(RetryInfo's seconds or None, QuotaFailure's descriptions) of a refused call."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None, "no rich status details"
    retry, quota = None, []
    for packed in status.details:
        if packed.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            packed.Unpack(info)
            retry = info.retry_delay.seconds
        if packed.Is(error_details_pb2.QuotaFailure.DESCRIPTOR):
            failure = error_details_pb2.QuotaFailure()
            packed.Unpack(failure)
            quota += [v.description for v in failure.violations]
    return retry, quota


def refused(call: Callable[[], object]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value


def wait_for_check(arena: Arena) -> None:
    assert arena.checking.acquire(timeout=30), "no check started"


# --- limits --------------------------------------------------------------


def test_past_the_bots_limit_a_registration_is_refused_naming_it_and_nothing_is_stored(
    arena: Arena,
) -> None:
    token = arena.user("mallory", bots=2)
    for name in ("m1", "m2"):
        arena.stub.RegisterRemoteBot(pb.RegisterRemoteBotRequest(name=name),
                                     metadata=arena.auth(token))  # fmt: skip
    error = refused(lambda: arena.stub.RegisterRemoteBot(
        pb.RegisterRemoteBotRequest(name="m3"), metadata=arena.auth(token)))  # fmt: skip
    assert error.code() == Code.RESOURCE_EXHAUSTED
    assert error.details().startswith("limit bots: mallory owns 2 bots, the limit is 2;")
    retry, quota = details(error)
    assert retry is None and quota == [error.details()]  # waiting does not help: no RetryInfo
    with pytest.raises(Exception, match="no bot 'm3'"):
        get_bot(arena.store, "m3")


def test_past_the_remote_bots_and_versions_limits_registrations_are_refused(
    arena: Arena,
) -> None:
    token = arena.user("mallory", remote_bots=1, versions_per_bot=2)
    register = lambda name, text: arena.stub.RegisterRemoteBot(  # noqa: E731
        pb.RegisterRemoteBotRequest(name=name, description=text), metadata=arena.auth(token)
    )
    register("m1", "a")
    register("m1", "b")
    assert refused(lambda: register("m1", "c")).details().startswith(
        "limit versions_per_bot: bot 'm1' has 2 versions, the limit is 2"
    )
    assert refused(lambda: register("m2", "a")).details().startswith(
        "limit remote_bots: mallory has 1 remote bots, the limit is 1"
    )


def test_a_sandboxed_bot_made_remote_counts_against_the_remote_bots_limit(
    arena: Arena,
) -> None:
    """At the limit, a remote version of a bot the user already has is one more remote
    bot, by RegisterRemoteBot as by SubmitBot; another version of a remote bot is not."""
    token = arena.user("mallory", remote_bots=1)
    arena.gate.set()  # the sandboxed bot's smoke check passes at once
    register = lambda name, text: arena.stub.RegisterRemoteBot(  # noqa: E731
        pb.RegisterRemoteBotRequest(name=name, description=text), metadata=arena.auth(token)
    )
    register("m1", "a")
    arena.submit(token, archive("m2"))
    limit = "limit remote_bots: mallory has 1 remote bots, the limit is 1"
    assert refused(lambda: register("m2", "a")).details().startswith(limit)
    assert refused(lambda: arena.submit(token, archive("m2", "remote"))).details().startswith(limit)
    assert len(get_bot(arena.store, "m2").versions) == 1  # its sandboxed one, alone
    assert register("m1", "b").created  # a remote bot's new version: still one remote bot


@pytest.mark.parametrize(
    "limit", [{"remote_bots": 0}, {"submissions_per_hour": 0}, {"versions_per_bot": 1},
              {"stored_bytes": 0}, {}],
    ids=["remote_bots", "submissions_per_hour", "versions_per_bot", "stored_bytes", "none"],
)  # fmt: skip
def test_another_users_name_is_refused_as_theirs_before_any_limit(
    arena: Arena, limit: dict[str, int]
) -> None:
    """A user at a limit who registers a name another user owns is told the name is taken,
    not about their limit (as if the name could be theirs), and nothing of its owner."""
    arena.gate.set()
    arena.submit(arena.user("alice"), archive("shared"))  # a sandboxed bot, one version
    token = arena.user("mallory", **limit)
    error = refused(lambda: arena.stub.RegisterRemoteBot(
        pb.RegisterRemoteBotRequest(name="shared"), metadata=arena.auth(token)))  # fmt: skip
    assert (error.code(), error.details()) == (Code.PERMISSION_DENIED, (
        "remote bot refused: bot 'shared' belongs to another user: a bot's name is its first"
        " owner's; register yours under another"))  # fmt: skip
    assert len(get_bot(arena.store, "shared").versions) == 1


def test_registrations_at_once_cannot_pass_a_limit_together(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twelve registrations of new remote bots at once, with room for two: two are stored.

    The race, forced: a registration whose check of the limit passed is held there
    until all twelve have been counted (the others then wait to check, or check
    too if nothing keeps them out), so none is stored before all have arrived."""
    token = arena.user("mallory", remote_bots=2)
    barrier = threading.Barrier(12)
    quotas, arrived = arena.server.quotas, []
    assert quotas is not None
    count, check = quotas.count_submission, quotas.check_holdings

    def counted(*args: Any, **kwargs: Any) -> None:
        try:
            count(*args, **kwargs)
        finally:
            arrived.append(1)

    def held(*args: Any, **kwargs: Any) -> None:
        check(*args, **kwargs)
        wait_until(lambda: len(arrived) == 12, "all twelve registrations counted", 30,
                   interval_s=0.005, state=lambda: len(arrived))  # fmt: skip

    monkeypatch.setattr(quotas, "count_submission", counted)
    monkeypatch.setattr(quotas, "check_holdings", held)

    def register(name: str) -> str:
        barrier.wait()
        try:
            arena.stub.RegisterRemoteBot(pb.RegisterRemoteBotRequest(name=name),
                                         metadata=arena.auth(token), timeout=30)  # fmt: skip
        except grpc.RpcError as error:
            return error.code().name
        return "OK"

    with futures.ThreadPoolExecutor(12) as pool:
        answers = list(pool.map(register, [f"m{i}" for i in range(12)]))
    assert sorted(answers) == ["OK"] * 2 + ["RESOURCE_EXHAUSTED"] * 10


UPLOADS = 6


def test_uploads_at_once_by_one_user_are_checked_one_at_a_time(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six uploads by one user at once through the web (a thread per request), with
    checks_per_user 1: one is checked, five are refused naming the limit.

    The race, forced: an admission whose look at the user's count passed is held there
    (in the hourly count it makes next) until all six uploads have begun theirs, so any
    that nothing keeps out look at the count before it is raised."""
    token = arena.user("mallory")
    quotas = arena.server.quotas
    assert quotas is not None
    begun: list[int] = []
    admit, count = quotas._admit, quotas.count_submission

    def beginning(*args: Any, **kwargs: Any) -> Any:
        begun.append(1)
        return admit(*args, **kwargs)

    def held(*args: Any, **kwargs: Any) -> None:
        wait_until(lambda: len(begun) == UPLOADS, "every upload's admission begun", 30,
                   interval_s=0.005, state=lambda: len(begun))  # fmt: skip
        count(*args, **kwargs)

    monkeypatch.setattr(quotas, "_admit", beginning)
    monkeypatch.setattr(quotas, "count_submission", held)
    answers: list[tuple[int, str | None]] = []

    def upload(index: int) -> None:
        status, payload, _ = arena.web_submit(token, archive(f"m{index}"))
        answers.append((status, payload.get("limit")))

    threads = [threading.Thread(target=upload, args=(i,)) for i in range(UPLOADS)]
    for thread in threads:
        thread.start()
    try:  # the one admitted waits for the gate: the others are answered first
        wait_until(lambda: len(answers) >= UPLOADS - 1, "the refusals", 30,
                   state=lambda: answers)  # fmt: skip
    finally:
        arena.gate.set()
        for thread in threads:
            thread.join(30)
    assert sorted(answers) == [(200, None)] + [(429, "checks_per_user")] * (UPLOADS - 1)
    assert len(begun) == UPLOADS


def test_a_limit_set_while_a_call_reads_the_limits_applies_from_the_next_call_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call reads mallory's limits (the default, 20 bots); the admin sets her limit to
    1 before the call keeps what it read. That call keeps its answer, but the next one
    reads 1: no limits read before a SetLimit of this server are kept.

    The race, forced: the call's read of the store is held until the setting is done."""
    with Store.open(tmp_path / "data") as store:
        quotas = Quotas(store)
        read = quotas._read_limits
        have_read, was_set = threading.Event(), threading.Event()

        def held(user: str | None) -> UserLimits:
            limits = read(user)
            if threading.current_thread().name == "a-call":
                have_read.set()
                assert was_set.wait(30), "the setting never came"
            return limits

        monkeypatch.setattr(quotas, "_read_limits", held)
        answers: list[UserLimits] = []
        call = threading.Thread(target=lambda: answers.append(quotas.limits_for("mallory")),
                                name="a-call")  # fmt: skip
        try:
            call.start()
            wait_until(have_read.is_set, "the call read the limits", 10)
            quotas.set("bots", 1, "mallory")
            was_set.set()
            call.join(10)
            assert [limits.bots for limits in answers] == [20]  # read before the setting
            assert quotas.limits_for("mallory").bots == 1
        finally:
            was_set.set()
            quotas.close()


def test_past_the_hourly_limit_submissions_are_refused_with_when_to_retry(
    arena: Arena,
) -> None:
    token = arena.user("mallory", submissions_per_hour=2)
    arena.gate.set()
    arena.submit(token, archive("a1", "remote"))
    arena.web_submit(token, archive("a2", "remote"))  # the web counts as the same user
    error = refused(lambda: arena.submit(token, archive("a3", "remote")))
    assert error.code() == Code.RESOURCE_EXHAUSTED
    assert error.details().startswith(
        "limit submissions_per_hour: mallory started 2 submissions in the last hour,"
        " the limit is 2; retry in "
    )
    retry, _ = details(error)
    assert retry is not None and 3500 < retry <= 3600
    assert dict(error.trailing_metadata())["retry-after"] == str(retry)  # type: ignore[attr-defined]
    status, payload, headers = arena.web_submit(token, archive("a4", "remote"))
    assert (status, payload["limit"], payload["value"]) == (429, "submissions_per_hour", 2)
    assert 3500 < int(headers["Retry-After"]) <= 3600


def test_past_the_stored_bytes_limit_a_version_is_refused_before_its_check(
    arena: Arena,
) -> None:
    token = arena.user("mallory", stored_bytes=10_000)
    error = refused(lambda: arena.submit(token, archive("big", extra=b"#" * 20_000)))
    assert error.code() == Code.RESOURCE_EXHAUSTED
    assert error.details().startswith("limit stored_bytes: mallory's bots take 0 bytes")
    assert arena.checking.acquire(timeout=0) is False  # no check was started for it


def test_a_remote_bot_archive_stores_only_its_bot_toml(arena: Arena) -> None:
    token = arena.user("mallory")
    reply = arena.submit(token, archive("far", "remote", extra=b"x" * 500_000))
    stored = arena.store.data_dir / "bots" / "far" / reply.bot.version
    assert [p.name for p in stored.iterdir()] == ["bot.toml"]
    assert 'runtime = "remote"' in (stored / "bot.toml").read_text()


def test_one_check_per_user_and_one_queue_for_grpc_and_the_web(arena: Arena) -> None:
    """checks_total 1, check_queue 1: mallory's check runs; her second submission (web or
    gRPC) is refused by checks_per_user; bob's waits in the queue; carol's is refused by
    check_queue. The admin's calls are answered throughout."""
    mallory, bob, carol = arena.user("mallory"), arena.user("bob"), arena.user("carol")
    with futures.ThreadPoolExecutor(2) as pool:
        first = pool.submit(arena.submit, mallory, archive("mal1"))
        wait_for_check(arena)
        status, payload, headers = arena.web_submit(mallory, archive("mal2"))
        assert (status, payload["limit"], headers["Retry-After"]) == (429, "checks_per_user", "30")
        assert payload["error"].startswith(
            "limit checks_per_user: mallory has 1 submission(s) being checked, the limit is 1"
        )
        error = refused(lambda: arena.submit(mallory, archive("mal3")))
        assert error.code() == Code.RESOURCE_EXHAUSTED and details(error)[0] == 30
        queued = pool.submit(arena.submit, bob, archive("bob1"))
        quotas = arena.server.quotas
        assert quotas is not None
        wait_until(lambda: quotas.busy()[1] >= 2, "two submissions queued", 10,
                   interval_s=0.01, state=quotas.busy)  # fmt: skip
        error = refused(lambda: arena.submit(carol, archive("carol1")))
        assert error.details().startswith(
            "limit check_queue: the server is checking 1 submission(s) and 1 wait,"
        )
        started = time.monotonic()
        arena.stub.ListBots(pb.ListBotsRequest(), metadata=arena.auth(arena.admin), timeout=5)
        assert time.monotonic() - started < 5
        arena.gate.set()
        assert first.result(30).bot.name == "mal1" and queued.result(30).bot.name == "bob1"
    assert arena.submit(carol, archive("carol1")).created  # room again


def test_the_admin_sets_and_reads_limits_and_a_user_cannot(arena: Arena) -> None:
    admin = arena.auth(arena.admin)
    reply = arena.stub.SetLimit(pb.SetLimitRequest(name="bots", value=5), metadata=admin)
    assert {(x.name, x.value, x.set_for) for x in reply.limits} >= {("bots", 5, "everyone")}
    arena.stub.SetLimit(pb.SetLimitRequest(user="ann", name="bots", value=7), metadata=admin)
    ann = {x.name: x for x in arena.stub.GetLimits(pb.GetLimitsRequest(user="ann"),
                                                    metadata=admin).limits}  # fmt: skip
    assert (ann["bots"].value, ann["bots"].set_for, ann["bots"].default_value) == (7, "ann", 20)
    for bad, message in (
        (pb.SetLimitRequest(name="nope", value=1), "no limit 'nope'"),
        (pb.SetLimitRequest(name="checks_total", value=0), "checks_total must be at least 1"),
        (pb.SetLimitRequest(user="ann", name="check_queue", value=1), "the whole server's"),
        (pb.SetLimitRequest(user="../x", name="bots", value=1), "user name '../x'"),
        (pb.SetLimitRequest(name="rated_play", value=2), "rated_play must be 0 (off) or 1"),
    ):
        error = refused(lambda bad=bad: arena.stub.SetLimit(bad, metadata=admin))
        assert error.code() == Code.INVALID_ARGUMENT and message in error.details()
    user = arena.auth(create_token(arena.store, "ann"))
    error = refused(lambda: arena.stub.SetLimit(pb.SetLimitRequest(name="bots", value=99),
                                                metadata=user))  # fmt: skip
    assert error.code() == Code.PERMISSION_DENIED


# --- reserved names ------------------------------------------------------


@pytest.mark.parametrize("name", ["python_random", "Python_Random"])
def test_a_user_cannot_take_a_sample_bots_name_on_any_path(arena: Arena, name: str) -> None:
    token = arena.user("mallory")
    arena.gate.set()
    message = f"bot name {name!r} is reserved for the arena's own sample and house bots"
    error = refused(lambda: arena.stub.RegisterRemoteBot(
        pb.RegisterRemoteBotRequest(name=name), metadata=arena.auth(token)))  # fmt: skip
    assert error.code() == Code.PERMISSION_DENIED and message in error.details()
    error = refused(lambda: arena.submit(token, archive(name, "remote")))
    assert error.code() == Code.PERMISSION_DENIED and message in error.details()
    status, payload, _ = arena.web_submit(token, archive(name))
    assert status == 403 and message in payload["error"]
    assert arena.submit(arena.admin, archive(name, "remote")).created  # the admin may


def test_a_name_one_case_apart_from_a_stored_bot_is_refused_on_any_path(arena: Arena) -> None:
    """``AliceBot`` beside ``alicebot`` would pass for it on every page: refused before
    anything is checked or played, by gRPC and the web, for a user and the admin alike."""
    arena.gate.set()
    assert arena.submit(arena.user("alice"), archive("alicebot", "remote")).created
    token = arena.user("mallory")
    message = "bot name 'AliceBot' differs only in case from the stored bot 'alicebot'"
    error = refused(lambda: arena.stub.RegisterRemoteBot(
        pb.RegisterRemoteBotRequest(name="AliceBot"), metadata=arena.auth(token)))  # fmt: skip
    assert error.code() == Code.PERMISSION_DENIED and message in error.details()
    for who in (token, arena.admin):
        error = refused(lambda who=who: arena.submit(who, archive("AliceBot", "remote")))
        assert error.code() == Code.PERMISSION_DENIED and message in error.details()
    status, payload, _ = arena.web_submit(token, archive("AliceBot"))
    assert status == 403 and message in payload["error"]


# --- tokens ---------------------------------------------------------------


def test_a_revoked_token_is_refused_by_grpc_and_the_web_saying_so(arena: Arena) -> None:
    token = arena.user("mallory")
    arena.stub.ListBots(pb.ListBotsRequest(), metadata=arena.auth(token))
    revoke_tokens(arena.store, user="mallory")
    error = refused(lambda: arena.stub.ListBots(pb.ListBotsRequest(), metadata=arena.auth(token)))
    assert error.code() == Code.UNAUTHENTICATED
    assert error.details().startswith("token revoked at ")
    status, payload, _ = arena.web_submit(token, archive("m1"))
    assert status == 401 and payload["error"].startswith("token revoked at ")


# --- one token cannot hold the API's threads -------------------------------------


def test_one_token_may_have_only_calls_per_token_calls_in_flight(tmp_path: Path) -> None:
    """calls_per_token 1: while mallory's SubmitBot is being checked, her next call is
    refused naming the limit; another user's and the admin's calls are answered."""
    store = Store.open(tmp_path / "data")
    gate, checking = threading.Event(), threading.Semaphore(0)

    def smoke(directory: Path) -> SubmissionCheck:
        checking.release()
        assert gate.wait(60)
        return SubmissionCheck()

    server, port = create_server(
        "127.0.0.1:0", store=store, options=ServiceOptions(smoke_check=smoke),
        limits=StreamLimits(calls_per_token=1),
    )  # fmt: skip
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = pb_grpc.ArenaServiceStub(channel)
    mallory, bob = create_token(store, "mallory"), create_token(store, "bob")
    admin = ensure_admin_token(store)
    auth = lambda token: (("authorization", f"Bearer {token}"),)  # noqa: E731
    try:
        with futures.ThreadPoolExecutor(1) as pool:
            first = pool.submit(
                stub.SubmitBot, pb.SubmitBotRequest(archive=archive("m1")),
                metadata=auth(mallory), timeout=30,
            )  # fmt: skip
            assert checking.acquire(timeout=30)
            error = refused(lambda: stub.ListBots(pb.ListBotsRequest(), metadata=auth(mallory)))
            assert error.code() == Code.RESOURCE_EXHAUSTED
            assert error.details() == (
                "too many calls at once: the limit is 1 calls per token in flight;"
                " retry once one has answered"
            )
            stub.ListBots(pb.ListBotsRequest(), metadata=auth(bob), timeout=5)
            stub.GetLimits(pb.GetLimitsRequest(), metadata=auth(admin), timeout=5)
            gate.set()
            assert first.result(30).bot.name == "m1"
        stub.ListBots(pb.ListBotsRequest(), metadata=auth(mallory), timeout=5)  # room again
    finally:
        gate.set()
        channel.close()
        server.stop(grace=None).wait(10)
        store.close()


def test_the_gateway_refuses_a_seat_of_a_bot_whose_owner_holds_no_live_token(
    arena: Arena,
) -> None:
    token = arena.user("mallory")
    arena.stub.RegisterRemoteBot(pb.RegisterRemoteBotRequest(name="far"),
                                 metadata=arena.auth(token))  # fmt: skip
    add_seat_offer(
        arena.store, bot="far", version=get_bot(arena.store, "far").versions[-1].version,
        token="seat-token-0123456789", match_id=None, referee_match="m0", slot=0,
        socket_path="/nonexistent/seat.sock", expires_at_ms=time.time_ns() // 1_000_000 + 60_000,
    )  # fmt: skip
    revoke_tokens(arena.store, user="mallory")
    channel = grpc.insecure_channel(f"127.0.0.1:{arena.port}")
    play = channel.stream_stream(
        PLAY_METHOD, request_serializer=lambda m: m.SerializeToString(),
        response_deserializer=referee_pb2.PlayResponse.FromString,
    )  # fmt: skip
    hello = referee_pb2.PlayRequest(hello=referee_pb2.Hello(token="seat-token-0123456789"))
    answers = list(play(iter([hello]), timeout=15))
    channel.close()
    assert [a.WhichOneof("kind") for a in answers] == ["goodbye"]
    assert answers[0].goodbye.reason == (
        "the bot's owner 'mallory' holds no live token (every one revoked or expired):"
        " its seats are refused"
    )
    assert get_seat_offer(arena.store, 1).state == "open"  # refused: nothing written


def test_the_admin_makes_a_token_that_expires(arena: Arena) -> None:
    admin = arena.auth(arena.admin)
    made = arena.stub.CreateUserToken(pb.CreateUserTokenRequest(user="ann", expires_in_s=3600),
                                      metadata=admin)  # fmt: skip
    [row] = list_tokens(arena.store, "ann")
    assert row.expires_at is not None and row.state() == "active"
    arena.stub.ListBots(pb.ListBotsRequest(), metadata=arena.auth(made.token))
    error = refused(lambda: arena.stub.CreateUserToken(
        pb.CreateUserTokenRequest(user="bob", expires_in_s=-1), metadata=admin))  # fmt: skip
    assert error.code() == Code.INVALID_ARGUMENT and "expires_in_s" in error.details()
