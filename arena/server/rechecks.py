"""Open streams keep a live token: each ArenaService response stream checks its caller's
bearer token again every ``TOKEN_RECHECK_S`` while it is open.

A call's token is checked when the call starts (arena.server.auth); a stream may
stay open for as long as a game or a tournament lasts (WatchTournament,
WatchGame, WaitForSeats, ExportGames, GetAuditBundle). ``TokenRecheckInterceptor``
wraps every one of them in ``while_authorized``: between (and during) the
stream's messages, the token is checked again at that pace, off the event loop,
and a token revoked or expired since ends the stream UNAUTHENTICATED saying
which (``token revoked at ...``). The streams of one token share each check
(``SharedChecks``): a crowd of watchers costs one check per token. With the store's
answers kept AUTH_CACHE_S, a
revocation by another process (`arena token revoke`) ends the stream within
``STREAM_TOKEN_BOUND_S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import random
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, NoReturn, TypeVar, cast

import grpc
import grpc.aio

from arena.server.auth import authorization_of, principal_of
from arena.server.interceptors import Handler, HandlerInterceptor, replaced
from arena.store import Store
from arena.store.tokens import AUTH_CACHE_S

T = TypeVar("T")

STREAM_TOKEN_BOUND_S = 5.0
"""An open stream ends at most this long after its token is revoked or expires."""
TOKEN_RECHECK_S = STREAM_TOKEN_BOUND_S - AUTH_CACHE_S
"""How often an open stream checks its token again (a kept answer may be AUTH_CACHE_S old)."""


class _Authorization:
    """The one piece of a call's context a token check reads (``principal_of``)."""

    def __init__(self, value: str | None) -> None:
        self.value = value

    def invocation_metadata(self) -> list[tuple[str, str]]:
        return [] if self.value is None else [("authorization", self.value)]

    def abort(self, code: grpc.StatusCode, details: str = "") -> NoReturn:
        raise _Refused(details)


class _Refused(Exception):
    pass


def token_refusal(store: Store, authorization: str | None) -> str | None:
    """Why the token in ``authorization`` is refused now (revoked, expired), else None."""
    try:
        principal_of(store, cast(grpc.ServicerContext, _Authorization(authorization)))
    except _Refused as refused:
        return str(refused)
    return None


class SharedChecks:
    """The token checks of open streams, one at a time per token: the streams of one token
    (a crowd of watchers) await the same check, so a recheck costs the thread pool, which
    unary calls share, one hop per token rather than one per stream."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._under_way: dict[str | None, asyncio.Future[str | None]] = {}

    async def refusal(self, authorization: str | None) -> str | None:
        """Why ``authorization``'s token is refused now, else None (a check under way for
        the same token is awaited, not repeated)."""
        future = self._under_way.get(authorization)
        if future is None:
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(None, token_refusal, self.store, authorization)
            self._under_way[authorization] = future
            future.add_done_callback(lambda _: self._under_way.pop(authorization, None))
        return await asyncio.shield(future)


async def while_authorized(
    checks: SharedChecks, context: grpc.aio.ServicerContext[Any, Any],
    messages: AsyncIterator[T],
) -> AsyncGenerator[T, None]:  # fmt: skip
    """``messages`` while the call's token stays live, checked every ``TOKEN_RECHECK_S``
    whether messages flow or not; a refused token aborts the call."""
    loop = asyncio.get_running_loop()
    authorization = authorization_of(context)
    pending: asyncio.Future[T] | None = None
    # the first check at a random point of the first period: streams opened together
    # (a page of watchers, a reconnecting crowd) do not all check at once ever after
    next_check = loop.time() + random.uniform(0.0, TOKEN_RECHECK_S)
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(messages))
            await asyncio.wait({pending}, timeout=max(0.0, next_check - loop.time()))
            if loop.time() >= next_check:
                refusal = await checks.refusal(authorization)
                if refusal is not None:
                    await context.abort(grpc.StatusCode.UNAUTHENTICATED, refusal)
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
        self.checks = SharedChecks(store)
        self.prefix = prefix

    def wrap(self, handler: Handler, method: grpc.HandlerCallDetails) -> Handler:
        inner = handler.unary_stream
        if not method.method.startswith(self.prefix) or not inspect.isasyncgenfunction(inner):
            return handler
        checks = self.checks

        async def stream(
            request: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            checked = while_authorized(checks, context, inner(request, context))
            async with contextlib.aclosing(checked):  # closed with the call, not when collected
                async for message in checked:
                    yield message

        return replaced(handler, stream)
