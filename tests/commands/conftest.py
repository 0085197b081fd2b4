"""Fixtures the command tests share with other packages' tests."""

from tests.server.test_disk_full import disk  # noqa: F401  (a fixture, used by name)
