"""The bot-facing gRPC service (``kahuna.v1.RefereeService``): transport only.

Each bot of a match gets a private ``BotEndpoint``: a gRPC server on its own
Unix socket that accepts one ``Play`` stream at a time. The endpoint never
interprets a message: everything a bot sends (or fails to send) becomes an
``Arrival`` on the match's queue, stamped with the bot's slot, the launch
generation and the time it arrived, and the referee's judge decides what it
means. Because each socket belongs to one bot, even a connection with a
forged token is charged to the bot that made it.

Every endpoint of the process is an asyncio gRPC server (``grpc.aio``) on one
event loop thread: both bots' streams are read and written there, and the
match's game in play is a task of that same loop (see
``arena.referee.turn_loop``) that judges each reply and sends the next request
without waking any other thread. A synchronous server would wake four Python
threads per message (gRPC's poller, a stream reader, the response iterator and
the poller again for the send's completion), more CPU than the referee's own
work. ``send`` and
``close_stream`` may be called from any thread.

Since that one thread serves both bots, whatever a bot sends that is not the
protocol is refused before it costs anything its opponent could notice, and
each launch of a bot reports it once (``_Conduct``): the judge makes the report
a protocol violation and the referee cuts the bot off, and from then on
nothing more from that launch is read. Refusing a call costs this thread
100-200 us of gRPC's own work whatever we do (the call's tasks, its status,
its end), as much as a fast bot's whole decision, and a bot frozen while its
opponent moves still has the calls it sent before in the transport; so there
is no allowance. A call of any method but ``Play`` gets gRPC's UNIMPLEMENTED
from the method lookup (no handler, no task of ours), is reported at once
(``NOT_PROTOCOL``) and cuts the connection: this bot's server is stopped, so
nothing it still has in flight is served, and its next launch gets a new one.
``STREAMS_PER_CONNECTION`` keeps what a bot can have in flight to one call
besides its Play stream. A second stream (``SECOND_STREAM``), a message over
``MAX_MESSAGE_BYTES`` (``OVERSIZED``) and more messages than the bot was sent
frames (``NOT_PROTOCOL``) are reported at once, without parsing; a launch that
goes on sending after such a report has its connection cut the same way.
``CONNECTIONS_PER_ENDPOINT`` bounds the connections a bot holds to its socket: each
one the server keeps is a descriptor of the arena's process, which serves every match
and every client of the host.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import os
import queue
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc
from google.protobuf.message import DecodeError

from arena.logs import get_logger
from arena.protocol.gen.kahuna.v1 import referee_pb2

SERVICE_NAME = "kahuna.v1.RefereeService"
PLAY_METHOD = f"/{SERVICE_NAME}/Play"
MAX_MESSAGE_BYTES = 64 * 1024
"""Largest message a bot may send; larger ones are protocol violations."""
TRANSPORT_MAX_BYTES = 8 * 1024 * 1024
"""gRPC's own limit: beyond it the transport cuts the stream (a disconnect)."""
MAX_SOCKET_PATH_CHARS = 107
MAX_STREAMS_PER_ENDPOINT = 4
STREAMS_PER_CONNECTION = 2
"""HTTP/2 ``SETTINGS_MAX_CONCURRENT_STREAMS`` of a bot's socket: its Play stream and one
more. A bot's own gRPC client holds any further call until one of these ends, so a
frozen bot has at most one call the referee has not answered yet; a client that
ignores the setting loses its connection (gRPC's transport, no code of ours)."""
CONNECTIONS_PER_ENDPOINT = 4
"""Connections a bot's socket keeps open at once; one more is closed as it is accepted.
A bot needs one (a reconnect, or the gateway's for a remote bot, may overlap the one
ending); without the bound, a bot's processes could each connect up to their own
open-file limit and leave the arena's process none (no launch, no store, no client)."""
EXTRA_MESSAGES = 1
"""Messages a bot may send beyond one per frame it was sent (its Hello)."""
SHOWN_METHOD_CHARS = 60
NOT_SERVED = "a call of a method the referee does not serve"
"""The report of such a call (in the referee's words: it goes into the public record)."""
STOP_GRACE_S = 1.0
"""How long ``stop`` lets ended streams deliver their final status before cutting them."""


WireTap = Callable[[int, bytes], None]
"""Called with (slot, bytes) for every message as it goes on the wire (tests, tracing)."""
RawTaker = Callable[[int, int, bytes, int], bool]
"""Offered (slot, generation, bytes, received_ns) of each message within the size limit
before it is parsed, in the loop thread; True: taken, no Arrival is posted for it."""


