"""Fixtures several tournament test files share, each made once per pytest process when
first asked for (tests/tournament/shared.py).

The shared Ray cluster is closed as soon as the test after the one that last used it
does not use it (its files run one after the other: tests/scheduling.py's ``SHARED``),
so that its daemons do not run beside the rest of the suite; a later test that asks
for it again gets a new one.
"""

from __future__ import annotations

import shutil

import pytest

from arena.testing.ray_cluster import NetnsCluster

from . import shared

FIXTURE = "shared_ray_cluster"


class _Running:
    """The shared cluster while it runs."""

    cluster: NetnsCluster | None = None

    @classmethod
    def get(cls) -> NetnsCluster:
        if cls.cluster is None:
            made = shared.ray_cluster(shared.root_dir())
            try:
                made.__enter__()  # closes what it made if it fails
            except BaseException:
                shutil.rmtree(made.root, ignore_errors=True)
                raise
            cls.cluster = made
        return cls.cluster

    @classmethod
    def close(cls) -> None:
        if cls.cluster is not None:
            made, cls.cluster = cls.cluster, None
            try:
                made.close()
            finally:
                shutil.rmtree(made.root, ignore_errors=True)


@pytest.fixture(scope="session")
def references(tmp_path_factory: pytest.TempPathFactory) -> shared.References:
    return shared.References(tmp_path_factory)


@pytest.fixture
def shared_ray_cluster() -> NetnsCluster:
    """The running shared cluster, whole (``shared.whole``): made for the first test
    that asks, kept for the next ones."""
    return shared.whole(_Running.get())


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After the fixtures of ``item`` are torn down: close the cluster when the next test
    does not use it."""
    if FIXTURE in getattr(item, "fixturenames", ()) and (
        nextitem is None or FIXTURE not in getattr(nextitem, "fixturenames", ())
    ):
        _Running.close()


def pytest_sessionfinish() -> None:
    _Running.close()
