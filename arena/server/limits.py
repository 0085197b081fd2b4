"""How many streams and calls the API server holds open, and for whom; its connection limits.

On the asyncio server (arena.server.app) an open stream costs no thread, but
it still costs memory: so each bearer token may hold ``per_token`` streams
(WatchTournament, WaitForSeats, WatchGame, UploadBot) at once, streams that
carry no token (a Play stream before its Hello, health Watch, reflection)
``unauthenticated`` between them, and the whole server ``total``. A stream past a limit is
refused at once with RESOURCE_EXHAUSTED naming the limit; every other call
keeps being answered. A Play stream must say Hello within ``hello_wait_s``.
Unary calls are counted too: each token may have ``calls_per_token`` in
flight, so one user's flood cannot hold the threads the admin's calls need.

The keepalive and idle options close connections whose peer is gone (no
answer to a ping) and connections that carry no call at all, and ``connections``
caps how many are open at once, so a crowd of dead or idle connections cannot
pile up either.
"""

from __future__ import annotations

import hashlib
import inspect
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, cast

import grpc
import grpc.aio

from arena.server.interceptors import Handler, HandlerInterceptor, behaviour_of, replaced


@dataclass(frozen=True, slots=True)
class StreamLimits:
    per_token: int = 64
    """Open streams per bearer token (the admin's included): response streams and uploads."""
    unauthenticated: int = 256
    """Open streams that carry no token: Play streams before their Hello, between them all."""
    total: int = 4096
    """Open streams of the whole server."""
    calls_per_token: int = 16
    """Unary calls in flight per bearer token: one token cannot hold the API's threads."""
    hello_wait_s: float = 3.0
    """How long a Play stream may stay silent before its Hello."""
    hello_reads: int = 16
    """Play streams whose first message the gateway reads at once, between them all: each
    may be up to the server's receive limit before it can be judged a Hello or not, so
    these bound what strangers can make the server hold; the other streams wait, their
    peers held to the transport's 64 KiB window (arena.server.gateway)."""
    hello_reads_per_peer: int = 4
    """...and per peer address, so that one host cannot take them all."""
    keepalive_time_ms: int = 60_000
    """Ping a connection after this long without traffic..."""
    keepalive_timeout_ms: int = 20_000
    """...and close it when the ping is not answered in this time (a dead peer)."""
    max_connection_idle_ms: int = 300_000
    """Close a connection that has carried no call for this long."""
    min_client_ping_interval_ms: int = 10_000
    """Clients may ping this often while they have no call open (more often: GOAWAY)."""
    connections: int = 2048
    """Open connections of the whole server: one more is closed as it is accepted, so a
    crowd of idle connections cannot take the file descriptors the rest of the process
    (the store, the bots' sockets and pipes, the web pages) needs."""

    def __post_init__(self) -> None:
        for name in (
            "per_token", "unauthenticated", "total", "calls_per_token", "connections",
            "hello_reads", "hello_reads_per_peer",
        ):  # fmt: skip
            if getattr(self, name) < 1:
                raise ValueError(
                    f"stream limit {name} must be at least 1, got {getattr(self, name)}"
                )
        if not self.hello_wait_s > 0:
            raise ValueError(f"hello_wait_s must be positive, got {self.hello_wait_s}")

    def server_options(self) -> list[tuple[str, int]]:
        """gRPC server channel arguments for the keepalive, idle and connection limits."""
        return [
            ("grpc.keepalive_time_ms", self.keepalive_time_ms),
            ("grpc.keepalive_timeout_ms", self.keepalive_timeout_ms),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.max_connection_idle_ms", self.max_connection_idle_ms),
            ("grpc.http2.min_recv_ping_interval_without_data_ms", self.min_client_ping_interval_ms),
            ("grpc.http2.max_ping_strikes", 2),
            ("grpc.max_allowed_incoming_connections", self.connections),
        ]


UNAUTHENTICATED = None
"""The key of streams that carry no token."""


def _count_down(open_by_key: dict[str | None, int], key: str | None) -> None:
    """One fewer in flight for ``key``; a key at none is forgotten (the map stays small)."""
    held = open_by_key.get(key, 0) - 1
    if held > 0:
        open_by_key[key] = held
    else:
        open_by_key.pop(key, None)


