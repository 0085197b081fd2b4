"""A tournament driver for the Ray tests: ``python -m arena.testing.ray_driver``.

Runs in the head's network namespace (``NetnsCluster.netns_argv``): plays
stored tournament NAME of data directory DATA on the cluster at ADDRESS with
``RayExecutor`` and writes what the tests check as JSON to OUT: where each
job ran (its node, its place in its task's chain of matches, whether it was
prestarted), how many tasks played them, how many jobs were submitted again,
the run's summary, the CPUs the match tasks ran on (each a slot's,
``arena.tournament.execution.node_slots``). ``--max-chain`` caps the matches a task plays.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from arena.logs import configure
from arena.store import Store, get_tournament
from arena.tournament.execution.ray_executor import DEFAULT_MAX_CHAIN, RayExecutor
from arena.tournament.orchestration.runner import TournamentRunner


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path)
    parser.add_argument("name")
    parser.add_argument("address")
    parser.add_argument("out", type=Path)
    parser.add_argument("--unsafe", action="store_true")
    parser.add_argument("--max-chain", type=int, default=DEFAULT_MAX_CHAIN)
    args = parser.parse_args()
    configure(level="INFO", json=True)
    executor = RayExecutor(args.address, max_chain=args.max_chain)
    with Store.open(args.data) as store:
        tournament = get_tournament(store, args.name)
        summary = TournamentRunner(
            store, tournament.id, executor=executor, unsafe=args.unsafe
        ).run()
    executor.leave_cluster()
    args.out.write_text(json.dumps({
        "placements": [dataclasses.asdict(p) for p in executor.placements],
        "resubmitted": executor.resubmitted,
        "distrusted": executor.distrusted,
        "tasks": executor.tasks_launched,
        "games_recorded": summary.games_recorded,
        "games_discarded": summary.games_discarded,
        "failed_matches": {str(k): v for k, v in summary.failed_matches.items()},
        "finished": summary.finished,
        "worker_cpus": sorted({tuple(cpus) for cpus in summary.worker_cpus.values()}),
    }))  # fmt: skip
    return 0 if summary.finished else 1


if __name__ == "__main__":
    raise SystemExit(main())
