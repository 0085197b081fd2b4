"""kahuna_bot.wire: the SDK's own gRPC stream over HTTP/2 (h2), against real gRPC servers.

The pure parts (targets, the message framing) table-driven and property-based;
the call against grpcio servers on Unix sockets and TCP: every way a call can
end (status OK, an error status with its details, Trailers-Only, a reset, a
closed connection, an oversized message, a server not listening yet).
"""

from __future__ import annotations

import itertools
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import h2.errors
import h2.events
import pytest
from h2.config import H2Configuration
from h2.connection import H2Connection
from hypothesis import given
from hypothesis import strategies as st
from kahuna_bot import wire
from kahuna_bot.wire import (
    Call,
    CallError,
    MessageReader,
    Target,
    TargetError,
    code_name,
    frame,
    parse_target,
    unquote_message,
)

SERVICE = "test.Echo"
METHOD = f"/{SERVICE}/Chat"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("unix:///run/kahuna/referee.sock", Target(unix_path="/run/kahuna/referee.sock")),
        ("unix:/tmp/x.sock", Target(unix_path="/tmp/x.sock")),
        ("unix:relative.sock", Target(unix_path="relative.sock")),
        ("127.0.0.1:50051", Target(host="127.0.0.1", port=50051)),
        ("localhost:1", Target(host="localhost", port=1)),
        ("arena.example.org:443", Target(host="arena.example.org", port=443)),
        ("[::1]:8080", Target(host="::1", port=8080)),
        ("dns:///arena.example.org:443", Target(host="arena.example.org", port=443)),
        ("ipv4:10.0.0.1:7", Target(host="10.0.0.1", port=7)),
        ("ipv6:[::1]:7", Target(host="::1", port=7)),
    ],
)
def test_targets_parse(text: str, expected: Target) -> None:
    assert parse_target(text) == expected


@pytest.mark.parametrize(
    "text", ["", "unix:", "unix://relative", "localhost", "localhost:", ":80", "host:port",
             "host:0", "host:65536", "[::1]"],
)  # fmt: skip
def test_bad_targets_are_refused_by_name(text: str) -> None:
    with pytest.raises(TargetError, match=r"expected|unix"):
        parse_target(text)


@pytest.mark.parametrize(
    ("target", "authority"),
    [(Target(unix_path="/x"), "localhost"), (Target(host="h", port=1), "h:1"),
     (Target(host="::1", port=2), "[::1]:2")],
)  # fmt: skip
def test_authority(target: Target, authority: str) -> None:
    assert target.authority == authority


@pytest.mark.parametrize(
    ("value", "name"), [("0", "OK"), ("1", "CANCELLED"), ("14", "UNAVAILABLE"),
                        ("16", "UNAUTHENTICATED"), ("17", "UNKNOWN"), ("x", "UNKNOWN")],
)  # fmt: skip
def test_status_names(value: str, name: str) -> None:
    assert code_name(value) == name


@given(
    messages=st.lists(st.binary(max_size=300), max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=3000), max_size=12),
)
def test_messages_come_out_whole_and_in_order_however_the_bytes_are_split(
    messages: list[bytes], cuts: list[int]
) -> None:
    wire = b"".join(frame(message) for message in messages)
    points = sorted({0, len(wire), *(cut for cut in cuts if cut < len(wire))})
    reader = MessageReader(max_bytes=300)
    out: list[bytes] = []
    for start, end in itertools.pairwise(points):
        out += reader.feed(wire[start:end])
    assert out == messages
    assert not reader.partial


def test_a_compressed_or_oversized_message_is_an_error() -> None:
    with pytest.raises(CallError) as compressed:
        MessageReader(100).feed(b"\x01\x00\x00\x00\x01x")
    assert compressed.value.code == "INTERNAL"
    with pytest.raises(CallError) as oversized:
        MessageReader(100).feed(b"\x00\x00\x00\x00\x65")  # 101 bytes announced
    assert oversized.value.code == "RESOURCE_EXHAUSTED"
    assert MessageReader(101).feed(b"\x00\x00\x00\x00\x65") == []  # control: within the limit


# ------------------------------------------------------------------ against grpcio


def _identity(data: bytes) -> bytes:
    return data


class Server:
    """A grpcio server whose one streaming method runs ``behaviour(requests, context)``."""

    def __init__(self, behaviour: object, *, tcp: bool = False, start: bool = True) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="kw-"))
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        handler = grpc.stream_stream_rpc_method_handler(
            behaviour, request_deserializer=_identity, response_serializer=_identity
        )
        self._server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE, {"Chat": handler}),)
        )
        if tcp:
            port = self._server.add_insecure_port("127.0.0.1:0")
            self.target = Target(host="127.0.0.1", port=port)
        else:
            path = self._dir / "s.sock"
            self._server.add_insecure_port(f"unix://{path}")
            self.target = Target(unix_path=str(path))
        if start:
            self._server.start()

    def start(self) -> None:
        self._server.start()

    def stop(self) -> None:
        self._server.stop(grace=None)
        shutil.rmtree(self._dir, ignore_errors=True)


