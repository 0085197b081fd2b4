"""Run a coroutine to its end from a test, whatever event loop the test's thread holds.

Playwright's synchronous API keeps an asyncio loop registered as running in the
thread that uses it (pytest's main thread, for the session's browser), so a plain
``asyncio.run`` in a later test of that process fails with "cannot be called from a
running event loop". ``run_apart`` runs the coroutine on a fresh loop in a thread of
its own and hands back its result or exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_apart(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)`` in a thread of its own; its result, or what it raised."""
    return _apart(asyncio.run, coroutine)


def complete_apart(loop: asyncio.AbstractEventLoop, coroutine: Coroutine[Any, Any, T]) -> T:
    """``loop.run_until_complete(coroutine)`` in a thread of its own, for a test that
    needs one loop across several steps (what it was given is bound to that loop)."""
    return _apart(loop.run_until_complete, coroutine)


def _apart(run: Callable[[Coroutine[Any, Any, T]], T], coroutine: Coroutine[Any, Any, T]) -> T:
    with ThreadPoolExecutor(1, thread_name_prefix="run-apart") as pool:
        return pool.submit(run, coroutine).result()
