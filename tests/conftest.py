"""The test suite is an entry point too: gRPC's environment as in arena processes.

Tests run referees in this process (``run_match``), as ``arena match`` does
in its own: tune gRPC before any test module imports it (``arena._grpc_env``).
``tests.boundaries`` keeps the inner loop (``pytest -m "not slow"``) free of
processes and servers, and soak tests out unless ``-m`` asks for them.
Property tests try a fifth of their examples unless ``KAHUNA_EXAMPLES=full``
(``scripts/check`` sets it): ``arena.testing.examples``. ``tests.scheduling``
shares the suite between ``pytest -n`` workers: whole files, the longest first.
``tests.exit_watch`` fails a run that hangs on its way out, printing every
thread's stack. A test that leaves a signal's handler changed fails, and the
handler is put back for the next test on its worker. The test processes keep
the modules they compile, the assert-rewritten test modules among them, in a
cache of the tests' own (``PYCACHE``) even where ``PYTHONDONTWRITEBYTECODE`` is
set: otherwise every run, on every worker, would rewrite some 300 modules again
(a fifth of the inner loop); and the checkout's bot directories stay free of
``__pycache__`` however a test imports them. (The staged copy of the engine that
sandboxed bots import compiles beside itself under any prefix:
``arena.referee.bytecode``.)
"""

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from arena._grpc_env import tune_this_process
from arena.testing.examples import HYPOTHESIS_DEFAULT, examples, full_run

tune_this_process()

PYCACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kahuna-tests"
if sys.pycache_prefix is None:  # (PYTHONPYCACHEPREFIX names one of the user's own)
    sys.pycache_prefix = str(PYCACHE)
sys.dont_write_bytecode = False

settings.register_profile("full", max_examples=HYPOTHESIS_DEFAULT)
settings.register_profile("quick", max_examples=examples(HYPOTHESIS_DEFAULT))
settings.load_profile("full" if full_run() else "quick")


def pytest_configure(config: pytest.Config) -> None:
    from tests import boundaries, exit_watch, scheduling

    boundaries.install(config)
    config.pluginmanager.register(scheduling, "kahuna-scheduling")
    config.pluginmanager.register(exit_watch, "kahuna-exit-watch")


@pytest.fixture(autouse=True)
def _signal_handlers_as_found() -> Iterator[None]:
    """SIGINT's and SIGTERM's handlers are process-wide: one a test leaves behind would
    be the next test's on its worker (see the module docstring)."""
    found = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    yield
    left = {signum: signal.getsignal(signum) for signum in found}
    changed = [signum for signum in found if left[signum] is not found[signum]]
    for signum in changed:
        handler = found[signum]
        if handler is not None:  # None: set from C, which Python cannot put back
            signal.signal(signum, handler)
    if changed:
        pytest.fail("the test left these signals' handlers changed: " + ", ".join(
            f"{signal.Signals(signum).name} {left[signum]!r} (found {found[signum]!r})"
            for signum in changed
        ))  # fmt: skip
