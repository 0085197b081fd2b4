"""The server's faults, as the API reports them, naming no server path.

Any call that runs out of space on the server (the store's StorageFullError,
or an OSError ENOSPC/EDQUOT from writing files) is answered RESOURCE_EXHAUSTED
"the server has no disk space left ..." whatever the method: nothing of the
request was kept, and the same request may succeed once there is space. A call
that meets a damaged database (the store's DamagedDatabaseError) is answered
DATA_LOSS "the arena's database is damaged ..." (``DAMAGED_ANSWER``): the admin has to restore it,
and the store writes nothing more meanwhile. The server's log keeps the details
(the damaged file's path, in the store's one line for it). Streams are mapped as
unary calls are.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from arena.logs import get_logger
from arena.server.interceptors import Handler, HandlerInterceptor, replaced
from arena.store import DAMAGED_ANSWER, DamagedDatabaseError, is_disk_full

DISK_FULL_MESSAGE = (
    "the server has no disk space left: nothing was stored; try again once the admin has"
    " freed space"
)


def fault_answer(method: str, error: Exception) -> tuple[grpc.StatusCode, str] | None:
    """The status for ``error`` when it is a server fault (logged here), else None."""
    log = get_logger(service="arena_api")
    if isinstance(error, DamagedDatabaseError):
        log.error("database_damaged", method=method, error=error.stopped("the call"))
        return grpc.StatusCode.DATA_LOSS, DAMAGED_ANSWER
    if is_disk_full(error):
        log.error("disk_full", method=method, error=str(error))
        return grpc.StatusCode.RESOURCE_EXHAUSTED, DISK_FULL_MESSAGE
    return None


def _guarded(method: str, inner: Callable[[Any, grpc.ServicerContext], Any]) -> Callable[..., Any]:
    """``inner`` (a unary handler run in the server's threads) with the faults mapped."""

    def call(request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return inner(request, context)
        except Exception as error:
            answer = fault_answer(method, error)
            if answer is None:
                raise
            context.abort(*answer)
            raise  # context.abort raised already

    return call


async def _abort_if_mapped(
    method: str, error: Exception, context: grpc.aio.ServicerContext[Any, Any]
) -> None:
    """Abort the call with ``error``'s answer, where it has one (``context.abort`` raises);
    return, for the caller to re-raise, where it has none."""
    answer = fault_answer(method, error)
    if answer is not None:
        await context.abort(*answer)


def _guarded_async(method: str, inner: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    """``inner`` (a coroutine handler: SubmitBot, UploadBot) with the faults mapped."""

    async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        try:
            return await inner(request, context)
        except Exception as error:
            await _abort_if_mapped(method, error, context)
            raise

    return call


def _guarded_stream(method: str, inner: Callable[..., AsyncIterator[Any]]) -> Callable[..., Any]:
    """``inner`` (an async response stream: WatchTournament, ...) with the faults mapped."""

    async def stream(
        request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Any]:
        try:
            async for message in inner(request, context):
                yield message
        except Exception as error:
            await _abort_if_mapped(method, error, context)
            raise

    return stream


class FaultInterceptor(HandlerInterceptor):
    """Maps a full disk or a damaged database in any call to its status (see the module)."""

    def wrap(self, handler: Handler, method: grpc.HandlerCallDetails) -> Handler:
        if handler.unary_unary is not None:
            guarded = (
                _guarded_async(method.method, handler.unary_unary)
                if inspect.iscoroutinefunction(handler.unary_unary)  # SubmitBot, health Check
                else _guarded(method.method, handler.unary_unary)
            )
            return replaced(handler, guarded)
        if handler.unary_stream is not None and inspect.isasyncgenfunction(handler.unary_stream):
            return replaced(handler, _guarded_stream(method.method, handler.unary_stream))
        if handler.stream_unary is not None and inspect.iscoroutinefunction(handler.stream_unary):
            return replaced(handler, _guarded_async(method.method, handler.stream_unary))
        return handler
