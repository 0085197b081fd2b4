"""The bot-facing gRPC service (``kahuna.v1.RefereeService``): transport only.

Each bot of a match gets a private ``BotEndpoint``: a gRPC server on its own
Unix socket that accepts one ``Play`` stream at a time. The endpoint never
interprets a message: everything a bot sends (or fails to send) becomes an
``Arrival`` on the match's queue, stamped with the bot's slot, the launch
generation and the time it arrived, and the referee's judge decides what it
means. Because each socket belongs to one bot, even a connection with a
forged token is charged to the bot that made it.
"""

from __future__ import annotations

import enum
import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path

import grpc
from google.protobuf.message import DecodeError

from arena.logs import get_logger
from arena.protocol.gen.kahuna.v1 import referee_pb2

SERVICE_NAME = "kahuna.v1.RefereeService"
MAX_MESSAGE_BYTES = 64 * 1024
"""Largest message a bot may send; larger ones are protocol violations."""
TRANSPORT_MAX_BYTES = 8 * 1024 * 1024
"""gRPC's own limit: beyond it the transport cuts the stream (a disconnect)."""
MAX_SOCKET_PATH_CHARS = 107
MAX_STREAMS_PER_ENDPOINT = 4
STOP_GRACE_S = 1.0
"""How long ``stop`` lets ended streams deliver their final status before cutting them."""


WireTap = Callable[[int, bytes], None]
"""Called with (slot, bytes) for every message as it goes on the wire (tests, tracing)."""


class ArrivalKind(enum.Enum):
    MESSAGE = "message"
    UNDECODABLE = "undecodable"
    OVERSIZED = "oversized"
    SECOND_STREAM = "second_stream"
    STREAM_CLOSED = "stream_closed"


@dataclass(frozen=True, slots=True)
class Arrival:
    """Something a bot's connection produced."""

    slot: int
    generation: int
    kind: ArrivalKind
    received_ns: int
    message: referee_pb2.PlayRequest | None = None
    size_bytes: int = 0


class _Close:
    """Marker put in an outbox to end the stream."""


_CLOSE = _Close()


class _Taken:
    """What the deserializer hands the reader for a message ``early`` already took."""


_TAKEN = _Taken()


