"""start_interruptible: the child has SIGINT at its default and is started with no fork handlers."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from arena.testing.interrupt import start_interruptible

pytestmark = pytest.mark.slow

# A parent whose fork handlers abort the child (as gRPC's child handler can: its restarted
# poller meets the descriptors the child closes before exec). A spawn that runs them dies
# of SIGABRT before its program starts; one that runs none prints "started".
_PARENT = textwrap.dedent(
    """
    import ctypes, signal, subprocess, sys
    from arena.testing.interrupt import start_interruptible

    libc = ctypes.CDLL("libc.so.6")  # pthread_atfork is glibc's __register_atfork
    abort = ctypes.cast(libc.abort, ctypes.c_void_p)
    assert libc.__register_atfork(None, None, abort, None) == 0
    argv = [sys.executable, "-c", "print('started')"]
    if sys.argv[1] == "helper":
        child = start_interruptible(argv, stdout=subprocess.PIPE)
    else:
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    out, _ = child.communicate(timeout=60)
    print(child.returncode, out.strip())
    """
)


@pytest.mark.parametrize(
    ("spawn", "expected"),
    [("helper", "0 started"), ("preexec_fn", f"{-signal.SIGABRT}")],
    ids=["start_interruptible", "preexec_fn-control"],
)
def test_no_fork_handler_runs_in_the_child(spawn: str, expected: str) -> None:
    done = subprocess.run([sys.executable, "-c", _PARENT, spawn], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


def test_a_sigint_ignored_here_is_at_its_default_in_the_child() -> None:
    report = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        child = start_interruptible([sys.executable, "-c", report], stdout=subprocess.PIPE)
    finally:
        signal.signal(signal.SIGINT, ignored)
    out, _ = child.communicate(timeout=60)
    assert out.strip() == "True"


def test_a_preexec_fn_is_refused() -> None:
    with pytest.raises(ValueError, match="preexec_fn makes the spawn a fork"):
        start_interruptible(["true"], preexec_fn=lambda: None)
