"""`arena serve` assembly: one gRPC server with both services, health and reflection.

``create_server(address, store=...) -> (server, port)``: bind ``host:0`` in
tests to get a free port. The server carries the arena API
(``kahuna.v1.ArenaService``) and the bot-facing referee
(``kahuna.v1.RefereeService``) as a gateway for remote bots: a bot that says
Hello with a seat token is proxied to that seat's referee socket
(arena.server.gateway). Sandboxed bots keep their private per-match Unix
sockets (arena.referee.endpoint). Health checking
(``grpc.health.v1.Health``) reports SERVING for the server ("") and for each
service; reflection lists them, so ``buf curl``/``grpcurl`` work without the
proto files. With ``credentials`` (arena.server.tls) the one port speaks TLS
for all of them; without, it is plaintext, and binding anything but a
loopback address logs a warning that bearer and seat tokens travel in clear.

The server is gRPC's asyncio server on an event loop thread of its own
(``ApiServer``, driven like a ``grpc.Server``): an open stream (WatchTournament,
WaitForSeats, WatchGame, a Play stream) is a coroutine, not a thread, so no
number of idle or slow streams can keep the other calls waiting. Unary calls
run in a thread pool. Streams are counted per token and without one
(arena.server.limits: RESOURCE_EXHAUSTED past a limit), an arena API stream ends
soon after its token is revoked or expires (arena.server.rechecks), a Play stream must say
Hello within a few seconds and ends as soon after a user token its seat token was handed
to is revoked or expires (arena.server.gateway), and keepalive pings and an idle limit
close dead and unused connections.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Awaitable
from concurrent import futures
from typing import TypeVar

import grpc
import grpc.aio
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.bots.archive import remove_stale_uploads
from arena.logs import get_logger
from arena.protocol.gen.kahuna.v1 import arena_service_pb2, arena_service_pb2_grpc, referee_pb2
from arena.server.arena_service import ArenaService, ServiceOptions
from arena.server.faults import FaultInterceptor
from arena.server.gateway import PLAY_METHOD, RefereeGateway
from arena.server.limits import CallCounter, StreamCounter, StreamLimitInterceptor, StreamLimits
from arena.server.malformed import MalformedRequestInterceptor
from arena.server.pool import DrainingPool
from arena.server.quotas import Quotas
from arena.server.rechecks import TokenRecheckInterceptor
from arena.server.tls import is_loopback
from arena.server.uploads import MAX_REQUEST_BYTES
from arena.store import Store

ARENA_SERVICE_NAME = arena_service_pb2.DESCRIPTOR.services_by_name["ArenaService"].full_name
MAX_SEND_BYTES = 128 * 1024 * 1024
REFEREE_SERVICE_NAME = referee_pb2.DESCRIPTOR.services_by_name["RefereeService"].full_name
MAX_STREAMS_PER_CONNECTION = 100
"""HTTP/2 streams one connection may have open at once (``grpc.max_concurrent_streams``):
more wait in the client until one ends. Our clients need fewer (the TLS relay of `arena
remote play` carries at most 64 Play streams on one channel); a stranger's held requests
then grow with connections (``StreamLimits.connections``), not with streams."""
DEFAULT_MAX_WORKERS = 64
"""Threads for unary calls and for the blocking work of streams (a stream holds none)."""
LOOP_CALL_TIMEOUT_S = 30.0
DRAIN_S = 5.0
"""How long a stop keeps the event loop serving the handlers still running, then closes it."""
T = TypeVar("T")


class ApiServer:
    """A ``grpc.aio`` server on its own event loop thread, driven like a ``grpc.Server``."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, thread: threading.Thread,
        server: grpc.aio.Server, pool: DrainingPool, counter: StreamCounter,
        service: ArenaService | None = None, gateway: RefereeGateway | None = None,
    ) -> None:  # fmt: skip
        self.service = service
        """Its tournaments are stopped (interrupted, saying so) before the server stops."""
        self.counter = counter
        """The open streams by token (arena.server.limits)."""
        self._loop = loop
        self._thread = thread
        self._server = server
        self._pool = pool
        self._gateway = gateway
        self._stopped = threading.Event()
        self._stopping = threading.Lock()
        self._stop_started = False
        self.drain_s = DRAIN_S
        """How long a stop waits for the handlers still running (``DRAIN_S``)."""

    @property
    def quotas(self) -> Quotas | None:
        """The per-user limits and the check queue (the web's submissions share them)."""
        return None if self.service is None else self.service.quotas

    def start(self) -> None:
        _on_loop(self._loop, self._server.start())

    def stop(self, grace: float | None) -> threading.Event:
        """Stop (calls still running get ``grace`` seconds); the event is set once stopped."""
        with self._stopping:
            if self._stop_started:
                return self._stopped
            self._stop_started = True
        if self.service is not None:  # not under the store's close: "stopped by an error"
            self.service.stop_tournaments("the server was stopped")

        async def stop() -> None:
            await self._server.stop(grace)

        def finish(_: object) -> None:  # on the loop's thread: the wind-down waits elsewhere
            threading.Thread(target=wind_down, name="arena-api-stopping", daemon=True).start()

        def wind_down() -> None:
            pools = [self._pool] if self._gateway is None else [self._pool, self._gateway.pool]
            for pool in pools:
                pool.shutdown(wait=False, cancel_futures=True)
            if self.service is not None:
                self.service.quotas.close()
                self.service.audits.shutdown(wait=False, cancel_futures=True)
            # The loop keeps running while handlers still in the pools return: an abort or
            # a reply from one of them waits on the loop, with no timeout of its own.
            deadline = time.monotonic() + self.drain_s
            running = sum(pool.drain(max(0.0, deadline - time.monotonic())) for pool in pools)
            if running:
                get_logger(service="arena_api").warning(
                    "api_calls_still_running", calls=running, waited_s=self.drain_s,
                    message=f"{running} call(s) still running {self.drain_s:g} s after the"
                    " stop; the server is stopped, its event loop kept for their answers",
                )  # fmt: skip
                # The caller goes on; the loop (a daemon thread, like this one) serves the
                # calls left until they return: closed under them, one would wait for ever.
                self._stopped.set()
                for pool in pools:
                    pool.drain(None)
            self._loop.call_soon_threadsafe(self._loop.stop)
            # Stopped once the loop is closed, not before: the process may exit as soon as
            # this is set, and its last references to the grpc.aio server then shut gRPC's
            # poller down (remove its reader, close its socket). With the loop still running,
            # that raced the loop's reading the socket: "Exception in callback
            # PollerCompletionQueue._handle_events ... OSError: [Errno 9] Bad file descriptor"
            self._thread.join()
            self._stopped.set()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).add_done_callback(finish)
        return self._stopped

    def wait_for_termination(self, timeout: float | None = None) -> bool:
        """True once the server has stopped (False when ``timeout`` ran out first)."""
        return self._stopped.wait(timeout)


