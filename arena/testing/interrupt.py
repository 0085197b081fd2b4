"""Starting a process that a test will Ctrl-C: SIGINT at its default, and no fork handlers.

A process started from a shell's background job inherits SIGINT ignored, and
Python then never raises ``KeyboardInterrupt``: the child must start with
SIGINT at its default. Resetting it in a ``preexec_fn`` makes ``subprocess``
fork() instead of vfork(), and fork() runs the parent's fork handlers in the
child. The test process holds a live gRPC core (servers of earlier tests),
whose child handler restarts gRPC's threads in the half-made child; the child
then closes its descriptors before exec, the restarted epoll poller finds its
descriptor gone and aborts the child ("epoll_wait error: Bad file
descriptor", status -6) before the command under test has run at all.
``env --default-signal=INT`` (GNU coreutils) resets SIGINT after the exec
instead, so the spawn stays a vfork with no handlers in between.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from typing import Any

DEFAULT_SIGINT: tuple[str, ...] = ("env", "--default-signal=INT")
"""The prefix that runs a command with SIGINT at its default, whatever this process has."""


def start_interruptible(argv: Sequence[str], **popen: Any) -> subprocess.Popen[str]:
    """``subprocess.Popen`` of ``argv`` (text mode) that a SIGINT interrupts as at a terminal.

    ``popen`` goes to ``Popen`` as given; a ``preexec_fn`` is refused (it is what
    brings the fork handlers back).
    """
    if "preexec_fn" in popen:
        raise ValueError("start_interruptible: a preexec_fn makes the spawn a fork(), "
                         "which runs gRPC's fork handlers in the child")  # fmt: skip
    return subprocess.Popen([*DEFAULT_SIGINT, *argv], text=True, **popen)
