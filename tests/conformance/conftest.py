"""Bot directories for the conformance tests: the referee tests' testbot.py."""

from tests.referee.conftest import make_bot  # noqa: F401  (a fixture, used by name)
