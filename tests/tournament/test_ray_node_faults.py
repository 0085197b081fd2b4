"""Ray nodes that fail the driver: one that forges its games, one whose raylet dies.

A real cluster in network namespaces (``arena.testing.ray_cluster``, shared with
test_ray_cluster.py: tests/tournament/shared.py): a head without the sandbox
resource, an honest worker and a worker that forges every game it reports when
told to (``arena.testing.forged_records``: a wrong deal, a wrong result or
edited actions). The driver must store exactly the games
the local executor plays (none lost, none twice, none of the forger's), name
the forger in its log and in `arena tournament status`, and play the forged
games' matches again on the honest node. Last, the honest worker's raylet is
killed while it plays chains of matches: its match workers must end at once, not
play on, and every game of the tournament is stored once, as the local executor
stores it (the last test of the shared cluster's unit to kill a node, so that no
other test pays for a fresh node in its place; one that asks for the cluster
after it gets one).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.testing.ray_cluster import NetnsCluster, Node, describe, ip_available, sandboxes_of
from arena.testing.waiting import wait_until

from .shared import CHAINS, SMALL, References, forger, forging
from .test_ray_cluster import (
    _check_same,
    _driver,
    _finish,
    _no_bots_left,
    _wait_games,
    _wait_playing,
)
from .test_runner import _create, _data_dir_with_bots

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

_unavailable = ip_available()
if _unavailable:
    pytest.skip(f"no namespaced Ray cluster here: {_unavailable}", allow_module_level=True)


@pytest.fixture
def cluster(shared_ray_cluster: NetnsCluster) -> NetnsCluster:
    return shared_ray_cluster


@pytest.fixture
def small(references: References) -> list[tuple[object, ...]]:
    """The small round robin's games (``shared.SMALL``: a match on each node at least)."""
    return references["small"]


def _rejected(data: Path) -> list[tuple[int, int, str, str]]:
    db = sqlite3.connect(data / "arena.db")
    return db.execute(
        "SELECT match_id, game_index, node_ip, problem FROM rejected_games ORDER BY id"
    ).fetchall()


def _arena(capsys: pytest.CaptureFixture[str], data: Path, *args: str) -> str:
    """What `arena ARGS` prints (the command, in this process)."""
    capsys.readouterr()
    code = main([*args, "--data-dir", str(data)])
    shown = capsys.readouterr()
    assert code == 0, shown.out + shown.err
    return shown.out


@pytest.mark.parametrize(
    ("forgery", "problem"),
    [
        ("deal", "the deal is not the one its seed derives"),
        ("result", "the record gives"),
        ("actions", "actions reported, the record has|stops before the game ends"),
        ("drop", "said it was done without game"),
        ("foreign", "a game of match .* it was not given"),
    ],
)
def test_a_node_that_forges_its_games_is_caught_named_and_replayed_elsewhere(
    cluster: NetnsCluster, small: list[tuple[object, ...]], tmp_path: Path,
    capsys: pytest.CaptureFixture[str], forgery: str, problem: str,
) -> None:  # fmt: skip
    bots, definition = SMALL
    data = _data_dir_with_bots(tmp_path, bots)
    _create(data, definition)
    out = tmp_path / "out.json"
    with forging(cluster, forgery) as cheat:
        result = _finish(_driver(cluster, data, out), out)
    (honest,) = [node for node in cluster.nodes[1:] if node is not cheat]
    _check_same(data, small)  # every game once, as the local executor plays it
    rejected = _rejected(data)
    assert rejected, "the forger sent no game (or none was caught)"
    assert {ip for _m, _g, ip, _p in rejected} == {cheat.address}
    assert all(re.search(problem, p) for _m, _g, _ip, p in rejected)
    logged = [json.loads(line) for line in result["log"].splitlines()
              if line.startswith("{") and "game_rejected" in line]  # fmt: skip
    assert any(e.get("node_ip") == cheat.address for e in logged), result["log"][-4000:]
    for match_id in {m for m, _g, _ip, _p in rejected}:  # played again, on the honest node
        last = [p for p in result["placements"] if p["match_id"] == match_id][-1]
        assert last["node_ip"] == honest.address, result["placements"]
    status = _arena(capsys, data, "tournament", "status", "cup")
    assert cheat.address in status and "refused" in status, status
    shown = json.loads(_arena(capsys, data, "tournament", "status", "cup", "--json"))
    assert {r["node_ip"] for r in shown["rejected_games"]} == {cheat.address}
    _no_bots_left(cluster)


def _match_workers(cluster: NetnsCluster, node: Node) -> list[int]:
    """The node's Ray workers that play matches (``ray::kahuna-match-N``)."""
    found = []
    for pid in cluster.processes(node):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::kahuna-match"):
                found.append(pid)
        except OSError:
            continue
    return found


def _logged(log: str, event: str) -> list[dict[str, Any]]:
    """The driver's structured log lines of ``event``."""
    lines = (json.loads(line) for line in log.splitlines() if line.startswith("{"))
    return [e for e in lines if e.get("event") == event]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs: a zombie (killed, not reaped yet: this machine's pid 1 reaps
    late) has ended."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_a_node_whose_raylet_dies_stops_its_matches_at_once_and_loses_nothing(
    cluster: NetnsCluster, references: References, tmp_path: Path
) -> None:
    """SIGKILL only the raylet of a worker that is playing (a node failure; its Ray workers
    are left to notice): its match workers end within a second and their sandbox
    watchdogs kill its bots; the driver plays the unstored games of its matches again on
    the other node, each once, as the local executor stores them. 15 short matches on 4
    slots, so that the victim's first task is a chain of 3 or 4 matches: those queued
    behind the one playing (and the one prestarted) go back to the driver's queue with
    every game, the one playing with its games not stored."""
    victim = next(node for node in cluster.nodes[1:] if node is not forger(cluster))
    bots, definition = CHAINS
    data = _data_dir_with_bots(tmp_path, bots)
    _create(data, definition)
    out = tmp_path / "out.json"
    process = _driver(cluster, data, out)
    _wait_games(data, 1, process)
    _wait_playing(victim, process)
    workers = _match_workers(cluster, victim)
    assert workers, "no match worker on the node"
    raylet = cluster.raylet_pid(victim)
    assert raylet is not None
    os.kill(raylet, signal.SIGKILL)
    wait_until(lambda: not any(_alive(pid) for pid in workers), "the match workers gone",
               1.5, state=lambda: [pid for pid in workers if _alive(pid)])  # fmt: skip
    wait_until(lambda: not sandboxes_of(victim), f"no sandbox left on {victim.name}", 60,
               interval_s=0.2, state=lambda: describe(sandboxes_of(victim)))  # fmt: skip
    result = _finish(process, out)
    _check_same(data, references["chains"])
    assert result["games_discarded"] == 0
    assert result["resubmitted"] >= 1, result["log"][-6000:]
    resubmitted = _logged(result["log"], "match_resubmitted")
    assert resubmitted, result["log"][-6000:]
    placed = {(e["match_id"], e["attempt"]) for e in _logged(result["log"], "match_placed")}
    assert placed, result["log"][-6000:]  # the placements are logged: a queued match has none
    queued = [e for e in resubmitted if (e["match_id"], e["attempt"] - 1) not in placed]
    whole = [e for e in queued if sum(len(v) for v in e["games"].values()) == 2]
    assert whole, f"no queued match (never placed on the node) was resubmitted whole: {resubmitted}"
    _no_bots_left(cluster)
    cluster.kill_node(victim, everything=True)  # what is left of it (Ray's helpers)
    cluster.remove_dead(victim)  # a test that asks for the cluster next gets a fresh one
