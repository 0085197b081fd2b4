"""Bot directories for the conformance tests (the referee tests' testbot.py), and logs
that go to the real stderr: a test of another module that first logged under capsys
would leave structlog writing to a closed capture (seen as ValueError in a launch)."""

from __future__ import annotations

import sys

import pytest

from arena.logs import configure
from tests.referee.conftest import make_bot  # noqa: F401  (a fixture, used by name)


@pytest.fixture(autouse=True)
def _logs_to_the_real_stderr() -> None:
    configure(stream=sys.__stderr__)
