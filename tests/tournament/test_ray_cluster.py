"""Tournaments on a real multi-node Ray cluster on this machine.

The cluster (``arena.testing.ray_cluster``, shared with test_ray_node_faults.py:
tests/tournament/shared.py): a head with CPUs but without the
``kahuna_sandbox`` resource and two worker nodes with it, each node in a
network namespace made by the test (addresses 10.231.0.0/24 exist only
there), each with its own Ray temp directory and bot cache. The driver (the
arena process under test) runs in the head's namespace. Every game is
compared with the same tournament played by the local executor: the bots
are deterministic, the deals keyed by the same secret.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.referee.botdir import content_hash
from arena.testing.ray_cluster import (
    NetnsCluster,
    Node,
    ip_available,
    netns_pids,
    sandboxes_of,
)
from arena.testing.waiting import wait_until
from arena.tournament.execution.cpu_placement import usable_cpus

from .shared import SMALL, References, standings
from .test_runner import (
    DEFINITIONS,
    TEST_SECRET,
    _check_consistent,
    _check_deals_keyed,
    _create,
    _data_dir_with_bots,
    _played,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

_unavailable = ip_available()
if _unavailable:
    pytest.skip(f"no namespaced Ray cluster here: {_unavailable}", allow_module_level=True)


@pytest.fixture
def cluster(shared_ray_cluster: NetnsCluster) -> Iterator[NetnsCluster]:
    yield shared_ray_cluster
    for node in shared_ray_cluster.nodes:
        assert not sandboxes_of(node), f"a sandbox outlived the tests on {node.name}"


def _driver(
    cluster: NetnsCluster, data: Path, out: Path, *more: str
) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "arena.testing.ray_driver", str(data), "cup",
            cluster.address, str(out), *more]  # fmt: skip
    return subprocess.Popen(
        cluster.netns_argv(cluster.head, argv), env=cluster.node_env(cluster.head),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip


def _finish(process: subprocess.Popen[bytes], out: Path, timeout_s: float = 300) -> dict[str, Any]:
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
    assert process.returncode == 0, output.decode(errors="replace")[-4000:]
    result: dict[str, Any] = json.loads(out.read_text())
    result["log"] = output.decode(errors="replace")
    return result


def _stored_games(data: Path) -> int:
    try:
        db = sqlite3.connect(data / "arena.db", timeout=5)
        return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.Error:
        return 0


def _wait_games(data: Path, count: int, process: subprocess.Popen[bytes]) -> None:
    def stored() -> bool:
        assert process.poll() is None, "the driver ended before the moment to kill"
        return _stored_games(data) >= count

    wait_until(stored, f"{count} games stored", 240, interval_s=0.05)


def _no_bots_left(cluster: NetnsCluster) -> None:
    def left() -> dict[str, object]:
        return {node.name: sandboxes_of(node) for node in cluster.nodes if sandboxes_of(node)}

    wait_until(lambda: not left(), "no sandbox left on any node", 30, interval_s=0.2, state=left)


def _check_same(data: Path, reference: list[tuple[object, ...]]) -> None:
    assert _played(data) == reference, "a game lost, replayed differently or stored twice"
    _check_consistent(data)  # each stored game rated once, counters agree
    _check_deals_keyed(data)


@pytest.mark.parametrize("name", sorted(DEFINITIONS))
def test_a_tournament_on_two_workers_stores_what_the_local_executor_does(
    cluster: NetnsCluster, references: References, name: str,
    tmp_path: Path,
) -> None:  # fmt: skip
    """Same games, seats, deals, results (and byes) as the local executor; and a node
    without the sandbox resource (the head, with CPUs to spare) never gets a match."""
    bots, definition = DEFINITIONS[name]
    data = _data_dir_with_bots(tmp_path, bots)
    _create(data, definition)
    result = _finish(_driver(cluster, data, tmp_path / "out.json"), tmp_path / "out.json")
    _check_same(data, references[name])
    assert standings(data) == references[f"{name} standings"]
    workers = {node.address for node in cluster.nodes[1:]}
    used = {placed["node_ip"] for placed in result["placements"]}
    assert used <= workers, f"a match ran on {used - workers}"
    assert cluster.head.address not in used
    assert not any(cluster.head.cache_dir.iterdir()), "the head unpacked a bot"
    assert len(used) == 2, "one worker got every match"
    assert result["resubmitted"] == 0
    if name == "round-robin":  # 6 matches on 4 slots: the first task plays 2 in turn
        _check_chained(result, matches=6)
    if len(usable_cpus()) >= 2:  # each node's two slots on a CPU of their own
        assert result["worker_cpus"] and all(len(c) == 1 for c in result["worker_cpus"]), (
            f"match tasks not pinned to their slots' CPUs: {result['worker_cpus']}"
        )
    _no_bots_left(cluster)


def _check_chained(result: dict[str, Any], matches: int) -> None:
    """Fewer tasks than matches, and each match queued behind another in its task had its
    first half's bots launched while the match before it played (a prestart) exactly
    where its slot has a CPU to spare (``arena.referee.prestart``: never on one CPU)."""
    placements = result["placements"]
    assert len({p["match_id"] for p in placements}) == matches
    assert result["tasks"] < matches, f"{result['tasks']} tasks: one per match, no chain"
    chained = [p for p in placements if p["chain"] > 0]
    assert chained, "no match was queued behind another in its task"
    spare = bool(result["worker_cpus"]) and all(len(c) > 1 for c in result["worker_cpus"])
    assert all(p["prestarted"] == spare for p in chained), (
        f"slots on {result['worker_cpus']} CPUs, yet prestarted: {chained}"
    )
    assert not any(p["prestarted"] for p in placements if p["chain"] == 0)


def test_chains_of_one_match_are_a_task_each_and_store_the_same(
    cluster: NetnsCluster, references: References, tmp_path: Path
) -> None:
    """The control of ``_check_chained``: with ``--max-chain 1`` every match is a task of
    its own, none prestarted (the check fails), and the same games are stored."""
    bots, definition = DEFINITIONS["round-robin"]
    data = _data_dir_with_bots(tmp_path, bots)
    _create(data, definition)
    out = tmp_path / "out.json"
    result = _finish(_driver(cluster, data, out, "--max-chain", "1"), out)
    _check_same(data, references["round-robin"])
    assert result["tasks"] == 6
    assert not any(p["prestarted"] for p in result["placements"])
    with pytest.raises(AssertionError, match="one per match, no chain"):
        _check_chained(result, matches=6)
    _no_bots_left(cluster)


def _slot_players(node: Node) -> set[int]:
    """The node's slot players (``arena.tournament.execution.slot_players``): idle, or
    playing a chain (then named after its first match)."""
    found = set()
    for pid in netns_pids(node.netns):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.startswith((b"ray::SlotPlayer", b"ray::kahuna-match")):
            found.add(pid)
    return found


def test_runs_in_turn_play_on_the_players_made_as_the_nodes_joined(
    cluster: NetnsCluster, references: References, tmp_path: Path
) -> None:
    """Each node's matches are played by its slot players, long-lived processes made as
    the node joined (`arena ray-worker`), not by worker processes Ray starts for each
    driver (and ends with it): two drivers in turn play every match on processes that
    ran before the first driver started, and the same processes serve both."""
    for node in cluster.nodes[1:]:
        slots = int(node.resources["kahuna_sandbox"])
        wait_until(lambda: len(_slot_players(node)) >= slots,  # noqa: B023
                   f"{slots} slot players on {node.name}", 120, interval_s=0.5)  # fmt: skip
    before = {pid for node in cluster.nodes[1:] for pid in _slot_players(node)}
    bots, definition = SMALL
    played = []
    for run in ("first", "second"):
        data = _data_dir_with_bots(tmp_path / run, bots)
        _create(data, definition)
        out = tmp_path / f"{run}.json"
        result = _finish(_driver(cluster, data, out), out)
        _check_same(data, references["small"])
        played.append({placed["pid"] for placed in result["placements"]})
        assert {p["node_ip"] for p in result["placements"]} == {
            node.address for node in cluster.nodes[1:]}, "a node played no match"  # fmt: skip
    assert played[0] <= before and played[1] <= before, (before, played)
    assert played[0] & played[1], played
    _no_bots_left(cluster)


def _wait_playing(node: Node, process: subprocess.Popen[bytes]) -> None:
    """Until a match is under way on ``node``: both bots of a match in their sandboxes for
    a second (not the last moments of a match that ended: those are gone at once)."""
    seen = 0

    def playing() -> bool:
        nonlocal seen
        assert process.poll() is None, "the driver ended before a match ran there"
        seen = seen + 1 if len(sandboxes_of(node)) >= 2 else 0
        return seen >= 10

    wait_until(playing, f"a match under way on {node.name}", 120, interval_s=0.1)


def test_the_driver_killed_and_resumed_loses_and_doubles_nothing(
    cluster: NetnsCluster, references: References, tmp_path: Path
) -> None:
    bots, definition = DEFINITIONS["round-robin"]
    reference = references["round-robin"]
    data = _data_dir_with_bots(tmp_path, bots)
    _create(data, definition)
    argv = [sys.executable, "-m", "arena", "tournament", "resume", "cup", "--data-dir",
            str(data), "--no-progress", "--ray", cluster.address]  # fmt: skip
    env = cluster.node_env(cluster.head)
    process = subprocess.Popen(
        cluster.netns_argv(cluster.head, argv), env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    _wait_games(data, 5, process)
    os.kill(process.pid, signal.SIGKILL)  # nsenter execs the arena: its pid is the driver's
    process.wait(30)
    assert _stored_games(data) < len(reference), "the driver finished before it was killed"
    _check_consistent(data)
    _no_bots_left(cluster)  # Ray ends a dead driver's tasks; their watchdogs, the bots
    resumed = subprocess.run(
        cluster.netns_argv(cluster.head, argv), env=env, capture_output=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stdout.decode()[-3000:] + resumed.stderr.decode()
    _check_same(data, reference)
    _no_bots_left(cluster)


def test_a_killed_drivers_chains_stop_on_their_players_at_once(
    cluster: NetnsCluster, tmp_path: Path
) -> None:
    """Ray does not end an actor's call when its caller dies: each slot player watches the
    driver of the chain it plays and ends itself once that driver is gone. SIGKILL the
    driver of a tournament of long matches (100 games each: their chains would play on,
    for nobody, for many seconds) while both nodes play: every sandbox of the nodes is
    gone within seconds, and Ray starts the players again for the next driver."""
    bots = SMALL[0]  # 3 matches: a chain on each node
    data = _data_dir_with_bots(tmp_path, bots)
    _create(data, ["cup", *bots, "--games", "100", "--seed", "3"])
    argv = [sys.executable, "-m", "arena", "tournament", "resume", "cup", "--data-dir",
            str(data), "--no-progress", "--ray", cluster.address]  # fmt: skip
    process = subprocess.Popen(
        cluster.netns_argv(cluster.head, argv), env=cluster.node_env(cluster.head),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    _wait_games(data, 2, process)
    for node in cluster.nodes[1:]:
        _wait_playing(node, process)
    os.kill(process.pid, signal.SIGKILL)  # nsenter execs the arena: its pid is the driver's

    def left() -> dict[str, object]:
        return {node.name: sandboxes_of(node) for node in cluster.nodes if sandboxes_of(node)}

    process.wait(30)
    wait_until(lambda: not left(), "the dead driver's chains stopped", 6, interval_s=0.2,
               state=left)  # fmt: skip
    for node in cluster.nodes[1:]:
        slots = int(node.resources["kahuna_sandbox"])
        wait_until(lambda: len(_slot_players(node)) >= slots,  # noqa: B023
                   f"{slots} slot players on {node.name} again", 120, interval_s=0.5)  # fmt: skip


def test_a_corrupted_bot_cache_is_detected_by_its_hash_and_refetched(
    cluster: NetnsCluster, references: References, tmp_path: Path
) -> None:
    bots, definition = SMALL  # on both match nodes
    # fill every worker's cache, then corrupt each version's main file on every worker
    warm = _data_dir_with_bots(tmp_path / "warm", bots)
    _create(warm, ["warm", *definition[1:]])
    out = tmp_path / "warm.json"
    argv = [sys.executable, "-m", "arena.testing.ray_driver", str(warm), "warm",
            cluster.address, str(out)]  # fmt: skip
    subprocess.run(cluster.netns_argv(cluster.head, argv), env=cluster.node_env(cluster.head),
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    corrupted = []
    for node in cluster.nodes[1:]:
        for version_dir in (d for d in node.cache_dir.iterdir() if d.is_dir()):
            if version_dir.name.startswith("."):
                continue
            bot_py = version_dir / "bot.py"
            bot_py.write_text("raise SystemExit('corrupted cache')\n")
            corrupted.append(version_dir)
    assert corrupted, "no worker cached a bot"
    data = _data_dir_with_bots(tmp_path, bots)
    _create(data, definition)
    _finish(_driver(cluster, data, tmp_path / "out.json"), tmp_path / "out.json")
    _check_same(data, references["small"])  # a corrupted bot would crash: differ
    # the versions a node played again are whole again there (a node may not have
    # played every version it holds a second time: Ray chose)
    repaired = [d for d in corrupted if content_hash(d) == d.name]
    assert repaired, "no corrupted cache was noticed"
    assert all("corrupted cache" not in (d / "bot.py").read_text() for d in repaired)


def test_serve_ray_plays_a_tournament_started_over_the_api_on_the_workers(
    cluster: NetnsCluster, references: References, tmp_path: Path
) -> None:
    """`arena serve --ray`: a tournament created and started over the API is played on the
    worker nodes (their sandboxes; none in the head's namespace, where the server runs and
    where a server without --ray would play it), stored once (the local executor's
    games), and WatchTournament streams every stored game and the end."""
    bots, definition = SMALL  # on both match nodes
    data = _data_dir_with_bots(tmp_path, bots)
    env = cluster.node_env(cluster.head)
    argv = [sys.executable, "-m", "arena", "serve", "--port", "0", "--data-dir", str(data),
            "--ray", cluster.address]  # fmt: skip
    server = subprocess.Popen(
        cluster.netns_argv(cluster.head, argv), env=env, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        port, token = _serve_address(server)
        client = [sys.executable, "-m", "arena.testing.api_client", str(port), str(token)]
        games, seed = definition[definition.index("--games") + 1], definition[-1]
        subprocess.run(
            cluster.netns_argv(cluster.head, [*client, "create", "cup", *bots, "--games",
                                              games, "--seed", seed]),
            env=env, check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        db = sqlite3.connect(data / "arena.db")  # the reference's secret: its very deals
        db.execute("UPDATE tournaments SET secret = ?", (TEST_SECRET,))
        db.commit()
        db.close()
        watcher = subprocess.Popen(
            cluster.netns_argv(cluster.head, [*client, "start-watch", "cup"]), env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        sandboxed = _sandboxes_while(cluster, watcher)
        output, errors = watcher.communicate(timeout=300)
        assert watcher.returncode == 0, errors.decode(errors="replace")[-3000:]
        watched = json.loads(output.decode().strip().splitlines()[-1])
    finally:
        server.terminate()
        server.wait(30)
    _check_same(data, references["small"])
    assert not sandboxed[cluster.head.name], "a match ran in the server's own namespace"
    assert all(sandboxed[node.name] for node in cluster.nodes[1:]), sandboxed
    stored = [row[0] for row in sqlite3.connect(data / "arena.db").execute(
        "SELECT id FROM games ORDER BY id")]  # fmt: skip
    assert sorted(watched["games"]) == stored, "WatchTournament missed or repeated a game"
    assert watched["last"]["status"] == watched["listed"]["status"] == "finished"
    assert watched["listed"]["games_played"] == len(stored) == watched["listed"]["games_scheduled"]
    _no_bots_left(cluster)


def _serve_address(server: subprocess.Popen[str]) -> tuple[int, Path]:
    """The API port and admin token file that `arena serve` prints as it starts."""
    assert server.stdout is not None
    port = token = None
    for _ in range(20):
        line = server.stdout.readline()
        if found := re.search(r"listening on 127\.0\.0\.1:(\d+)", line):
            port = int(found.group(1))
        if found := re.search(r"admin token: (\S+)", line):
            token = Path(found.group(1))
        if port is not None and token is not None:
            return port, token
    raise AssertionError(f"arena serve did not say where it listens (exit {server.poll()})")


def _sandboxes_while(cluster: NetnsCluster, process: subprocess.Popen[bytes]) -> dict[str, int]:
    """How often each node was seen running sandboxes until ``process`` ends."""
    seen = {node.name: 0 for node in cluster.nodes}

    def ended() -> bool:
        for node in cluster.nodes:
            seen[node.name] += bool(sandboxes_of(node))
        return process.poll() is not None

    wait_until(ended, "the watched driver to end", 300, interval_s=0.05, state=lambda: seen)
    return seen
