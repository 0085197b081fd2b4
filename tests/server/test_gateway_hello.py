"""Play streams before their Hello, against a real server on a loopback port: what a
stranger's first messages can make the server hold.

The streams are raw HTTP/2 (the h2 library), so a first message can announce a
size and send all of it but its last byte, as a hostile client would; what the
server lets in is what its flow-control windows allow the client to send.
"""

from __future__ import annotations

import gc
import queue
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import h2.config
import h2.connection
import h2.events
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee.endpoint import MAX_MESSAGE_BYTES
from arena.server.app import ApiServer, create_server
from arena.server.gateway import PLAY_METHOD
from arena.server.limits import StreamLimits
from arena.server.uploads import MAX_REQUEST_BYTES
from arena.store import Store
from arena.testing.waiting import assert_stays, wait_until

WINDOW = 65_535
"""HTTP/2's initial window: what a stream may send before the server opens it wider."""
MESSAGE = 192 * 1024
"""Past the first window and a Hello's limit, within the server's message limit."""


@dataclass
class RawStreams:
    """``count`` Play streams on one raw connection, each sending a first message that
    announces ``size`` bytes (all but the last byte when ``hold``), pumped in a thread."""

    port: int
    count: int
    size: int
    hold: bool = True
    let_in: int = 0
    goodbyes: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=0.05)
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.h2 = h2.connection.H2Connection(config)
        self.h2.initiate_connection()
        self.sent: dict[int, int] = {}
        for _ in range(self.count):
            stream = self.h2.get_next_available_stream_id()
            self.h2.send_headers(stream, [
                (":method", "POST"), (":scheme", "http"), (":path", PLAY_METHOD),
                (":authority", "127.0.0.1"), ("content-type", "application/grpc"),
                ("te", "trailers"),
            ])  # fmt: skip
            self.sent[stream] = 0
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _push(self) -> None:
        whole = self.size + 5 - (1 if self.hold else 0)
        for stream, done in self.sent.items():
            window = min(self.h2.local_flow_control_window(stream), whole - done, 16_384)
            while window >= (5 if done == 0 else 1):  # the length prefix in one piece
                head = b"\x00" + self.size.to_bytes(4, "big") if done == 0 else b""
                self.h2.send_data(stream, head + b"\x0a" * (window - len(head)))
                done += window
                self.let_in += window
                window = min(self.h2.local_flow_control_window(stream), whole - done, 16_384)
            self.sent[stream] = done
        self.sock.sendall(self.h2.data_to_send())

    def _pump(self) -> None:
        self._push()
        while not self.stop.is_set():
            try:
                data = self.sock.recv(1 << 16)
            except TimeoutError:
                continue
            if not data:
                return
            for event in self.h2.receive_data(data):
                if isinstance(event, h2.events.DataReceived):
                    self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    reply = referee_pb2.PlayResponse.FromString(event.data[5:])
                    self.goodbyes.append(reply.goodbye.reason)
            self._push()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self.sock.close()


Serve = Callable[[StreamLimits], tuple[ApiServer, int]]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    """Start a server of the given limits on a loopback port; stopped after the test."""
    store = Store.open(tmp_path / "data")
    servers: list[ApiServer] = []

    def start(limits: StreamLimits) -> tuple[ApiServer, int]:
        server, port = create_server("127.0.0.1:0", store=store, max_workers=2, limits=limits)
        server.start()
        servers.append(server)
        return server, port

    try:
        yield start
    finally:
        for server in servers:
            server.stop(grace=None).wait(10)
        store.close()


def _play(port: int, first: bytes) -> list[str]:
    """The Goodbye reasons a gRPC client's Play stream gets after ``first``."""
    options = [("grpc.max_send_message_length", -1)]
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
        play = channel.stream_stream(
            PLAY_METHOD, request_serializer=lambda b: b, response_deserializer=lambda b: b
        )
        outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        outbox.put(first)
        replies = list(play(iter(outbox.get, None), timeout=30))
        outbox.put(None)
    return [referee_pb2.PlayResponse.FromString(r).goodbye.reason for r in replies]