def _call(target: Target, max_bytes: int = 1 << 20, timeout_s: float = 5.0) -> Call:
    return Call(target, METHOD, connect_timeout_s=timeout_s, max_receive_bytes=max_bytes)


def echo(requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
    for request in requests:
        yield request[::-1]


@pytest.mark.slow
@pytest.mark.parametrize("tcp", [False, True], ids=["unix", "tcp"])
def test_a_conversation_then_status_ok(tcp: bool) -> None:
    server = Server(echo, tcp=tcp)
    try:
        call = _call(server.target)
        sizes = [0, 1, 100, 20_000, 70_000, 300_000]  # over a frame, over the default window
        for size in sizes:
            message = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
            call.send(message)
            assert call.receive() == message[::-1]
        call.done_writing()
        assert call.receive() is None
        call.cancel()
    finally:
        server.stop()


@pytest.mark.slow
def test_an_error_status_ends_the_call_with_its_code_and_details() -> None:
    def fail(requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
        yield next(requests)
        context.abort(grpc.StatusCode.PERMISSION_DENIED, "not you: 100% sure")

    server = Server(fail)
    try:
        call = _call(server.target)
        call.send(b"hi")
        assert call.receive() == b"hi"
        with pytest.raises(CallError) as ended:
            call.receive()
        assert ended.value.code == "PERMISSION_DENIED"
        assert ended.value.details == "not you: 100% sure"
        call.cancel()
    finally:
        server.stop()


@pytest.mark.slow
def test_trailers_only_an_unknown_method() -> None:
    server = Server(echo)
    try:
        call = Call(server.target, "/test.Echo/Nothing", connect_timeout_s=5, max_receive_bytes=10)
        call.send(b"x")
        with pytest.raises(CallError) as ended:
            call.receive()
        assert ended.value.code == "UNIMPLEMENTED"
        call.cancel()
    finally:
        server.stop()


@pytest.mark.slow
def test_an_oversized_message_ends_the_call() -> None:
    server = Server(echo)
    try:
        call = _call(server.target, max_bytes=10)
        call.send(b"0123456789")
        assert call.receive() == b"9876543210"  # control: at the limit
        call.send(b"0123456789a")
        with pytest.raises(CallError) as ended:
            call.receive()
        assert ended.value.code == "RESOURCE_EXHAUSTED"
        call.cancel()
    finally:
        server.stop()


@pytest.mark.slow
def test_a_server_that_goes_away_ends_the_call_unavailable_or_cancelled() -> None:
    started = threading.Event()

    def hang(requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
        yield next(requests)
        started.set()
        time.sleep(10)  # a server that hangs
        yield b"late"

    server = Server(hang)
    call = _call(server.target)
    call.send(b"a")
    assert call.receive() == b"a"
    assert started.wait(5)
    server.stop()
    with pytest.raises(CallError) as ended:
        call.receive()
    assert ended.value.code in {"UNAVAILABLE", "CANCELLED", "INTERNAL"}
    call.cancel()


@pytest.mark.slow
def test_a_server_not_listening_yet_is_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """The race, forced: the server's socket appears only once a first try found none
    (gRPC listens from the moment it binds, so a server merely not started yet would
    queue the connection instead of refusing it)."""
    server = Server(echo)
    assert server.target.unix_path is not None
    path = Path(server.target.unix_path)
    hidden = path.with_name("not-yet.sock")
    path.rename(hidden)
    tries: list[int] = []

    class Sockets:
        """The socket type as the wire sees it: the socket appears at the second try."""

        def __getattr__(self, name: str) -> object:
            return getattr(socket, name)

        def socket(self, *args: Any) -> socket.socket:
            tries.append(1)
            if len(tries) == 2:
                hidden.rename(path)
            return socket.socket(*args)

    monkeypatch.setattr(wire, "_socket", Sockets())
    try:
        call = _call(server.target)
        call.send(b"ab")
        assert call.receive() == b"ba"
        call.cancel()
        assert len(tries) == 2  # refused, then connected
    finally:
        server.stop()


def test_no_server_at_all_times_out() -> None:
    with tempfile.TemporaryDirectory() as work:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            _call(Target(unix_path=f"{work}/none.sock"), timeout_s=0.3)
        assert time.monotonic() - started < 3


@pytest.mark.slow
def test_a_peer_that_is_not_http2_ends_the_call() -> None:
    with tempfile.TemporaryDirectory() as work:
        path = f"{work}/junk.sock"
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(path)
        listener.listen(1)

        def junk() -> None:
            peer, _ = listener.accept()
            peer.recv(1024)
            peer.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            peer.close()

        thread = threading.Thread(target=junk)
        thread.start()
        call = _call(Target(unix_path=path))
        with pytest.raises(CallError):
            call.receive()
        call.cancel()
        thread.join()
        listener.close()


@pytest.mark.parametrize(
    ("raw", "text"),
    [(b"plain", "plain"), (b"100%25 sure", "100% sure"), (b"caf%C3%A9", "café"),
     (b"%zz stays", "%zz stays"), (b"%", "%"), (b"", "")],
)  # fmt: skip
def test_status_messages_are_percent_decoded(raw: bytes, text: str) -> None:
    assert unquote_message(raw) == text


# ------------------------------------------------------------------ a raw HTTP/2 peer


class RawServer:
    """A one-connection HTTP/2 server on h2 (not gRPC), to end a call in ways grpcio does
    not: ``behaviour(conn, sock, stream_id)`` runs once the request's headers arrived."""

    def __init__(self, behaviour: Callable[[H2Connection, socket.socket, int], None]) -> None:
        self._dir = tempfile.mkdtemp(prefix="kw-")
        self.target = Target(unix_path=f"{self._dir}/raw.sock")
        self._listener = socket.socket(socket.AF_UNIX)
        self._listener.bind(self.target.unix_path or "")
        self._listener.listen(1)
        self._behaviour = behaviour
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        peer, _ = self._listener.accept()
        conn = H2Connection(H2Configuration(client_side=False, header_encoding=None))
        conn.initiate_connection()
        peer.sendall(conn.data_to_send())
        stream_id = 0
        while not stream_id:
            for event in conn.receive_data(peer.recv(65536)):
                if isinstance(event, h2.events.RequestReceived):
                    stream_id = event.stream_id
            peer.sendall(conn.data_to_send())
        self._behaviour(conn, peer, stream_id)

    def close(self) -> None:
        self._thread.join(5)
        self._listener.close()
        shutil.rmtree(self._dir, ignore_errors=True)


def _goaway(conn: H2Connection, peer: socket.socket, stream_id: int) -> None:
    conn.close_connection(last_stream_id=0)  # the request is refused: GOAWAY before it
    peer.sendall(conn.data_to_send())
    time.sleep(0.3)  # the peer lingers, then hangs up
    peer.close()


def _hang_up(conn: H2Connection, peer: socket.socket, stream_id: int) -> None:
    peer.close()


def _reset(conn: H2Connection, peer: socket.socket, stream_id: int) -> None:
    conn.send_headers(stream_id, [(b":status", b"200"), (b"content-type", b"application/grpc")])
    conn.send_data(stream_id, frame(b"one"))
    conn.reset_stream(stream_id, h2.errors.ErrorCodes.CANCEL)
    peer.sendall(conn.data_to_send())
    time.sleep(0.3)  # the peer lingers, then hangs up
    peer.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("behaviour", "codes"),
    [
        (_goaway, {"UNAVAILABLE"}),
        (_hang_up, {"UNAVAILABLE"}),
        (_reset, {"CANCELLED", "UNAVAILABLE"}),  # a write may fail before the reset is read
    ],
    ids=["goaway", "hang-up", "reset"],
)
def test_a_peer_that_ends_the_connection_ends_sends_and_reads_with_call_errors(
    behaviour: Callable[[H2Connection, socket.socket, int], None], codes: set[str]
) -> None:
    server = RawServer(behaviour)
    try:
        call = _call(server.target)
        received: list[bytes] = []
        with pytest.raises(CallError) as ended:
            for _ in range(200):  # a closed socket may take a write or two before it fails
                call.send(b"x" * 1000)
                time.sleep(0.005)  # the client's pace of writes
            while (message := call.receive()) is not None:
                received.append(message)
        assert ended.value.code in codes
        assert received in ([], [b"one"])
        call.done_writing()  # after the end: nothing, no error
        call.cancel()
    finally:
        server.close()


def _trickle(conn: H2Connection, peer: socket.socket, stream_id: int) -> None:
    """A peer that keeps the call alive with a byte of a message every 0.2 s, for ever
    (until the client goes)."""
    conn.send_headers(stream_id, [(b":status", b"200"), (b"content-type", b"application/grpc")])
    peer.sendall(conn.data_to_send())
    conn.send_data(stream_id, frame(b"x" * 10_000))
    data = conn.data_to_send()
    try:
        for byte in range(len(data)):
            peer.sendall(data[byte : byte + 1])
            time.sleep(0.2)  # the peer's pace: each byte well inside a read's timeout
    except OSError:
        pass  # the client gave up and closed: what the test waits for
    finally:
        peer.close()


@pytest.mark.slow
def test_a_deadline_bounds_every_read_together_however_a_peer_spaces_its_bytes() -> None:
    server = RawServer(_trickle)
    try:
        call = _call(server.target)
        call.set_timeout(1.0)  # each read alone would wait no more than this
        call.set_deadline(1.5)
        started = time.monotonic()
        with pytest.raises(CallError) as ended:
            call.receive()
        assert ended.value.code == "DEADLINE_EXCEEDED"
        assert time.monotonic() - started < 3.0  # not a second per byte for ever
        call.cancel()
    finally:
        server.close()