class ArrivalKind(enum.Enum):
    MESSAGE = "message"
    UNDECODABLE = "undecodable"
    OVERSIZED = "oversized"
    SECOND_STREAM = "second_stream"
    STREAM_CLOSED = "stream_closed"
    NOT_PROTOCOL = "not_protocol"
    """Traffic that is not the protocol beyond the allowance (``detail`` says what)."""


@dataclass(frozen=True, slots=True)
class Arrival:
    """Something a bot's connection produced."""

    slot: int
    generation: int
    kind: ArrivalKind
    received_ns: int
    message: referee_pb2.PlayRequest | None = None
    size_bytes: int = 0
    detail: str = ""


class _Close:
    """Marker put in an outbox to end the stream."""


_CLOSE = _Close()
_T = TypeVar("_T")
OnWire = Callable[[int, int], None]
"""Called in the loop thread as a frame is handed to the transport, with that time and
the time its stream became free for it (the previous write done), both
``time.monotonic_ns()``: a request's clock starts there (``Clock.sent``)."""
_Item = bytes | tuple[bytes, OnWire] | _Close
LOOP_CALL_TIMEOUT_S = 10.0


class _LoopThread:
    """The process's one event loop for bot endpoints, in a daemon thread (made on first
    use, and again in a child process: a loop thread does not survive a fork)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0
        self.thread_id = -1

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid():
                loop = asyncio.new_event_loop()
                started = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    self.thread_id = threading.get_ident()
                    started.set()
                    loop.run_forever()

                threading.Thread(target=run, name="referee-grpc", daemon=True).start()
                started.wait()
                self._loop, self._pid = loop, os.getpid()
            return self._loop

    def run(self, coroutine: Coroutine[Any, Any, _T], timeout_s: float) -> _T:
        """Run ``coroutine`` on the loop and wait for its result (never from the loop)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop()).result(timeout_s)


_LOOP_THREAD = _LoopThread()


