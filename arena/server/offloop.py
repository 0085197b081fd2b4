"""Blocking work for the asyncio API server's stream handlers, kept off its event loop.

The servicer's checks and the store are synchronous (one SQLite connection
behind a lock a tournament's writes may hold): a stream handler runs them in
the server's thread pool with ``blocking``, which gives them a context whose
``abort`` works there as in the thread-per-call server, and waits for them
without holding the loop. ``LoopInbox`` carries events from other threads
(the tournament runner) to a stream waiting on the loop.
"""

from __future__ import annotations

import asyncio
import collections
import functools
from collections.abc import Callable
from typing import Any, Generic, NoReturn, TypeVar

import grpc
import grpc.aio

T = TypeVar("T")


class _Refusal(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class BlockingContext:
    """What a synchronous check run by ``blocking`` sees of its call's context."""

    def __init__(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        self._context = context

    def invocation_metadata(self) -> grpc.aio.Metadata | None:
        return self._context.invocation_metadata()

    def peer(self) -> str:
        return self._context.peer()

    def abort(self, code: grpc.StatusCode, details: str = "") -> NoReturn:
        raise _Refusal(code, details)


async def blocking(
    context: grpc.aio.ServicerContext[Any, Any], function: Callable[..., T], *args: Any
) -> T:
    """``function(BlockingContext(context), *args)`` in the loop's executor; its abort aborts."""
    loop = asyncio.get_running_loop()
    call = functools.partial(function, BlockingContext(context), *args)
    try:
        return await loop.run_in_executor(None, call)
    except _Refusal as refusal:
        await context.abort(refusal.code, refusal.details)
        raise AssertionError("unreachable") from None  # context.abort raises


async def off_loop(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` in the loop's executor (a store read, say)."""
    return await asyncio.get_running_loop().run_in_executor(
        None, functools.partial(function, *args)
    )


class LoopInbox(Generic[T]):
    """Items put from any thread, taken by one coroutine on ``loop``."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.items: collections.deque[T] = collections.deque()
        self.waiter: asyncio.Future[None] | None = None

    def put(self, item: T) -> None:
        """Any thread (the loop's own too)."""
        self.loop.call_soon_threadsafe(self._arrive, item)

    def _arrive(self, item: T) -> None:
        self.items.append(item)
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def get(self, timeout_s: float | None = None) -> T | None:
        """The next item, or None when none came within ``timeout_s`` (None: wait)."""
        if not self.items:
            self.waiter = self.loop.create_future()
            try:
                await asyncio.wait_for(self.waiter, timeout_s)
            except TimeoutError:
                return None
            finally:
                self.waiter = None
        return self.items.popleft()

    def __len__(self) -> int:
        return len(self.items)
