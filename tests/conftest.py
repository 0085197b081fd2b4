"""The test suite is an entry point too: gRPC's environment as in arena processes.

Tests run referees in this process (``run_match``), as ``arena match`` does
in its own: tune gRPC before any test module imports it (``arena._grpc_env``).
``tests.boundaries`` keeps the inner loop (``pytest -m "not slow"``) free of
processes and servers, and soak tests out unless ``-m`` asks for them.
"""

import pytest

from arena._grpc_env import tune_this_process

tune_this_process()


def pytest_configure(config: pytest.Config) -> None:
    from tests import boundaries

    boundaries.install(config)