class BotEndpoint:
    """One bot's socket: a gRPC server with at most one live Play stream."""

    def __init__(
        self,
        slot: int,
        socket_path: Path,
        arrivals: queue.SimpleQueue[Arrival],
        wire_tap: WireTap | None = None,
    ) -> None:
        if len(str(socket_path)) > MAX_SOCKET_PATH_CHARS:
            raise ValueError(f"socket path {socket_path} is longer than gRPC allows")
        self.slot = slot
        self.socket_path = socket_path
        self.generation = 0
        self._arrivals = arrivals
        self._lock = threading.Lock()
        self._outbox: queue.SimpleQueue[bytes | _Close] | None = None
        self._idle = threading.Event()  # no accepted stream is being served
        self._idle.set()
        self._log = get_logger(slot=slot)
        self._wire_tap = wire_tap
        self._live_generation = -1
        self.early: Callable[[Arrival], bool] | None = None
        """Offered each well-formed message of the live stream in gRPC's own receiving
        thread, before the reader thread sees it: True if it took the message (the
        referee's fast path for replies: one thread wake less per decision)."""
        handler = grpc.stream_stream_rpc_method_handler(
            self._play, request_deserializer=self._deserialize,
            response_serializer=self._serialize,
        )  # fmt: skip
        self._server = grpc.server(
            futures.ThreadPoolExecutor(
                max_workers=MAX_STREAMS_PER_ENDPOINT, thread_name_prefix=f"bot{slot}"
            ),
            handlers=[grpc.method_handlers_generic_handler(SERVICE_NAME, {"Play": handler})],
            maximum_concurrent_rpcs=MAX_STREAMS_PER_ENDPOINT,
            options=[("grpc.max_receive_message_length", TRANSPORT_MAX_BYTES)],
        )
        self._server.add_insecure_port(f"unix://{socket_path}")

    def _deserialize(self, raw: bytes) -> bytes | _Taken:
        early = self.early
        if early is None or self._outbox is None or len(raw) > MAX_MESSAGE_BYTES:
            return raw
        message = referee_pb2.PlayRequest()
        try:
            message.ParseFromString(raw)
        except DecodeError:
            return raw
        arrival = Arrival(
            self.slot, self._live_generation, ArrivalKind.MESSAGE, time.monotonic_ns(),
            message, len(raw),
        )  # fmt: skip
        try:
            return _TAKEN if early(arrival) else raw
        except Exception as error:  # never let gRPC see it: the reader posts the message
            self._log.warning("bot_message_early_failed", error=repr(error))
            return raw

    def _serialize(self, frame: bytes) -> bytes:
        if self._wire_tap is not None:
            self._wire_tap(self.slot, frame)
        return frame

    def start(self) -> None:
        self._server.start()

    def stop(self) -> None:
        """End the live stream and stop the server (idempotent).

        A stream counts as idle once its handler is done, which can be before gRPC has
        sent its status: a stop without grace would then cancel it on the wire, and a
        bot (or the gateway proxying one) that already has its MatchOver would see its
        call fail (UNAVAILABLE, GOAWAY). The grace lets such calls finish cleanly; new
        streams are refused at once, and every stream was closed above or before.
        """
        self.close_stream()
        self._server.stop(grace=STOP_GRACE_S).wait(STOP_GRACE_S + 5)

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until no accepted stream is being served (its last messages sent)."""
        return self._idle.wait(timeout_s)

    @property
    def connected(self) -> bool:
        return self._outbox is not None

    def send(self, frame: bytes) -> bool:
        """Queue a serialised ``PlayResponse`` on the live stream; False when there is none."""
        outbox = self._outbox
        if outbox is None:
            return False
        outbox.put(frame)
        return True

    def close_stream(self) -> None:
        """End the live stream after the messages already queued."""
        with self._lock:
            outbox, self._outbox = self._outbox, None
        if outbox is not None:
            outbox.put(_CLOSE)

    def _post(
        self,
        generation: int,
        kind: ArrivalKind,
        message: referee_pb2.PlayRequest | None = None,
        size_bytes: int = 0,
    ) -> None:
        self._arrivals.put(
            Arrival(self.slot, generation, kind, time.monotonic_ns(), message, size_bytes)
        )

    def _play(
        self, request_iterator: Iterator[bytes | _Taken], context: grpc.ServicerContext
    ) -> Iterator[bytes]:
        outbox: queue.SimpleQueue[bytes | _Close] = queue.SimpleQueue()
        with self._lock:
            generation = self.generation
            if self._outbox is not None:
                refused = True
            else:
                refused = False
                self._outbox = outbox
                self._live_generation = generation
                self._idle.clear()
        if refused:
            self._post(generation, ArrivalKind.SECOND_STREAM)
            context.abort(grpc.StatusCode.ALREADY_EXISTS, "one Play stream per bot")
        context.add_callback(lambda: outbox.put(_CLOSE))
        reader = threading.Thread(
            target=self._read,
            args=(request_iterator, generation),
            name=f"bot{self.slot}-reader",
            daemon=True,
        )
        reader.start()
        try:
            while True:
                item = outbox.get()
                if isinstance(item, _Close):
                    return
                yield item
        finally:
            with self._lock:
                if self._outbox is outbox:
                    self._outbox = None
                self._idle.set()

    def _read(self, request_iterator: Iterator[bytes | _Taken], generation: int) -> None:
        try:
            for raw in request_iterator:
                if not isinstance(raw, _Taken):
                    self._post_raw(raw, generation)
        except grpc.RpcError:
            pass  # the stream broke: cancelled, transport limit, peer gone
        except Exception as error:  # a reader thread must never die silently or loudly
            self._log.warning("bot_stream_read_failed", error=repr(error))
        self._post(generation, ArrivalKind.STREAM_CLOSED)

    def _post_raw(self, raw: bytes, generation: int) -> None:
        if len(raw) > MAX_MESSAGE_BYTES:
            self._post(generation, ArrivalKind.OVERSIZED, size_bytes=len(raw))
            return
        message = referee_pb2.PlayRequest()
        try:
            message.ParseFromString(raw)
        except DecodeError:
            self._post(generation, ArrivalKind.UNDECODABLE, size_bytes=len(raw))
            return
        self._post(generation, ArrivalKind.MESSAGE, message=message, size_bytes=len(raw))
