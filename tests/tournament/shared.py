"""What several tournament test files share in one pytest process (tests/tournament/conftest.py).

``References``: each definition's games as the local executor plays them, the
reference the interrupted runs and the Ray runs are compared with, played
once. ``ray_cluster``: the multi-node Ray cluster of test_ray_cluster.py and
test_ray_node_faults.py (tests/scheduling.py hands the files to one worker):
a head with CPUs but without the ``kahuna_sandbox`` resource and two match
nodes of two slots each, the first of them (``forger``) made to forge the
games it reports when the mode file says so (``arena.testing.forged_records``;
it reads "honest", which passes every report on as it is, but inside
``forging``).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.testing.forged_records import node_env
from arena.testing.ray_cluster import NetnsCluster, Node

from .test_runner import DEFINITIONS, _create, _data_dir_with_bots, _played, _run_cli

REPO = Path(__file__).resolve().parents[2]

SMALL_BOTS = {"r1": "random", "g1": "greedy", "g2": "greedy"}
SMALL = (SMALL_BOTS, ["cup", *SMALL_BOTS, "--games", "2", "--seed", "13"])
"""The least round robin that plays on both match nodes (3 matches of 2 games: on 4
slots the first task goes to each node's first slot, the third to a second slot), for
the tests whose claim is about the nodes, not about chains or the tournament's size."""

CHAINS_BOTS = {**DEFINITIONS["round-robin"][0], "r3": "random", "g3": "greedy"}
CHAINS = (CHAINS_BOTS, ["cup", *CHAINS_BOTS, "--games", "2", "--seed", "11"])
"""Many short matches (15 of 2 games): on 4 slots the first task on each node's first
slot is a chain of 4 or 3 matches."""


def standings(data: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(data / "arena.db")
    return db.execute(
        "SELECT id, games, wins, draws, losses, timeouts, crashes FROM bot_versions ORDER BY id"
    ).fetchall()


class References:
    """Each definition's games and byes (NAME) and counts ("NAME standings") as the
    local executor plays them, computed when first asked for."""

    def __init__(self, root: pytest.TempPathFactory) -> None:
        self.root = root
        self.played: dict[str, list[tuple[object, ...]]] = {}

    def __getitem__(self, key: str) -> list[tuple[object, ...]]:
        name = key.removesuffix(" standings")
        if name not in self.played:
            bots, definition = {"small": SMALL, "chains": CHAINS}.get(name) or DEFINITIONS[name]
            data = _data_dir_with_bots(self.root.mktemp(f"local-{name}"), bots)
            _create(data, definition)
            done = _run_cli(data, "resume", "cup")
            assert done.wait(300) == 0, done.stderr.read() if done.stderr else ""
            self.played[name] = _played(data)
            self.played[f"{name} standings"] = standings(data)
        return self.played[key]


def root_dir() -> Path:
    return Path(os.environ.get("KAHUNA_TEST_TMP", "/tmp")) / f"kray{os.getpid()}"


MATCH_NODE = {"kahuna_sandbox": 2.0}
"""Each match node's resources: two slots."""


def ray_cluster(root: Path) -> NetnsCluster:
    """The shared cluster, not started; its first match node forges when told to."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "forge").write_text("honest")
    env = node_env(root / "site", root / "w1" / "cache", root / "forge", str(REPO))
    return NetnsCluster(
        root, workers=(MATCH_NODE, MATCH_NODE), worker_cpus=2, head_cpus=2, env=env,
    )  # fmt: skip


def whole(cluster: NetnsCluster) -> NetnsCluster:
    """The cluster with its two match nodes: a node a test killed (and removed) is
    replaced by a fresh one when the next test asks for the cluster, so that the last
    test to kill one makes none for nobody."""
    while len(cluster.nodes) - 1 < len(cluster.workers):
        cluster.add_worker(MATCH_NODE)
    return cluster


def forger(cluster: NetnsCluster) -> Node:
    """The match node that forges when told to (never one a test kills)."""
    return next(node for node in cluster.nodes if node.cache_dir == cluster.root / "w1" / "cache")


@contextlib.contextmanager
def forging(cluster: NetnsCluster, mode: str) -> Iterator[Node]:
    """The forger forges ``mode`` until the block ends, whatever happens in it."""
    (cluster.root / "forge").write_text(mode)
    try:
        yield forger(cluster)
    finally:
        (cluster.root / "forge").write_text("honest")
