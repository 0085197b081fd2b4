"""Match players that outlive a tournament run: one Ray actor per slot of each node.

Ray binds a worker process to one job (one driver) and ends it with that job,
so every task of a fresh driver first waits for a new worker process on its
node (Python, Ray's core worker, the import of the arena and the engine), and
the first game of a short tournament comes seconds late. A slot player is a
detached, named actor (``kahuna-slot-<node id>-<k>`` in the ``kahuna``
namespace), made once per ``kahuna_sandbox`` unit of a node as the node joins
(``arena ray-worker`` runs ``warm_node``) or by the first driver that finds it
missing, held on its node (hard node affinity), holding one unit of the
resource for its life. It imports the match code once, as it starts, and plays
the chains any driver hands it, one after the other, with the code a match
task would run (``ray_executor._play``: the slot lock and pinning, the raylet
watch, the events as they come).

- A driver hands each player at most one chain at a time and counts the
  players, not the units, as its slots: on each node at most as many as the
  node has CPUs for ``match_cpus`` each (the players hold no CPU of Ray's:
  drivers asking for different shares use the same players). It never uses a
  player on a node it distrusts.
- A player stops a chain by dying: the driver kills it (``stop``: Ctrl-C, a
  forged game), and the sandbox watchdogs end the bots; Ray starts it again
  (``max_restarts=-1``), so its node's slot is warm for the next driver.
- A player whose driver died mid-chain (its job is dead in Ray's job table)
  ends itself the same way within a second: nobody stores those games, and
  the resumed driver replays them.
- A player on a node that died dies with it (node affinity: it cannot be
  placed elsewhere); the driver forgets it and makes it again only if its
  node comes back.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from arena.logs import get_logger
from arena.tournament.execution.executor import JobDone

SANDBOX_RESOURCE = "kahuna_sandbox"
NAMESPACE = "kahuna"
PREFIX = "kahuna-slot"
_OWNER_CHECK_S = 1.0  # how often a player asks whether the driver of its chain lives


def player_name(node_id: str, slot: int) -> str:
    return f"{PREFIX}-{node_id}-{slot}"


def pick_player(
    players: Mapping[str, str], busy: set[str], distrusted: Mapping[str, str]
) -> str | None:
    """Of ``players`` (name -> node id), one not in ``busy`` and not on a node in
    ``distrusted``: each node's first slot before any node's second, so that chains
    spread over the nodes; None when there is none."""
    free = [(int(name.rsplit("-", 1)[1]), name) for name, node_id in players.items()
            if name not in busy and node_id not in distrusted]  # fmt: skip
    return min(free)[1] if free else None


def _job_alive(job_id: str) -> bool:
    """Whether the job (a driver) ``job_id`` is alive, by Ray's job table; True when the
    table cannot be read (a player never ends a chain on a failed look)."""
    try:
        client = ray._private.worker.global_worker.gcs_client  # type: ignore[attr-defined]
        jobs = client.get_all_job_info(
            job_or_submission_id=job_id, skip_submission_job_info_field=True,
            skip_is_running_tasks_field=True, timeout=5,
        )  # fmt: skip
    except Exception:  # the GCS unreachable for a moment: look again later
        return True
    for found_id, info in jobs.items():
        if found_id.hex() == job_id:
            return not info.is_dead
    return True


class SlotPlayer:
    """The actor: plays the chains it is handed (see the module docstring)."""

    def __init__(self) -> None:
        # Imported now, once: the first chain starts from a warm process.
        import arena.tournament.execution.ray_executor  # noqa: F401

    def ready(self) -> int:
        return os.getpid()

    def play(
        self, owner: str, groups: tuple[Any, ...], bundles: dict[str, Any], prestart: bool
    ) -> Iterator[tuple[object, ...]]:
        """``ray_executor._play`` of ``groups`` for the driver of job ``owner``; this process
        ends itself if that driver dies before every job of the chain is done (after that
        only the chain's bots are being closed, and the driver may well have left)."""
        from arena.tournament.execution.ray_executor import _play

        over = threading.Event()

        def watch() -> None:
            while not over.wait(_OWNER_CHECK_S):
                if not _job_alive(owner):
                    with contextlib.suppress(Exception):  # its end matters, not its log
                        get_logger(executor="ray").warning("slot_player_orphaned", owner=owner)
                    os._exit(1)  # its bots' sandbox watchdogs end them

        threading.Thread(target=watch, name="owner-watch", daemon=True).start()
        jobs = sum(len(group) for group in groups)
        reported = 0
        try:
            for batch in _play(groups, bundles, prestart):
                reported += sum(isinstance(event, JobDone) for event in batch)
                if reported >= jobs:
                    over.set()
                yield batch
        finally:
            over.set()


_Player = ray.remote(SlotPlayer)


class SlotPlayers:
    """The driver's view of the cluster's slot players: which exist, which it uses."""

    def __init__(self, match_cpus: float) -> None:
        self.match_cpus = match_cpus
        self._handles: dict[str, tuple[str, Any]] = {}  # name -> (node id, actor handle)
        self._owner = ray.get_runtime_context().get_job_id()
        # A process's first ray.put connects it to its node's object store: done now,
        # while the runner sets up, not as the first chain's bundles go.
        threading.Thread(target=ray.put, args=(b"",), name="object-store", daemon=True).start()

    def refresh(self, distrusted: Mapping[str, str], only: str | None = None) -> int:
        """Look at the cluster's nodes (or node ``only``), make the players missing on the
        alive ones that offer the sandbox resource, forget those of nodes gone; the
        number of players this driver may use (none on a node in ``distrusted``)."""
        nodes: list[dict[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]
        alive: dict[str, int] = {}
        for node in nodes:
            resources = node.get("Resources", {})
            units = int(resources.get(SANDBOX_RESOURCE, 0))
            if not node.get("Alive") or units < 1 or only not in (None, node["NodeID"]):
                continue
            if self.match_cpus > 0:  # no more players than the node has CPUs for
                units = min(units, int(resources.get("CPU", 0) // self.match_cpus))
            alive[node["NodeID"]] = units
        for name, (node_id, _handle) in list(self._handles.items()):
            if node_id not in alive:
                del self._handles[name]
        for node_id, units in alive.items():
            for slot in range(units):
                name = player_name(node_id, slot)
                if name not in self._handles:
                    self._handles[name] = (node_id, self._make(name, node_id))
        return sum(1 for node_id, _h in self._handles.values() if node_id not in distrusted)

    def _make(self, name: str, node_id: str) -> Any:
        return _Player.options(
            name=name, namespace=NAMESPACE, get_if_exists=True, lifetime="detached",
            num_cpus=0, resources={SANDBOX_RESOURCE: 1},
            max_restarts=-1, max_task_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        ).remote()  # fmt: skip

    def pick(self, busy: set[str], distrusted: Mapping[str, str]) -> str | None:
        """A player this driver is not using, on a trusted node (``pick_player``)."""
        nodes = {name: node_id for name, (node_id, _handle) in self._handles.items()}
        return pick_player(nodes, busy, distrusted)

    def play(self, name: str, groups: tuple[Any, ...], bundles: dict[str, Any],
             prestart: bool) -> Any:  # fmt: skip
        """The stream (``ray.ObjectRefGenerator``) of ``groups`` played by player ``name``."""
        _node_id, handle = self._handles[name]
        call = handle.play.options(name=f"kahuna-match-{groups[0][0].match_id}")
        return call.remote(self._owner, groups, bundles, prestart)

    def stop(self, name: str) -> None:
        """End the chain player ``name`` plays now, by ending its process (Ray starts it
        again)."""
        found = self._handles.get(name)
        if found is not None:
            ray.kill(found[1], no_restart=False)

    def lost(self, name: str) -> None:
        """Forget player ``name`` (its call failed: its node or process died); the next
        ``refresh`` finds or makes it again if its node lives."""
        self._handles.pop(name, None)

    def ready(self, timeout_s: float) -> list[int]:
        """Wait for every player known to have started; their process ids."""
        pids: list[int] = ray.get([handle.ready.remote() for _n, handle in self._handles.values()],
                                  timeout=timeout_s)  # fmt: skip
        return pids


def warm_node(address: str, node_ip: str | None, timeout_s: float) -> int:
    """Make this node's slot players as it joins the cluster at ``address`` (its raylet
    may still be starting: tried until ``timeout_s``), so that the first tournament
    finds them warm; 0 once they are ready, 1 if not (a driver makes them later)."""
    log = get_logger(executor="ray")
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            ray.init(address=address, namespace=NAMESPACE, log_to_driver=False,
                     logging_level=logging.ERROR, configure_logging=False,
                     _node_ip_address=node_ip)  # fmt: skip
            break
        except Exception as error:  # the node's raylet not up yet
            if time.monotonic() > deadline:
                log.warning("slot_players_not_warmed", error=str(error))
                return 1
            time.sleep(1.0)
    try:
        node_id = ray.get_runtime_context().get_node_id()
        players = SlotPlayers(0)
        while players.refresh({}, only=node_id) == 0 and time.monotonic() < deadline:
            time.sleep(0.5)  # the node's resources not seen by the head yet
        pids = players.ready(max(1.0, deadline - time.monotonic()))
        log.info("slot_players_warm", node_id=node_id, pids=pids)
        return 0
    except Exception as error:
        log.warning("slot_players_not_warmed", error=str(error))
        return 1
    finally:
        ray.shutdown()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m arena.tournament.execution.slot_players ADDRESS [--node-ip IP]``."""
    parser = argparse.ArgumentParser(
        description="make this node's slot players as it joins the Ray cluster at ADDRESS;"
        " exit 0 once they are ready, 1 if not (a driver makes them later)"
    )
    parser.add_argument("address")
    parser.add_argument("--node-ip")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    return warm_node(args.address, args.node_ip, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
