"""Stopping the API server while unary handlers still run in its pool.

A sync handler's ``context.abort`` (and its metadata) is served by the server's
event loop and waited for without a timeout, so the loop must outlive the handlers
still running: the stop waits for them (``ApiServer.drain_s``), then returns saying
how many it left, and keeps the loop serving those until they return.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from structlog.testing import capture_logs

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as rpc
from arena.server.app import ApiServer, create_server
from arena.server.arena_service import ArenaService
from arena.store import Store
from arena.testing.waiting import assert_stays, wait_until

pytestmark = pytest.mark.slow  # every test here starts a server


@dataclass
class HeldHandler:
    """ListTournaments made to wait inside the pool until released, then abort."""

    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    outcome: list[str] = field(default_factory=list)
    returned: threading.Event = field(default_factory=threading.Event)

    def answer(self, context: Any) -> Any:
        self.entered.set()
        self.release.wait(60)
        try:
            context.abort(grpc.StatusCode.ABORTED, "released")
        except BaseException as error:  # grpc's abort always raises: which error says how
            self.outcome.append(type(error).__name__)
            raise
        finally:
            self.returned.set()


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> HeldHandler:
    handler = HeldHandler()

    def list_tournaments(_service: ArenaService, _request: Any, context: Any) -> Any:
        return handler.answer(context)

    monkeypatch.setattr(ArenaService, "ListTournaments", list_tournaments)
    return handler


@pytest.fixture
def served(tmp_path: Path, held: HeldHandler) -> Iterator[tuple[ApiServer, rpc.ArenaServiceStub]]:
    store = Store.open(tmp_path / "data")
    server, port = create_server("127.0.0.1:0", store=store)
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield server, rpc.ArenaServiceStub(channel)
    finally:
        held.release.set()
        server.stop(None).wait(30)
        channel.close()
        store.close()


def _api_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("arena-api")]


def test_a_handler_running_at_the_stop_has_its_abort_served_before_the_loop_closes(
    served: tuple[ApiServer, rpc.ArenaServiceStub], held: HeldHandler,
) -> None:  # fmt: skip
    server, stub = served
    call = stub.ListTournaments.future(pb.ListTournamentsRequest())
    assert held.entered.wait(20)
    stopped = server.stop(None)
    assert_stays(lambda: not stopped.is_set(), 0.5, "the stop waiting for the running handler")
    held.release.set()
    assert stopped.wait(20), "the stop did not end once the handler returned"
    assert held.returned.is_set()
    # the loop ran the abort (the call was cancelled by the stop, so grpc says it could not
    # send the status); a closed loop would have refused it with RuntimeError
    assert len(held.outcome) == 1 and held.outcome != ["RuntimeError"], held.outcome
    with pytest.raises(grpc.RpcError):
        call.result(10)
    wait_until(lambda: _api_threads() == [], "the server's threads ending", 10,
               state=_api_threads)  # fmt: skip


def test_a_handler_outliving_the_wait_is_said_so_and_still_has_its_abort_served(
    served: tuple[ApiServer, rpc.ArenaServiceStub], held: HeldHandler,
) -> None:  # fmt: skip
    server, stub = served
    server.drain_s = 0.3
    call = stub.ListTournaments.future(pb.ListTournamentsRequest())  # held: a dropped one cancels
    assert held.entered.wait(20)
    with capture_logs() as logs:
        assert server.stop(None).wait(20), "the stop waited past its bound"
    left = [entry for entry in logs if entry["event"] == "api_calls_still_running"]
    assert [(entry["calls"], entry["log_level"]) for entry in left] == [(1, "warning")]
    assert "1 call(s) still running 0.3 s after the stop" in left[0]["message"]
    assert "arena-api-loop" in _api_threads()  # kept for the call left
    held.release.set()
    assert held.returned.wait(10), "the handler left behind hung in its abort"
    assert len(held.outcome) == 1 and held.outcome != ["RuntimeError"], held.outcome
    with pytest.raises(grpc.RpcError):
        call.result(10)
    wait_until(lambda: _api_threads() == [], "the server's threads ending", 10,
               state=_api_threads)  # fmt: skip
