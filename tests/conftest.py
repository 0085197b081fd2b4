"""The test suite is an entry point too: gRPC's environment as in arena processes.

Tests run referees in this process (``run_match``), as ``arena match`` does
in its own: tune gRPC before any test module imports it (``arena._grpc_env``).
``tests.boundaries`` keeps the inner loop (``pytest -m "not slow"``) free of
processes and servers, and soak tests out unless ``-m`` asks for them.
Property tests try a fifth of their examples unless ``KAHUNA_EXAMPLES=full``
(``scripts/check`` sets it): ``arena.testing.examples``. ``tests.scheduling``
shares the suite between ``pytest -n`` workers: whole files, the longest first.
``tests.exit_watch`` fails a run that hangs on its way out, printing every
thread's stack.
"""

import pytest
from hypothesis import settings

from arena._grpc_env import tune_this_process
from arena.testing.examples import HYPOTHESIS_DEFAULT, examples, full_run

tune_this_process()

settings.register_profile("full", max_examples=HYPOTHESIS_DEFAULT)
settings.register_profile("quick", max_examples=examples(HYPOTHESIS_DEFAULT))
settings.load_profile("full" if full_run() else "quick")


def pytest_configure(config: pytest.Config) -> None:
    from tests import boundaries, exit_watch, scheduling

    boundaries.install(config)
    config.pluginmanager.register(scheduling, "kahuna-scheduling")
    config.pluginmanager.register(exit_watch, "kahuna-exit-watch")
