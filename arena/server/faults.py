"""A full disk, as the API reports it: RESOURCE_EXHAUSTED, naming no server path.

Any call that runs out of space on the server (the store's StorageFullError,
or an OSError ENOSPC/EDQUOT from writing files) is answered RESOURCE_EXHAUSTED
"the server has no disk space left ..." whatever the method: nothing of the
request was kept, and the same request may succeed once there is space. The
server's log keeps the details.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from arena.logs import get_logger
from arena.server.interceptors import Handler, HandlerInterceptor, replaced
from arena.store import is_disk_full

DISK_FULL_MESSAGE = (
    "the server has no disk space left: nothing was stored; try again once the admin has"
    " freed space"
)


def _guarded(method: str, inner: Callable[[Any, grpc.ServicerContext], Any]) -> Callable[..., Any]:
    """``inner`` (a unary handler run in the server's threads) with a full disk mapped."""

    def call(request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return inner(request, context)
        except Exception as error:
            if not is_disk_full(error):
                raise
            get_logger(service="arena_api").error("disk_full", method=method, error=str(error))
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, DISK_FULL_MESSAGE)
            raise  # context.abort raised already

    return call


def _guarded_async(method: str, inner: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    """``inner`` (a unary coroutine handler: SubmitBot) with a full disk mapped."""

    async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        try:
            return await inner(request, context)
        except Exception as error:
            if not is_disk_full(error):
                raise
            get_logger(service="arena_api").error("disk_full", method=method, error=str(error))
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, DISK_FULL_MESSAGE)
            raise  # context.abort raised already

    return call


class DiskFullInterceptor(HandlerInterceptor):
    """Maps a full disk in any unary call to RESOURCE_EXHAUSTED (see the module)."""

    def wrap(self, handler: Handler, method: grpc.HandlerCallDetails) -> Handler:
        if handler.unary_unary is None:
            return handler
        guarded = (
            _guarded_async(method.method, handler.unary_unary)
            if inspect.iscoroutinefunction(handler.unary_unary)  # SubmitBot, health Check
            else _guarded(method.method, handler.unary_unary)
        )
        return replaced(handler, guarded)
