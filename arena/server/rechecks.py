"""Open streams keep a live token: each ArenaService response stream checks its caller's
bearer token again every ``TOKEN_RECHECK_S`` while it is open.

A call's token is checked when the call starts (arena.server.auth); a stream may
stay open for as long as a game or a tournament lasts (WatchTournament,
WatchGame, WaitForSeats, ExportGames, GetAuditBundle). ``TokenRecheckInterceptor``
wraps every one of them in ``while_authorized``: between (and during) the
stream's messages, the token is checked again at that pace, off the event loop,
and a token revoked or expired since ends the stream UNAUTHENTICATED saying
which (``token revoked at ...``). With the store's answers kept AUTH_CACHE_S, a
revocation by another process (`arena token revoke`) ends the stream within
``STREAM_TOKEN_BOUND_S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, TypeVar

import grpc
import grpc.aio

from arena.server.auth import principal_of
from arena.server.interceptors import Handler, HandlerInterceptor, replaced
from arena.server.offloop import blocking
from arena.store import Store
from arena.store.tokens import AUTH_CACHE_S

T = TypeVar("T")

STREAM_TOKEN_BOUND_S = 5.0
"""An open stream ends at most this long after its token is revoked or expires."""
TOKEN_RECHECK_S = STREAM_TOKEN_BOUND_S - AUTH_CACHE_S
"""How often an open stream checks its token again (a kept answer may be AUTH_CACHE_S old)."""


def _check(context: grpc.ServicerContext, store: Store) -> None:
    principal_of(store, context)  # aborts UNAUTHENTICATED, saying why


async def while_authorized(
    store: Store, context: grpc.aio.ServicerContext[Any, Any], messages: AsyncIterator[T]
) -> AsyncGenerator[T, None]:
    """``messages`` while the call's token stays live, checked every ``TOKEN_RECHECK_S``
    whether messages flow or not; a refused token aborts the call."""
    loop = asyncio.get_running_loop()
    pending: asyncio.Future[T] | None = None
    next_check = loop.time() + TOKEN_RECHECK_S
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(messages))
            await asyncio.wait({pending}, timeout=max(0.0, next_check - loop.time()))
            if loop.time() >= next_check:
                await blocking(context, _check, store)
                next_check = loop.time() + TOKEN_RECHECK_S
            if not pending.done():
                continue
            try:
                message = pending.result()
            except StopAsyncIteration:
                return
            pending = None
            yield message
    finally:
        if pending is not None:
            if not pending.done():
                pending.cancel()  # the stream's own cleanup runs (unsubscribe, ...)
                await asyncio.wait({pending})
            if not pending.cancelled():
                pending.exception()  # seen: the call ends here whatever the stream raised
        aclose = getattr(messages, "aclose", None)
        if aclose is not None:
            await aclose()


class TokenRecheckInterceptor(HandlerInterceptor):
    """Every response stream of the methods under ``prefix`` (``/kahuna.v1.ArenaService/``,
    whose calls all carry a bearer token) in ``while_authorized``."""

    def __init__(self, store: Store, prefix: str) -> None:
        self.store = store
        self.prefix = prefix

    def wrap(self, handler: Handler, method: grpc.HandlerCallDetails) -> Handler:
        inner = handler.unary_stream
        if not method.method.startswith(self.prefix) or not inspect.isasyncgenfunction(inner):
            return handler
        store = self.store

        async def stream(
            request: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            checked = while_authorized(store, context, inner(request, context))
            async with contextlib.aclosing(checked):  # closed with the call, not when collected
                async for message in checked:
                    yield message

        return replaced(handler, stream)
