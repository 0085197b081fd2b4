"""A test run that hangs on its way out fails, printing every thread's stack.

Once pytest has finished, the interpreter still joins every thread that is not a
daemon (a thread pool's workers, a tournament's thread, a server's handlers)
before it exits. One of them blocked for ever would hold a CI run until its own
limit with nothing to read. Here the end of the session arms ``faulthandler``'s
watchdog: if the process is still alive ``EXIT_LIMIT_S`` later, it writes each
thread's stack to stderr and exits with status 1.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
from typing import TextIO

import pytest

EXIT_LIMIT_S = 120.0
"""How long a finished run may take to exit: Ray's and gRPC's shutdowns take seconds."""
LIMIT_VARIABLE = "KAHUNA_TEST_EXIT_LIMIT_S"
"""Sets another limit in seconds (tests of this plugin use a short one)."""


def exit_limit_s() -> float:
    """The limit: ``KAHUNA_TEST_EXIT_LIMIT_S`` when set to a positive number, else the default."""
    raw = os.environ.get(LIMIT_VARIABLE, "")
    try:
        value = float(raw)
    except ValueError:
        return EXIT_LIMIT_S
    return value if value > 0 else EXIT_LIMIT_S


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Arm the watchdog; in an xdist worker, only once its interpreter begins to exit.

    A worker's session ends when it has no more tests, but its process lives on, idle,
    until the controller ends the whole run: armed then, the watchdog would kill a worker
    that finished early while another runs long tests. ``threading``'s exit hooks run as
    the interpreter starts its shutdown, before it joins the threads left behind.
    """
    stream = sys.__stderr__
    if stream is None:  # no stderr to write the stacks to: nothing to arm
        return
    if hasattr(config, "workerinput"):
        register = getattr(threading, "_register_atexit", None)
        if register is not None:
            register(_arm, stream)
            return
    _arm(stream)


def _arm(stream: TextIO) -> None:
    stream.flush()
    faulthandler.dump_traceback_later(exit_limit_s(), exit=True, file=stream)