def _hello() -> bytes:
    hello = referee_pb2.Hello(token="no-such-seat", bot_name="far", protocol_version=1)
    return referee_pb2.PlayRequest(hello=hello).SerializeToString()


READS = [
    # (case, hello_reads, hello_reads_per_peer): two first messages read at once either way
    ("server-wide", 2, 8),
    ("per address", 8, 2),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("reads", "per_peer"), [c[1:] for c in READS], ids=[c[0] for c in READS])
def test_strangers_large_first_messages_are_read_a_few_at_a_time(
    serve: Serve, reads: int, per_peer: int
) -> None:
    """Six streams each send all but the last byte of a 192 KiB first message: the server lets
    in two of them (the turns it reads) and HTTP/2's first window of the others, and no
    more while they wait; the server's other callers are still answered."""
    _, port = serve(StreamLimits(hello_reads=reads, hello_reads_per_peer=per_peer))
    streams = RawStreams(port, 6, MESSAGE)
    try:
        bound = 2 * (MESSAGE + 5) + 4 * WINDOW
        wait_until(lambda: streams.let_in >= 2 * MESSAGE, "two first messages let in", 10,
                   state=lambda: streams.let_in)  # fmt: skip
        assert_stays(lambda: streams.let_in <= bound, 1.0, "at most two messages let in",
                     state=lambda: streams.let_in)  # fmt: skip
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:  # others are answered
            health = health_pb2_grpc.HealthStub(channel)
            answer = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        streams.close()


@pytest.mark.slow
def test_small_first_messages_are_answered_at_once_whatever_the_turns(serve: Serve) -> None:
    """The control: six streams of small (not Hello) first messages, one turn at a time:
    each is read and answered in its turn, none waits for its Hello deadline."""
    _, port = serve(StreamLimits(hello_reads=1, hello_reads_per_peer=1, hello_wait_s=60))
    streams = RawStreams(port, 6, 100, hold=False)
    try:
        wait_until(lambda: len(streams.goodbyes) == 6, "six goodbyes", 10,
                   state=lambda: streams.goodbyes)  # fmt: skip
        assert set(streams.goodbyes) == {"the first message must be a Hello carrying a seat token"}
    finally:
        streams.close()


@pytest.mark.slow
def test_a_stream_that_never_had_a_turn_is_told_the_limits(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One stranger holds the only turn with a message it never finishes: a Hello sent
    meanwhile is not read within its deadline, and its Goodbye names the limits. Once the
    stranger goes, a Hello is read (and judged) again."""
    server, port = serve(StreamLimits(hello_reads=1, hello_reads_per_peer=1, hello_wait_s=60))
    holder = RawStreams(port, 1, MESSAGE)
    try:
        wait_until(lambda: holder.let_in > WINDOW, "the holder's turn", 10)
        assert server._gateway is not None
        monkeypatch.setattr(server._gateway, "hello_wait_s", 1.0)  # the Hello's deadline only
        assert _play(port, _hello()) == [
            "no Hello read within 1 s: the gateway reads at most 1 first messages at once"
            " (1 per address), and none was free"
        ]
    finally:
        holder.close()
    assert _play(port, _hello()) == ["unknown seat token"]


def _held_large_messages() -> int:
    """Objects the collector tracks that hold a message larger than a Hello's limit."""
    return sum(
        any(isinstance(r, bytes) and len(r) > MAX_MESSAGE_BYTES for r in gc.get_referents(o))
        for o in gc.get_objects()
    )


@pytest.mark.slow
@pytest.mark.parametrize("size", [MAX_MESSAGE_BYTES + 1, MAX_REQUEST_BYTES - 1024])
def test_a_first_message_past_a_hellos_limit_is_refused_naming_it_and_let_go(
    serve: Serve, size: int
) -> None:
    """Refused at once, the limit named, and gRPC's reader lets go of the message (with the
    cyclic collector off, it would otherwise stay until a collection)."""
    _, port = serve(StreamLimits())
    gc.collect()
    gc.disable()
    try:
        before = _held_large_messages()
        assert _play(port, b"\x0a" * size) == [
            f"a first message of {size} bytes: a Hello has at most {MAX_MESSAGE_BYTES} bytes"
        ]
        assert _held_large_messages() == before
    finally:
        gc.enable()