@dataclass
class StreamCounter:
    """Open streams by key (a token's digest, or UNAUTHENTICATED); safe from any thread."""

    limits: StreamLimits
    lock: threading.Lock = field(default_factory=threading.Lock)
    open: dict[str | None, int] = field(default_factory=dict)
    total: int = 0

    def acquire(self, key: str | None) -> str | None:
        """Count one more stream for ``key``; or why not (the limit it would pass)."""
        if key is UNAUTHENTICATED:
            limit, what = self.limits.unauthenticated, "streams without a token (before Hello)"
        else:
            limit, what = self.limits.per_token, "streams per token"
        with self.lock:
            held = self.open.get(key, 0)
            if held >= limit:
                return f"too many open streams: the limit is {limit} {what}"
            if self.total >= self.limits.total:
                return f"too many open streams: the server's limit is {self.limits.total} streams"
            self.open[key] = held + 1
            self.total += 1
        return None

    def release(self, key: str | None) -> None:
        with self.lock:
            _count_down(self.open, key)
            self.total -= 1

    def held(self, key: str | None) -> int:
        with self.lock:
            return self.open.get(key, 0)


@dataclass
class CallCounter:
    """Unary calls in flight by key (a token's digest, or UNAUTHENTICATED); any thread."""

    limits: StreamLimits
    lock: threading.Lock = field(default_factory=threading.Lock)
    open: dict[str | None, int] = field(default_factory=dict)

    def acquire(self, key: str | None) -> str | None:
        """Count one more call for ``key``; or why not (the limit it would pass)."""
        if key is UNAUTHENTICATED:
            limit, what = self.limits.unauthenticated, "calls without a token"
        else:
            limit, what = self.limits.calls_per_token, "calls per token"
        with self.lock:
            held = self.open.get(key, 0)
            if held >= limit:
                return (
                    f"too many calls at once: the limit is {limit} {what} in flight;"
                    " retry once one has answered"
                )
            self.open[key] = held + 1
        return None

    def release(self, key: str | None) -> None:
        with self.lock:
            _count_down(self.open, key)


def counted_call(counter: CallCounter, key: str | None, inner: Any) -> Any:
    """A unary handler (synchronous, or a coroutine) counted under ``key`` while it runs."""
    if inspect.iscoroutinefunction(inner):

        async def answer_async(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            refused = counter.acquire(key)
            if refused is not None:
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
            try:
                return await inner(request, context)
            finally:
                counter.release(key)

        return answer_async

    def answer(request: Any, context: grpc.ServicerContext) -> Any:
        refused = counter.acquire(key)
        if refused is not None:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
        try:
            return inner(request, context)
        finally:
            counter.release(key)

    return answer


def token_key(metadata: tuple[tuple[str, str | bytes], ...] | None) -> str | None:
    """The key of a call's bearer token (its digest: no token is kept), or UNAUTHENTICATED."""
    for name, value in metadata or ():
        if name == "authorization":
            text = value.decode("latin-1") if isinstance(value, bytes) else value
            scheme, _, token = text.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return hashlib.sha256(token.strip().encode()).hexdigest()
            return UNAUTHENTICATED
    return UNAUTHENTICATED


StreamHandler = Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Any]
"""An async stream: an async generator function, or a coroutine (writes, or reads requests)."""


def limited(counter: StreamCounter, key: str | None, inner: StreamHandler) -> StreamHandler:
    """``inner`` (an async stream) counted under ``key`` while it is open."""

    async def refuse_past_limit(context: grpc.aio.ServicerContext[Any, Any]) -> None:
        refused = counter.acquire(key)
        if refused is not None:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)

    if inspect.iscoroutinefunction(inner):  # writes with context.write (health Watch),
        # or reads a request stream and answers once (UploadBot)

        async def writer(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            await refuse_past_limit(context)
            try:
                return await inner(request, context)
            finally:
                counter.release(key)

        return writer

    async def stream(
        request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Any]:
        await refuse_past_limit(context)
        try:
            async for message in inner(request, context):
                yield message
        finally:
            counter.release(key)

    return stream


class StreamLimitInterceptor(HandlerInterceptor):
    """Counts every stream (a response stream, or a request stream such as UploadBot's)
    by its bearer token (see StreamLimits).

    Methods in ``own_counting`` (the gateway's Play, which counts its streams
    until their Hello) are left as they are.
    """

    def __init__(
        self, counter: StreamCounter, own_counting: frozenset[str],
        calls: CallCounter | None = None,
    ) -> None:  # fmt: skip
        self.counter = counter
        self.own_counting = own_counting
        self.calls = calls
        """Unary calls in flight by token, when given (``calls_per_token``)."""

    def wrap(self, handler: Handler, method: grpc.HandlerCallDetails) -> Handler:
        if method.method in self.own_counting:
            return handler
        key = token_key(method.invocation_metadata)
        if not handler.response_streaming and not handler.request_streaming:
            if self.calls is None or handler.unary_unary is None:
                return handler
            return replaced(handler, counted_call(self.calls, key, handler.unary_unary))
        return replaced(
            handler, limited(self.counter, key, cast(StreamHandler, behaviour_of(handler)))
        )
