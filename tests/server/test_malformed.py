"""Requests whose bytes do not parse: INVALID_ARGUMENT naming the message, nothing logged.

A real server on port 0 takes raw bytes (a channel with identity serializers) for
unary and server-streaming methods of every service on the port.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import grpc
import pytest

from arena.server.app import ApiServer, create_server
from arena.store import Store, ensure_admin_token

pytestmark = pytest.mark.slow  # every test here starts a process or a server

CORRUPT = b"\xff\xff\xff"  # a field number 0 ... wire format that cannot parse
BAD_UTF8_NAME = b"\x0a\x03\xff\xfe\xfd"  # field 1 (a string) that is not UTF-8

CASES = [
    # (method, request bytes, server-streaming, the message type the refusal names; None:
    # the request is fine and answered)
    ("/kahuna.v1.ArenaService/ListTournaments", CORRUPT, False,
     "kahuna.v1.ListTournamentsRequest"),
    ("/kahuna.v1.ArenaService/CreateTournament", BAD_UTF8_NAME, False,
     "kahuna.v1.CreateTournamentRequest"),
    ("/kahuna.v1.ArenaService/GetGameRecord", b"\x08" + b"\xff" * 10 + b"\x01", False,
     "kahuna.v1.GetGameRecordRequest"),
    ("/kahuna.v1.ArenaService/WatchTournament", BAD_UTF8_NAME, True,
     "kahuna.v1.WatchTournamentRequest"),
    ("/grpc.health.v1.Health/Check", CORRUPT, False, "grpc.health.v1.HealthCheckRequest"),
    ("/kahuna.v1.ArenaService/ListTournaments", b"", False, None),  # control
    ("/grpc.health.v1.Health/Check", b"", False, None),  # control
]  # fmt: skip


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    store = Store.open(tmp_path_factory.mktemp("malformed") / "data")
    server: ApiServer
    server, port = create_server("127.0.0.1:0", store=store)
    server.start()
    try:
        yield port, ensure_admin_token(store)
    finally:
        server.stop(grace=None).wait(10)
        store.close()


@pytest.mark.parametrize(("method", "payload", "streaming", "message_type"), CASES,
                         ids=[f"{c[0].rsplit('/', 1)[1]}-{'bad' if c[3] else 'control'}"
                              for c in CASES])  # fmt: skip
def test_a_request_that_does_not_parse_is_invalid_argument_without_a_traceback(
    served: tuple[int, str], caplog: pytest.LogCaptureFixture, method: str, payload: bytes,
    streaming: bool, message_type: str | None,
) -> None:  # fmt: skip
    """INVALID_ARGUMENT, not UNKNOWN ("Unexpected <class DecodeError>"), and no traceback in
    the log."""
    port, admin = served
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel, caplog.at_level(logging.ERROR):
        make = channel.unary_stream if streaming else channel.unary_unary
        call = make(method, request_serializer=lambda b: b, response_deserializer=lambda b: b)
        metadata = (("authorization", f"Bearer {admin}"),)
        try:
            answer = call(payload, metadata=metadata, timeout=10)
            if streaming:
                list(answer)
            refused = None
        except grpc.RpcError as error:
            refused = (error.code(), error.details())
    assert not [r for r in caplog.records if r.name.startswith("grpc")], caplog.text
    if message_type is None:
        assert refused is None
        return
    assert refused is not None and refused[0] is grpc.StatusCode.INVALID_ARGUMENT, refused
    assert (refused[1] or "").startswith("the request is not a valid message: Error parsing message"
                                 f" with type '{message_type}'")  # fmt: skip
