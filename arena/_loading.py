"""A Ctrl-C while the CLI's modules load, or after its command has returned: nothing to
clean up, so the process ends at once with one line.

A KeyboardInterrupt raised inside the import machinery or a C extension's import
comes out as whatever that code makes of it (a RuntimeError from ``__set_name__``, a
TypeError from ``ssl``), not as itself; exiting from the handler leaves no half-made
exception to print. Kept apart from ``arena.cli`` so that ``python3 -m arena`` sets it
before importing anything else.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable


def quit_now(signum: int, frame: object) -> None:
    os.write(2, b"arena: interrupted\n")
    os._exit(130)


def quit_while_loading() -> Callable[[], None]:
    """Install ``quit_now`` for SIGINT where Python's own handler (or ``quit_now``) is set
    and this is the main thread; the returned undo puts Python's handler back, so that
    the command's own Ctrl-C is a KeyboardInterrupt it may clean up after."""
    import threading

    current = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or current not in (
        signal.default_int_handler, quit_now
    ):
        return lambda: None
    signal.signal(signal.SIGINT, quit_now)

    def undo() -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)

    return undo


def quit_while_exiting() -> None:
    """The command has returned: flush what it printed, then let a Ctrl-C during the
    interpreter's own shutdown (its atexit handlers: logging's, gRPC's) end the process
    with ``quit_now``'s one line rather than an "Exception ignored in atexit" traceback."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed or broken: nothing to say
            stream.flush()
    quit_while_loading()
