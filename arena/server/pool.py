"""A thread pool that can tell when the work handed to it has all returned.

The API server's unary handlers and its streams' blocking work run in such a
pool. A handler that aborts or sends metadata calls back into the server's event
loop and waits for it without a timeout (grpc.aio's ``_SyncServicerContext``), so
a stop must keep the loop running until the handlers still in the pool have
returned: ``drain`` waits for that, bounded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent import futures
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class DrainingPool(futures.ThreadPoolExecutor):
    """A ``ThreadPoolExecutor`` that counts its unfinished submissions."""

    def __init__(self, max_workers: int, thread_name_prefix: str) -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
        self._unfinished = 0
        self._changed = threading.Condition()

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> futures.Future[T]:
        with self._changed:
            self._unfinished += 1
        try:
            future = super().submit(fn, *args, **kwargs)
        except BaseException:  # refused (shut down): it never ran
            self._finished(None)
            raise
        future.add_done_callback(self._finished)
        return future

    def _finished(self, _: object) -> None:
        with self._changed:
            self._unfinished -= 1
            self._changed.notify_all()

    def drain(self, timeout_s: float | None) -> int:
        """Wait up to ``timeout_s`` (None: for as long as it takes) for every submission to
        return or be cancelled; how many are still running then."""
        with self._changed:
            self._changed.wait_for(lambda: self._unfinished == 0, timeout_s)
            return self._unfinished
