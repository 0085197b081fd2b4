"""Bots' output pipes copied to files, up to a size limit, by one thread of this process.

A sandboxed bot's stdout and stderr are pipes, so that its fd 1 and 2 name no host
file (``pipe:[…]``). What comes through a pipe is appended to the bot's output
file, unbuffered (each read is in the file at once), until the file-size limit:
then the pipe's read end is closed, and the bot's next write gets SIGPIPE (EPIPE
where it ignores the signal). A pipe is done at EOF, once every process that held
its write end is gone.

A drainer process per launch (``stdbuf -o0 head -c LIMIT``) would cost two programs
per launch, paid four times per paired match. Instead one daemon thread per process
(made on first use, and again in a forked child) waits on every pipe at once with
``selectors``. It reads 64 KiB at most per wake-up and rests ``REST_S`` after each
read, so a bot that writes a byte at a time cannot make it spin: that bot's writes
block on its full pipe instead, as they would behind a slow ``head``.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import threading
import time
from pathlib import Path

READ_BYTES = 64 * 1024
REST_S = 0.0005
"""The pause after each read: at most ~2000 reads a second for all bots together."""


class Drain:
    """One pipe being copied to a file (see the module's docstring)."""

    def __init__(self, read_fd: int, path: Path, limit_bytes: int) -> None:
        self.read_fd = read_fd
        self.limit_bytes = limit_bytes
        self.written = 0
        self.sink = open(path, "ab", buffering=0)  # noqa: SIM115 (closed when done)
        self.done = threading.Event()

    def wait(self, timeout_s: float) -> bool:
        """True once the pipe is done (EOF or the limit reached) and the file closed."""
        return self.done.wait(timeout_s)

    def stop(self) -> None:
        """Stop copying now (what is still in the pipe is lost); idempotent."""
        _pump().remove(self)


class _Pump:
    """The thread that copies every pipe of this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._selector = selectors.DefaultSelector()
        self._added: list[Drain] = []
        self._removed: list[Drain] = []
        self._wake_read, self._wake_write = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self._selector.register(self._wake_read, selectors.EVENT_READ, None)
        thread = threading.Thread(target=self._run, name="kahuna-drain", daemon=True)
        thread.start()

    def add(self, drain: Drain) -> None:
        with self._lock:
            self._added.append(drain)
        self._wake()

    def remove(self, drain: Drain) -> None:
        with self._lock:
            self._removed.append(drain)
        self._wake()
        drain.done.wait(5.0)

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError):
            os.write(self._wake_write, b"\0")

    def _run(self) -> None:
        while True:
            for key, _events in self._selector.select():
                drain = key.data
                if drain is None:
                    self._take_changes()
                else:
                    self._copy(drain)

    def _take_changes(self) -> None:
        with contextlib.suppress(BlockingIOError):
            os.read(self._wake_read, 4096)
        with self._lock:
            added, self._added = self._added, []
            removed, self._removed = self._removed, []
        for drain in added:
            self._selector.register(drain.read_fd, selectors.EVENT_READ, drain)
        for drain in removed:
            self._finish(drain)

    def _copy(self, drain: Drain) -> None:
        try:
            data = os.read(drain.read_fd, min(READ_BYTES, drain.limit_bytes - drain.written))
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            try:
                drain.sink.write(data)
            except OSError:
                data = b""  # the file cannot take it (a full disk): stop as at the limit
            drain.written += len(data)
        if not data or drain.written >= drain.limit_bytes:
            self._finish(drain)
        else:
            time.sleep(REST_S)

    def _finish(self, drain: Drain) -> None:
        if drain.done.is_set():
            return
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(drain.read_fd)
        os.close(drain.read_fd)  # past the limit: the bot's next write gets SIGPIPE
        drain.sink.close()
        drain.done.set()


_lock = threading.Lock()
_current: tuple[int, _Pump] | None = None  # (owner pid, pump)


def _pump() -> _Pump:
    global _current
    with _lock:
        if _current is None or _current[0] != os.getpid():  # a forked child needs its own
            _current = (os.getpid(), _Pump())
        return _current[1]


def _forget_after_fork() -> None:
    """A forked child has neither the parent's thread nor, safely, its lock."""
    global _lock, _current
    _lock = threading.Lock()
    _current = None


os.register_at_fork(after_in_child=_forget_after_fork)


def drain_to(read_fd: int, path: Path, limit_bytes: int) -> Drain:
    """Copy the pipe ``read_fd`` (now owned by the drain) to the end of ``path``, up to
    ``limit_bytes`` bytes."""
    try:
        drain = Drain(read_fd, path, max(1, limit_bytes))
    except BaseException:
        os.close(read_fd)
        raise
    _pump().add(drain)
    return drain
