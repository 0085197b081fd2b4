"""Fixtures several tournament test files share, each made once per pytest process when
first asked for (tests/tournament/shared.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from arena.testing.ray_cluster import NetnsCluster

from . import shared


@pytest.fixture(scope="session")
def references(tmp_path_factory: pytest.TempPathFactory) -> shared.References:
    return shared.References(tmp_path_factory)


@pytest.fixture(scope="session")
def shared_ray_cluster() -> Iterator[NetnsCluster]:
    root = shared.root_dir()
    made = shared.ray_cluster(root)
    try:
        with made:
            yield made
    finally:
        shutil.rmtree(root, ignore_errors=True)