def run_on_loop(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coroutine`` on the endpoints' loop and wait, without a limit, for its result
    (never from the loop); cancelled there if the wait is interrupted (Ctrl-C)."""
    future = asyncio.run_coroutine_threadsafe(coroutine, _LOOP_THREAD.loop())
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise


def call_on_loop(callback: Callable[[], None]) -> None:
    """Run ``callback`` in the endpoints' loop thread: now if this is that thread, else
    as soon as the loop gets to it."""
    if threading.get_ident() == _LOOP_THREAD.thread_id:
        callback()
    else:
        _LOOP_THREAD.loop().call_soon_threadsafe(callback)


def parse_arrival(slot: int, generation: int, raw: bytes, received_ns: int) -> Arrival:
    """The ``Arrival`` of one message's bytes (within the size limit): the parsed
    ``PlayRequest``, or ``UNDECODABLE``."""
    message = referee_pb2.PlayRequest()
    try:
        message.ParseFromString(raw)
    except DecodeError:
        return Arrival(slot, generation, ArrivalKind.UNDECODABLE, received_ns, size_bytes=len(raw))
    return Arrival(slot, generation, ArrivalKind.MESSAGE, received_ns, message, len(raw))


class _Outbox:
    """What is to be written on one stream, in order; filled from any thread.

    The writer parks on a bare future when the outbox is empty (an ``asyncio.Event``
    costs more per message: its own waiter list and a loop check on every wait)."""

    __slots__ = ("items", "loop", "waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.items: collections.deque[_Item] = collections.deque()
        self.loop = loop
        self.waiter: asyncio.Future[None] | None = None

    def put(self, item: _Item) -> None:
        self.items.append(item)
        if threading.get_ident() == _LOOP_THREAD.thread_id:
            self._wake()
        else:
            self.loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        """Loop thread: resume a parked writer."""
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def filled(self) -> None:
        """Loop thread: return once there is an item (at once if there is one)."""
        while not self.items:
            waiter = self.waiter = self.loop.create_future()
            try:
                await waiter
            finally:
                self.waiter = None


class _Conduct:
    """Loop thread: what one launch (generation) of a bot sent.

    Once something that is not the protocol is reported, the launch is ``spent``: the
    referee is cutting it off, and nothing more of it is read or posted."""

    __slots__ = ("generation", "received", "sent", "spent")

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.spent = False
        self.received = 0  # messages on Play streams
        self.sent = 0  # frames written on Play streams


class _Methods(grpc.GenericRpcHandler):  # type: ignore[type-arg]  # generic in the stubs only
    """Finds ``Play``; any other method is reported against the bot and refused (None:
    gRPC answers UNIMPLEMENTED without running anything of ours)."""

    def __init__(self, endpoint: BotEndpoint) -> None:
        self._endpoint = endpoint
        self._play = grpc.stream_stream_rpc_method_handler(endpoint._play)  # bytes in and out

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[bytes, bytes] | None:
        method = handler_call_details.method
        if method == PLAY_METHOD:
            return self._play
        self._endpoint._refuse_call(str(method))
        return None


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
        self.deliver: Callable[[Arrival], None] = arrivals.put
        """Where each ``Arrival`` goes, in the loop thread (the match's ``TurnLoop`` takes
        it over); by default, onto ``arrivals``."""
        self._lock = threading.Lock()
        self._outbox: _Outbox | None = None
        self._idle = threading.Event()  # no accepted stream is being served
        self._idle.set()
        self._log = get_logger(slot=slot)
        self._wire_tap = wire_tap
        self.take_raw: RawTaker | None = None
        """The referee's hot path (see ``RawTaker``); None: every message is parsed."""
        self._conduct = _Conduct(self.generation)
        self._cut: asyncio.Task[None] | None = None
        """Loop thread: the stop of a server whose bot kept on after its report."""
        self._server: grpc.aio.Server = _LOOP_THREAD.run(self._make_server(), LOOP_CALL_TIMEOUT_S)

    async def _make_server(self) -> grpc.aio.Server:
        server = grpc.aio.server(
            handlers=[_Methods(self)],
            maximum_concurrent_rpcs=MAX_STREAMS_PER_ENDPOINT,
            options=[
                ("grpc.max_receive_message_length", TRANSPORT_MAX_BYTES),
                ("grpc.max_concurrent_streams", STREAMS_PER_CONNECTION),
                ("grpc.max_allowed_incoming_connections", CONNECTIONS_PER_ENDPOINT),
            ],
        )
        server.add_insecure_port(f"unix://{self.socket_path}")
        return server

    def start(self) -> None:
        _LOOP_THREAD.run(self._server.start(), LOOP_CALL_TIMEOUT_S)

    def new_launch(self) -> None:
        """A new launch of the bot: a new generation, and a new server (on the same path)
        if the last one was stopped because its bot kept on after a violation."""
        self.generation += 1
        if self._cut is not None:
            _LOOP_THREAD.run(self._serve_again(), LOOP_CALL_TIMEOUT_S)

    async def _serve_again(self) -> None:
        cut, self._cut = self._cut, None
        if cut is not None:
            await cut
            self._server = await self._make_server()
            await self._server.start()

    def _cut_connection(self) -> None:
        """Loop thread: stop serving this bot at all (it called a method that is not
        ``Play``, or keeps sending after a report).

        Stopping the server closes the bot's connection, so whatever else it sent or
        sends costs the referee nothing (refusing each call, even unread, is work in the
        thread that serves its opponent); the next launch gets a new server
        (``new_launch``)."""
        if self._cut is None:
            self._log.info("bot_connection_cut", generation=self.generation)
            self._cut = asyncio.get_running_loop().create_task(self._server.stop(0))

    def stop(self) -> None:
        """End the live stream and stop the server (idempotent).

        A stream counts as idle once its handler is done, which can be before gRPC has
        sent its status: a stop without grace would then cancel it on the wire, and a
        bot (or the gateway proxying one) that already has its MatchOver would see its
        call fail (UNAVAILABLE, GOAWAY). The grace lets such calls finish cleanly; new
        streams are refused at once, and every stream was closed above or before.
        """
        self.close_stream()
        try:
            _LOOP_THREAD.run(self._server.stop(STOP_GRACE_S), STOP_GRACE_S + 5)
        except futures.TimeoutError:
            self._log.warning("bot_endpoint_stop_timed_out")

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until no accepted stream is being served (its last messages sent)."""
        return self._idle.wait(timeout_s)

    @property
    def connected(self) -> bool:
        return self._outbox is not None

    def send(self, frame: bytes, on_wire: OnWire | None = None) -> bool:
        """Queue a serialised ``PlayResponse`` on the live stream; False when there is none.

        ``on_wire`` is called in the loop thread as the frame is handed to the transport
        (``OnWire``): whatever the loop did before (the other bot's traffic, a refused
        call) is then not in the time the bot is charged for its reply."""
        outbox = self._outbox
        if outbox is None:
            return False
        outbox.put(frame if on_wire is None else (frame, on_wire))
        return True

    def close_stream(self) -> None:
        """End the live stream after the messages already queued."""
        with self._lock:
            outbox, self._outbox = self._outbox, None
        if outbox is not None:
            outbox.put(_CLOSE)

    def _conduct_of(self, generation: int) -> _Conduct:
        """Loop thread: the conduct of launch ``generation`` (an old launch's is spent:
        the referee has cut it off already)."""
        conduct = self._conduct
        if conduct.generation != generation:
            conduct = _Conduct(generation)
            if generation == self.generation:
                self._conduct = conduct
            else:
                conduct.spent = True
        return conduct

    def _refuse_call(self, method: str) -> None:
        """Loop thread: a call of a method that is not ``Play``: reported (the first of
        its launch), and the connection cut at once."""
        generation = self.generation
        conduct = self._conduct_of(generation)
        if not conduct.spent:
            conduct.spent = True
            # the method's name is the bot's text: for the operator's log, never the record
            shown = repr(method[:SHOWN_METHOD_CHARS])
            self._log.info("bot_not_protocol", generation=generation, method=shown)
            self._post(generation, ArrivalKind.NOT_PROTOCOL, detail=NOT_SERVED)
        self._cut_connection()

    def _post(
        self,
        generation: int,
        kind: ArrivalKind,
        message: referee_pb2.PlayRequest | None = None,
        size_bytes: int = 0,
        received_ns: int = 0,
        detail: str = "",
    ) -> None:
        self.deliver(
            Arrival(
                self.slot, generation, kind, received_ns or time.monotonic_ns(), message,
                size_bytes, detail,
            )
        )  # fmt: skip

    async def _play(
        self, _requests: object, context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> None:
        loop = asyncio.get_running_loop()
        outbox = _Outbox(loop)
        with self._lock:
            generation = self.generation
            refused = self._outbox is not None
            if not refused:
                self._outbox = outbox
                self._idle.clear()
        if refused:
            conduct = self._conduct_of(generation)
            if conduct.spent:  # one report per launch: the referee cuts it off
                self._cut_connection()
            else:
                conduct.spent = True
                self._post(generation, ArrivalKind.SECOND_STREAM)
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, "one Play stream per bot")
        reader = loop.create_task(self._read(context, generation))
        try:
            await self._write(outbox, context, generation)
        finally:
            with self._lock:
                if self._outbox is outbox:
                    self._outbox = None
            reader.cancel()
            self._idle.set()

    async def _write(
        self, outbox: _Outbox, context: grpc.aio.ServicerContext[bytes, bytes], generation: int
    ) -> None:
        items, tap = outbox.items, self._wire_tap
        free_ns = 0  # when the last write was done: the stream is free from then on
        while True:
            if not items:
                await outbox.filled()
            item = items.popleft()
            if isinstance(item, _Close):
                return
            on_wire = None
            if isinstance(item, tuple):
                item, on_wire = item
            self._conduct_of(generation).sent += 1  # before the bot can answer it
            if tap is not None:
                tap(self.slot, item)
            if on_wire is not None:
                on_wire(time.monotonic_ns(), free_ns)  # before the write: no reply sooner
            try:
                await context.write(item)
            except Exception:  # the stream broke under us: the reader reports it
                return
            free_ns = time.monotonic_ns()

    async def _read(self, context: grpc.aio.ServicerContext[bytes, bytes], generation: int) -> None:
        try:
            while True:
                raw = await context.read()
                if not isinstance(raw, bytes):
                    break  # grpc.aio.EOF: the bot closed its side
                self._post_raw(raw, generation, time.monotonic_ns())
        except asyncio.CancelledError:
            pass  # the stream was ended by the referee or the transport
        except grpc.RpcError:
            pass  # the stream broke: cancelled, transport limit, peer gone
        except Exception as error:  # a reader must never die silently or loudly
            if self._cut is None:  # else: its server was stopped under it (a cut)
                self._log.warning("bot_stream_read_failed", error=repr(error))
        self._post(generation, ArrivalKind.STREAM_CLOSED)

    def _post_raw(self, raw: bytes, generation: int, received_ns: int) -> None:
        conduct = self._conduct_of(generation)
        if conduct.spent:  # this launch is being cut off: nothing more of it is read
            if generation == self.generation:
                self._cut_connection()
            return
        conduct.received += 1
        if len(raw) > MAX_MESSAGE_BYTES:
            conduct.spent = True
            self._post(generation, ArrivalKind.OVERSIZED, size_bytes=len(raw))
            return
        if conduct.received > conduct.sent + EXTRA_MESSAGES:
            # More messages than a bot may send (its Hello, then at most one per frame it
            # was sent; Welcome and GameStart need none, so the judge has seen a bad one
            # already): the rest of the flood is dropped unparsed.
            conduct.spent = True
            detail = f"{conduct.received} messages after {conduct.sent} frames sent to it"
            self._post(generation, ArrivalKind.NOT_PROTOCOL, detail=detail)
            return
        take = self.take_raw
        if take is not None and take(self.slot, generation, raw, received_ns):
            return
        self.deliver(parse_arrival(self.slot, generation, raw, received_ns))