def _bind_problem(address: str) -> str | None:
    """Why ``address`` (HOST:PORT) cannot be bound, in the system's words (gRPC says only
    "Failed to bind ... set GRPC_VERBOSITY=debug"); None when a plain socket can bind it."""
    host, _, port = address.rpartition(":")
    try:
        infos = socket.getaddrinfo(host.strip("[]") or None, int(port), type=socket.SOCK_STREAM)
    except (OSError, ValueError) as error:
        return f"cannot resolve {host!r} ({getattr(error, 'strerror', None) or error})"
    for family, kind, proto, _, sockaddr in infos:
        with socket.socket(family, kind, proto) as probe:
            try:
                probe.bind(sockaddr)
            except OSError as error:
                return error.strerror or str(error)
    return None


def _on_loop(loop: asyncio.AbstractEventLoop, coroutine: Awaitable[T]) -> T:
    async def run() -> T:
        return await coroutine

    return asyncio.run_coroutine_threadsafe(run(), loop).result(LOOP_CALL_TIMEOUT_S)


def _finish_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the tasks the stopped loop still holds and let them unwind (bounded), as
    ``asyncio.run`` does: a task closed with the loop would never run its cleanup."""
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.wait(tasks, timeout=DRAIN_S))
    loop.run_until_complete(loop.shutdown_asyncgens())


def _loop_thread(
    pool: futures.ThreadPoolExecutor,
) -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    loop = asyncio.new_event_loop()
    loop.set_default_executor(pool)  # the streams' blocking work shares the unary calls' pool
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        started.set()
        try:
            loop.run_forever()
        finally:
            try:
                _finish_tasks(loop)
            finally:
                loop.close()

    thread = threading.Thread(target=run, name="arena-api-loop", daemon=True)
    thread.start()
    started.wait()
    return loop, thread


def create_server(
    address: str,
    *,
    store: Store,
    options: ServiceOptions | None = None,
    max_workers: int = DEFAULT_MAX_WORKERS,
    credentials: grpc.ServerCredentials | None = None,
    limits: StreamLimits | None = None,
) -> tuple[ApiServer, int]:
    """A server (not yet started) bound to ``address``, and the port it got.

    ``credentials`` (``ServerTls.grpc_credentials()``) make the port TLS only.
    ``limits``: open streams, the Hello deadline, keepalive (arena.server.limits).
    Raises RuntimeError naming the address when it cannot be bound.
    """
    limits = limits or StreamLimits()
    stale = remove_stale_uploads()  # left by a server killed mid-upload (kill -9)
    if stale:
        get_logger(service="arena_api").info("stale_uploads_removed", count=len(stale))
    counter = StreamCounter(limits)
    service = ArenaService(store, options)
    gateway = RefereeGateway(
        store, hello_wait_s=limits.hello_wait_s, counter=counter, seats=service.seats
    )
    pool = DrainingPool(max_workers, "arena-api")
    loop, thread = _loop_thread(pool)

    async def build() -> tuple[grpc.aio.Server, int]:
        server = grpc.aio.server(
            migration_thread_pool=pool,
            interceptors=[
                FaultInterceptor(),
                StreamLimitInterceptor(counter, frozenset({PLAY_METHOD}), CallCounter(limits)),
                TokenRecheckInterceptor(store, f"/{ARENA_SERVICE_NAME}/"),
                MalformedRequestInterceptor(),  # innermost: its deserializer is the one used
            ],
            options=[
                # gRPC reads a unary request whole, up to this, before any handler or
                # interceptor runs: small, so a stranger's held requests cost little; a bot
                # archive comes in chunks (UploadBot, arena.server.uploads).
                ("grpc.max_receive_message_length", MAX_REQUEST_BYTES),
                ("grpc.max_concurrent_streams", MAX_STREAMS_PER_CONNECTION),
                ("grpc.max_send_message_length", MAX_SEND_BYTES),
                # gRPC sets SO_REUSEPORT by default on Linux: a second `arena serve` on the
                # same port would then start too and share its connections. Refuse instead.
                ("grpc.so_reuseport", 0),
                # No window grown by gRPC's bandwidth probe (to 4 MiB at once on a fast
                # link): a stream's window stays HTTP/2's 64 KiB until a read waits for a
                # larger message, so what a stranger's stream can make the server hold
                # is what the gateway chooses to read (arena.server.gateway).
                ("grpc.http2.bdp_probe", 0),
                *limits.server_options(),
            ],
        )
        arena_service_pb2_grpc.add_ArenaServiceServicer_to_server(service, server)
        server.add_generic_rpc_handlers((gateway.handler(),))
        health_servicer = health_aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        for name in ("", ARENA_SERVICE_NAME, REFEREE_SERVICE_NAME):
            await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
        names = (ARENA_SERVICE_NAME, REFEREE_SERVICE_NAME, health.SERVICE_NAME)
        reflection.enable_server_reflection((*names, reflection.SERVICE_NAME), server)
        try:
            if credentials is None:
                port = server.add_insecure_port(address)
            else:
                port = server.add_secure_port(address, credentials)
        except RuntimeError as error:
            raise RuntimeError(
                f"cannot listen on {address}: {_bind_problem(address) or error}"
            ) from None
        return server, port

    def give_up() -> None:
        loop.call_soon_threadsafe(loop.stop)
        pool.shutdown(wait=False)

    try:
        server, port = _on_loop(loop, build())
    except RuntimeError:
        give_up()
        raise
    if port == 0 and not address.startswith("unix:"):
        give_up()
        raise RuntimeError(f"cannot listen on {address}: {_bind_problem(address) or 'refused'}")
    host = address.rsplit(":", 1)[0] if not address.startswith("unix:") else address
    if credentials is None and not is_loopback(host):
        get_logger(service="arena_api").warning(
            "plaintext_api_on_network",
            address=address,
            message="no TLS: admin, user and seat tokens travel in clear to this address;"
            " give --tls-cert and --tls-key (or bind 127.0.0.1 behind a TLS proxy)",
        )
    return ApiServer(loop, thread, server, pool, counter, service, gateway), port
