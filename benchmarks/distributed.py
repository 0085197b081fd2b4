"""Distributed tournaments (issue 15): the driver's commit rate, and Ray against local.

    python3 benchmarks/distributed.py commit  [--games 2000] [--bots 8]
    python3 benchmarks/distributed.py cluster [--games 4] [--bots 6] [--runs 2]

`commit`: how many finished games per second the driver (the runner, the only
writer of the store) commits when they arrive all at once. A real executor
(``BurstExecutor``) hands the runner every game of every submitted job at
once, realistic reports (a random game's full record, ~130 actions); the
runner stores each with its rating update in its own transaction, as in any
tournament, with the live view and a progress callback on as `arena tournament
run` has them. Printed: games/s, and where the time goes (a profile of the
store path).

`cluster` (root only: it makes network namespaces): the same round robin
(same bots, seeds and deals) on the local executor with --concurrency N and on
a Ray cluster of two worker nodes of N/2 CPUs each (``arena.testing.ray_cluster``,
a node per network namespace, the head without the sandbox resource),
alternating runs; games/s of each and their ratio; Ray's per-match overhead
(submit to first game, last game to its job's end). Each run is a fresh
driver process, as `arena tournament run` is.

Prints figures with the load average; asserts nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

from arena.kahuna import play_random_game, record_to_json
from arena.referee import GameReport, load_bot
from arena.referee.types import BotStatus
from arena.store import Store, TournamentConfig, add_bot_version
from arena.tournament.executor import GameFinished, JobDone, JobEvent, MatchJob
from arena.tournament.rounds import create_tournament
from arena.tournament.runner import ProgressEvent, TournamentRunner

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_bots"


def _load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def _copy_bot(root: Path, name: str, sample: str) -> Path:
    target = root / "src" / name
    shutil.copytree(SAMPLES / sample, target, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (target / "bot.toml").read_text().replace(f'name = "{sample}"', f'name = "{name}"')
    (target / "bot.toml").write_text(toml)
    return target


def _field(bots: int) -> dict[str, str]:
    kinds = ("python_random", "python_greedy")
    return {f"{kinds[i % 2].split('_')[1][0]}{i // 2 + 1}": kinds[i % 2] for i in range(bots)}


def _data_dir(root: Path, bots: int) -> Path:
    data = root / "data"
    with Store.open(data) as store:
        for name, sample in _field(bots).items():
            add_bot_version(store, load_bot(_copy_bot(root, name, sample)))
    return data


# ------------------------------------------------------------------ commit


class BurstExecutor:
    """A ``MatchExecutor`` whose jobs finish at once: every game of every submitted job
    is ready the moment it is submitted (a cluster of many cores catching up)."""

    def __init__(self, records: Sequence[dict[str, object]], *, one_at_a_time: bool) -> None:
        self.records = records
        self.one_at_a_time = one_at_a_time  # one event per poll: one game per transaction
        self._events: queue.SimpleQueue[JobEvent] = queue.SimpleQueue()
        self._given = False

    def submit(self, jobs: Sequence[MatchJob]) -> None:
        for job in jobs:
            names = (job.first.name, job.second.name)
            for index in job.config.indices_to_play:
                seats = names if index % 2 == 0 else names[::-1]
                record = self.records[index % len(self.records)]
                result: Any = record["result"]
                winner = None if result["winner"] is None else seats[result["winner"]]
                report = GameReport(
                    index=index, bots_by_seat=seats, winner=winner, reason=result["reason"],
                    statuses=dict.fromkeys(names, BotStatus.OK),
                    actions=len(record["actions"]),  # type: ignore[arg-type]
                    time_ms=dict.fromkeys(names, 1000.0), record=record,
                )  # fmt: skip
                self._events.put(GameFinished(job.match_id, report))
            self._events.put(JobDone(job.match_id, job.part, None))

    def next_event(self, timeout_s: float) -> JobEvent | None:
        if self.one_at_a_time and timeout_s == 0:
            return None  # "nothing more waiting": the runner stores what it has
        try:
            return self._events.get_nowait()
        except queue.Empty:
            return None

    def cancel(self) -> None:
        pass

    def close(self) -> None:
        pass


def bench_commit(games: int, bots: int, profile: bool, runs: int) -> int:
    records = []
    for seed in range(20):
        records.append(record_to_json(play_random_game(seed)))
    size = statistics.mean(len(json.dumps(r)) for r in records)
    rates: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(runs):
        for one in (True, False):  # alternating
            rates[one].append(_commit_run(records, games, bots, profile and not one, one))
    for one in (True, False):
        label = "one game per transaction" if one else "the games waiting, per transaction"
        print(f"{label}: {' / '.join(f'{r:.0f}' for r in rates[one])} games/s")
    print(f"records of ~{size / 1000:.1f} kB; target >= 500 games/s; {_load()}")
    return 0


def _commit_run(
    records: list[dict[str, object]], games: int, bots: int, profile: bool, one: bool
) -> float:
    matches = bots * (bots - 1) // 2
    per_match = max(2, games // matches)
    with tempfile.TemporaryDirectory(prefix="kahuna-commit-") as work:
        data = _data_dir(Path(work), bots)
        with Store.open(data) as store:
            config = TournamentConfig(games_per_match=per_match)
            t = create_tournament(store, "burst", "round_robin", sorted(_field(bots)), config)
            seen: list[ProgressEvent] = []
            executor = BurstExecutor(records, one_at_a_time=one)
            runner = TournamentRunner(store, t.id, executor=executor, on_progress=seen.append)
            profiler = cProfile.Profile() if profile else None
            started = time.perf_counter()
            if profiler is not None:
                profiler.enable()
            summary = runner.run()
            if profiler is not None:
                profiler.disable()
            elapsed = time.perf_counter() - started
    rate = summary.games_recorded / elapsed
    print(
        f"commit ({'one per transaction' if one else 'batched'}): {summary.games_recorded}"
        f" games ({matches} matches) arriving at once stored in {elapsed:.2f} s ="
        f" {rate:.0f} games/s, {_load()}"
    )
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(18)
        print(out.getvalue())
    return rate


# ----------------------------------------------------------------- cluster


def _play(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(done.stdout[-3000:] + done.stderr[-3000:])
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run_one(data: Path, name: str, games: int, seed: int, ray: str | None, cpus: int) -> int:
    """One round robin of every stored bot in this (fresh) process; prints JSON."""
    from arena.store import list_bots

    with Store.open(data) as store:
        entrants = sorted(bot.name for bot in list_bots(store))
        config = TournamentConfig(games_per_match=games, seed=seed)
        t = create_tournament(store, name, "round_robin", entrants, config)
        executor: Any = None
        started = time.perf_counter()
        if ray is not None:
            from arena.tournament.ray_executor import RayExecutor

            executor = RayExecutor(ray)
        summary = TournamentRunner(store, t.id, concurrency=cpus, executor=executor).run()
        elapsed = time.perf_counter() - started
    overheads: dict[str, list[float]] = {"first": [], "last": []}
    if executor is not None:
        for timing in executor.timings.values():
            if timing.first_game is not None and timing.done is not None:
                overheads["first"].append(timing.first_game - timing.submitted)
                assert timing.last_game is not None
                overheads["last"].append(timing.done - timing.last_game)
    print(json.dumps({"games": summary.games_recorded, "seconds": elapsed,
                      "failed": len(summary.failed_matches), "overheads": overheads}))  # fmt: skip
    return 0


def bench_cluster(games: int, bots: int, runs: int, cpus: int) -> int:
    from arena.testing.ray_cluster import NetnsCluster, ip_available

    problem = ip_available()
    if problem:
        print(f"cluster: cannot make a namespaced cluster here: {problem}")
        return 1
    work = Path(tempfile.mkdtemp(prefix="kray-bench-"))
    per_node = max(1, cpus // 2)
    try:
        data = _data_dir(work, bots)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        with NetnsCluster(
            work / "cluster", workers=({"kahuna_sandbox": per_node},) * 2,
            worker_cpus=per_node, head_cpus=0, env={"PYTHONPATH": str(REPO)},
        ) as cluster:  # fmt: skip
            print(f"cluster up: 2 worker nodes x {per_node} CPU, {_load()}")
            rates: dict[str, list[float]] = {"local": [], "ray": []}
            firsts: list[float] = []
            lasts: list[float] = []
            for number in range(runs):
                for kind in ("local", "ray"):
                    argv = [sys.executable, __file__, "_one", "--data", str(data),
                            "--name", f"{kind}{number}", "--games", str(games),
                            "--seed", str(number), "--cpus", str(cpus)]  # fmt: skip
                    if kind == "ray":
                        argv = cluster.netns_argv(cluster.head, [*argv, "--ray", cluster.address])
                        result = _play(argv, cluster.node_env(cluster.head))
                        firsts += result["overheads"]["first"]
                        lasts += result["overheads"]["last"]
                    else:
                        result = _play(argv, env)
                    rate = result["games"] / result["seconds"]
                    rates[kind].append(rate)
                    print(
                        f"run {number} {kind:5}: {result['games']} games in"
                        f" {result['seconds']:.2f} s = {rate:.2f} games/s"
                        f" ({result['failed']} failed matches), {_load()}"
                    )
            local, ray = statistics.mean(rates["local"]), statistics.mean(rates["ray"])
            print(f"local executor ({cpus} CPUs): {local:.2f} games/s; Ray (2 nodes x"
                  f" {per_node} CPU): {ray:.2f} games/s; ratio {100 * ray / local:.0f}%"
                  " (target >= 90%)")  # fmt: skip
            if firsts:
                print(
                    f"Ray per match: submit to first game median"
                    f" {1000 * statistics.median(firsts):.0f} ms (includes queueing behind"
                    f" other matches: min {1000 * min(firsts):.0f} ms); last game to its end"
                    f" median {1000 * statistics.median(lasts):.0f} ms"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    commit = sub.add_parser("commit")
    commit.add_argument("--games", type=int, default=2000)
    commit.add_argument("--bots", type=int, default=8)
    commit.add_argument("--profile", action="store_true")
    commit.add_argument("--runs", type=int, default=2)
    cluster = sub.add_parser("cluster")
    cluster.add_argument("--games", type=int, default=4)
    cluster.add_argument("--bots", type=int, default=6)
    cluster.add_argument("--runs", type=int, default=2)
    cluster.add_argument("--cpus", type=int, default=2)
    one = sub.add_parser("_one")
    one.add_argument("--data", type=Path, required=True)
    one.add_argument("--name", required=True)
    one.add_argument("--games", type=int, required=True)
    one.add_argument("--seed", type=int, required=True)
    one.add_argument("--cpus", type=int, required=True)
    one.add_argument("--ray")
    args = parser.parse_args(argv)
    if args.what == "commit":
        return bench_commit(args.games, args.bots, args.profile, args.runs)
    if args.what == "cluster":
        return bench_cluster(args.games, args.bots, args.runs, args.cpus)
    return run_one(args.data, args.name, args.games, args.seed, args.ray, args.cpus)


if __name__ == "__main__":
    sys.exit(main())
