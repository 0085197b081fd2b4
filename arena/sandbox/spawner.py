"""One long-lived thread that forks every bot of this process.

bwrap's ``--die-with-parent`` and ``setpriv --pdeathsig`` use the kernel's
parent-death signal, and the kernel's "parent" is the *thread* that forked. A
referee that launched a bot from a short-lived thread would see the bot killed
when that thread ended (the outer bwrap gets SIGKILL). Forking from
one thread that lives as long as the process keeps the signal meaning "the
arena is gone".
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_spawner: tuple[int, ThreadPoolExecutor] | None = None  # (owner pid, executor)


def _forget_after_fork() -> None:
    """A forked child has neither the parent's thread nor, safely, its lock."""
    global _lock, _spawner
    _lock = threading.Lock()
    _spawner = None


os.register_at_fork(after_in_child=_forget_after_fork)


def spawn(function: Callable[[], T]) -> T:
    """Run ``function`` (which forks) on this process's spawner thread; re-raise its errors."""
    global _spawner
    with _lock:
        if _spawner is None or _spawner[0] != os.getpid():  # a forked child needs its own
            _spawner = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="kahuna-spawner"))
        executor = _spawner[1]
    return executor.submit(function).result()
