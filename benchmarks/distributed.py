"""Distributed tournaments: the driver's commit rate, and Ray against local.

    python3 benchmarks/distributed.py commit  [--games 2000] [--bots 8]
    python3 benchmarks/distributed.py verify  [--games 16] [--repeat 20]
    python3 benchmarks/distributed.py cluster [--games 4] [--bots 6] [--runs 2]
                                              [--nodes 2] [--no-confine]
                                              [--no-slot-pinning] [--no-live]
                                              [--max-chain 4] [--also-chain N]

`commit`: how many finished games per second the driver (the runner, the only
writer of the store) commits when they arrive all at once. A real executor
(``BurstExecutor``) hands the runner every game of every submitted job at
once, realistic reports (a random game's full record, ~130 actions); the
runner stores each with its rating update in its own transaction, as in any
tournament, with the live view and a progress callback on as `arena tournament
run` has them. Printed: games/s, and where the time goes (a profile of the
store path).

`verify`: how many games per second the driver checks before storing them
(``arena.tournament.execution.node_trust.check_game``: the deal and reshuffles from the
seed, a replay with the engine, the result against it), one thread, on the
reports of a real match of two sandboxed sample bots (python_greedy against
python_random, --games games) checked --repeat times each. Printed: games/s,
and the mean record size and action count.

`cluster` (root only: it makes network namespaces): the same round robin
(same bots, seeds and deals) on the local executor with --concurrency N and on
a Ray cluster of --nodes worker nodes of N/nodes CPUs each
(``arena.testing.ray_cluster``, a node per network namespace, the head without
the sandbox resource), alternating runs; games/s of each and their ratio.
Each worker node is confined to its own share of this machine's CPUs
(``taskset``: as if it were a machine of its own) unless --no-confine, which
lets every node's processes run on every CPU. Each run is a fresh driver
process, as `arena tournament run` is; games/s is counted from the driver's
start of work (before it imports Ray) to its last game stored, and again over
the whole process (its start to its exit, as the user waits). Printed beside each run: how busy the
machine was (/proc/stat), the driver's own CPU time, the arena's CPU time a
game (everything the benchmark starts but the bots, whose CPU is the same
either way: a cpuacct group; a figure the machine's other load barely
changes, unlike games/s); for Ray also the CPU time
of Ray's daemons (raylets, GCS, agents, monitors; not the workers that play
the matches), how many Ray worker processes and tasks played matches and how
many matches were prestarted (a task plays a chain of matches:
``RayExecutor``'s ``max_chain``, ``--max-chain``), and per match, apart for a
task's first match and the matches queued behind it, the time from submit to
its first game and from its last game to its end. ``--also-chain N`` adds Ray
runs with chains of at most N to the alternation (1: a task per match, no
chain), ``--also-no-prestart`` makes those without any prestart (no
half's bots launched while another half plays): an A/B on the same cluster and
load, where the slots have a CPU to spare (on one-CPU slots there is none either way).

Prints figures with the load average; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import queue
import resource
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
from arena.tournament.execution.executor import GameFinished, JobDone, JobEvent, MatchJob
from arena.tournament.orchestration.runner import ProgressEvent, TournamentRunner
from arena.tournament.policy.rounds import create_tournament

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
            self._events.put(JobDone(job.match_id, job.half, None))

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
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1800)
    exited = time.monotonic()
    if done.returncode != 0:
        raise RuntimeError(done.stdout[-3000:] + done.stderr[-3000:])
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_seconds"] = exited - started  # its start to its exit
    clock = result["clock"]  # the driver's moments on the same (system-wide) monotonic clock
    result["fixed"] = {
        "process start -> work begins": clock["began"] - started,
        "work begins -> first game stored": clock["first_game"] - clock["began"],
        "last game stored -> the run returns": clock["ran"] - clock["last_game"],
        "the run returns -> cluster left": clock["left"] - clock["ran"],
        "cluster left -> process exit": exited - clock["left"],
    }
    return result


def _busy() -> tuple[int, int]:
    """(non-idle, total) CPU ticks of the machine so far (/proc/stat)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return sum(values) - idle, sum(values)


_DAEMONS = (
    ("raylet", "raylet"), ("gcs_server", "gcs"), ("DashboardAgent", "dashboard agent"),
    ("RuntimeEnvAgent", "runtime env agent"), ("log_monitor.py", "log monitor"),
    ("monitor.py", "autoscaler monitor"), ("dashboard.py", "dashboard"),
)  # fmt: skip


_CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def _own_cpu_group() -> Path | None:
    """A cpuacct group (cgroup v1) holding this process and all it starts from now on (the
    drivers, the local workers, the Ray cluster; not the bots, which the sandbox moves
    into groups of their own): the arena's CPU time, whatever else the machine runs."""
    if not (_CPUACCT / "cpuacct.usage").exists():
        return None
    group = _CPUACCT / f"distributed-bench-{os.getpid()}"
    try:
        group.mkdir(exist_ok=True)
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return None
    return group


def _leave_cpu_group(group: Path | None) -> None:
    if group is not None:
        with contextlib.suppress(OSError):
            (_CPUACCT / "cgroup.procs").write_text(str(os.getpid()))
            group.rmdir()


def _group_cpu_s(group: Path | None) -> float:
    return 0.0 if group is None else int((group / "cpuacct.usage").read_text()) / 1e9


def _daemon_cpu(namespaces: Sequence[str]) -> dict[str, float]:
    """CPU seconds so far of Ray's daemons in ``namespaces``, by kind: every process there
    but Ray's workers (``ray::...``, they play the matches), sandboxes and the driver."""
    from arena.testing.ray_cluster import netns_pids

    tick = os.sysconf("SC_CLK_TCK")
    spent: dict[str, float] = {}
    for namespace in namespaces:
        for pid in netns_pids(namespace):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            agent = cmdline.startswith(("ray::DashboardAgent", "ray::RuntimeEnvAgent"))
            if (
                (cmdline.startswith("ray::") and not agent)
                or "bwrap" in cmdline.split(" ")[0]
                or "distributed.py" in cmdline
            ):
                continue
            kind = next((k for key, k in _DAEMONS if key in cmdline), "other: " + cmdline[:40])
            spent[kind] = spent.get(kind, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return spent


_STEPS = (
    ("submitted", "launched", "waiting in the driver for a free slot"),
    ("launched", "placed", "handed to Ray -> its task runs on a node"),
    ("placed", "first_game", "task runs -> first game over (bots launched, a game played)"),
    ("first_game", "last_game", "first -> last game over (both halves)"),
    ("last_game", "done", "last game -> the job's end"),
    ("done", "ended", "the job's end -> its task's end (bots closed)"),
)  # fmt: skip
"""A match's steps on Ray: (JobTiming field, JobTiming field, what lies between)."""


def _process_cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Stamped:
    """An executor that notes when each match's games and ends arrive (any executor)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.games: dict[int, list[float]] = {}
        self.done: dict[int, float] = {}
        self.worker_cpu = 0.0

    def submit(self, jobs: Sequence[MatchJob]) -> None:
        self.inner.submit(jobs)

    def next_event(self, timeout_s: float) -> JobEvent | None:
        event: JobEvent | None = self.inner.next_event(timeout_s)
        if isinstance(event, GameFinished):
            self.games.setdefault(event.match_id, []).append(time.monotonic())
        elif isinstance(event, JobDone):
            self.done[event.match_id] = time.monotonic()
        return event

    def cancel(self) -> None:
        self.inner.cancel()

    def close(self) -> None:
        """Note the CPU time of the worker processes (alive until now: this machine's)."""
        pids = getattr(self.inner, "pids", None) or {
            placed.pid for placed in getattr(self.inner, "placements", [])
        }
        self.worker_cpu = sum(_process_cpu_s(pid) for pid in pids)
        self.inner.close()

    def spans(self) -> dict[str, list[float]]:
        """Per match: its first game's arrival to its last's, over the games between."""
        per_game = [(t[-1] - t[0]) / (len(t) - 1) for t in self.games.values() if len(t) > 1]
        return {"game to game within a match": per_game}


def run_one(
    data: Path, name: str, games: int, seed: int, ray: str | None, cpus: int, live: bool,
    max_chain: int | None, prestart: bool = True,
) -> int:  # fmt: skip
    """One round robin of every stored bot in this (fresh) process; prints JSON."""
    from arena.store import list_bots

    with Store.open(data) as store:
        entrants = sorted(bot.name for bot in list_bots(store))
        config = TournamentConfig(games_per_match=games, seed=seed)
        t = create_tournament(store, name, "round_robin", entrants, config)
        executor: Any = None
        started = time.perf_counter()
        began = time.monotonic()
        if ray is not None:
            from arena.tournament.execution.ray_executor import RayExecutor

            chains = {} if max_chain is None else {"max_chain": max_chain}
            executor = RayExecutor(ray, **chains, prestart=prestart)
            joined = time.monotonic() - began
        else:
            from arena.tournament.execution.local_executor import LocalProcessExecutor

            executor = LocalProcessExecutor(cpus, pin_cpus=True)  # the runner's default
        stamped = _Stamped(executor)
        runner = TournamentRunner(store, t.id, concurrency=cpus, executor=stamped, live=live)
        summary = runner.run()
        elapsed = time.perf_counter() - started
        ran = time.monotonic()
        if ray is None:
            executor = None
        elif hasattr(executor, "leave_cluster"):  # done with Ray, as `arena tournament run` is
            executor.leave_cluster()
        left = time.monotonic()
    overheads: dict[str, list[float]] = {}
    placed = [] if executor is None else executor.placements
    chained = {p.match_id: p.chain > 0 for p in placed}  # queued behind another in its task
    prestarted = sum(p.prestarted for p in placed)
    if executor is not None:  # per match: from its first half's start to its last's end
        matches: dict[int, list[Any]] = {}
        for (match_id, _half), timing in sorted(executor.timings.items()):
            matches.setdefault(match_id, []).append(timing)
        for match_id, halves in matches.items():
            first, last = halves[0], halves[-1]
            kind = "chained" if chained.get(match_id) else "first"
            for start, end, step in _STEPS:
                begun = getattr(last if start in ("last_game", "done") else first, start)
                over = getattr(first if end in ("launched", "placed", "first_game") else last, end)
                if begun is not None and over is not None:
                    overheads.setdefault(f"{kind}|{step}", []).append(over - begun)
    workers = sorted({f"{p.node_ip}/{p.pid}" for p in placed})
    usage = resource.getrusage(resource.RUSAGE_SELF)
    arrivals = sorted(t for times in stamped.games.values() for t in times)
    first_games = [t - began for t in arrivals[:2]]  # each slot's first, about
    startup = {}
    if executor is not None:  # Ray: joined the cluster, first task handed to Ray, running
        timings = executor.timings.values()
        startup = {"joined": joined,
                   "launched": min(t.launched for t in timings if t.launched) - began,
                   "placed": min(t.placed for t in timings if t.placed) - began}  # fmt: skip
    print(json.dumps({"games": summary.games_recorded, "seconds": elapsed,
                      "first_games": first_games, "startup": startup,
                      "failed": len(summary.failed_matches), "overheads": overheads,
                      "driver_cpu": usage.ru_utime + usage.ru_stime,
                      "ray_workers": workers, "spans": stamped.spans(),
                      "worker_cpu": stamped.worker_cpu, "prestarted": prestarted,
                      "clock": {"began": began, "first_game": arrivals[0],
                                "last_game": arrivals[-1], "ran": ran, "left": left},
                      "tasks": getattr(executor, "tasks_launched", len(placed))}))  # fmt: skip
    return 0


def bench_cluster(
    games: int, bots: int, runs: int, cpus: int, nodes: int, confine: bool, slot_pinning: bool,
    live: bool, max_chain: int, also_chain: int | None, also_prestart: bool,
) -> int:  # fmt: skip
    from arena.testing.ray_cluster import NetnsCluster, ip_available
    from arena.tournament.execution.cpu_placement import cpu_groups, usable_cpus

    problem = ip_available()
    if problem:
        print(f"cluster: cannot make a namespaced cluster here: {problem}")
        return 1
    work = Path(tempfile.mkdtemp(prefix="kray-bench-"))
    per_node = max(1, cpus // nodes)
    shares = cpu_groups(usable_cpus()[:cpus], nodes)
    cpu_sets = [",".join(map(str, sorted(share))) for share in shares] if confine else None
    layout = f"{nodes} worker node(s) x {per_node} CPU" + (
        f" (CPUs {' | '.join(cpu_sets)})" if cpu_sets else " (not confined)"
    ) + ("" if slot_pinning else ", slots not pinned")
    node_env = {"PYTHONPATH": str(REPO)} | ({} if slot_pinning else {"KAHUNA_RAY_SLOTS": "0"})
    group = _own_cpu_group()
    try:
        data = _data_dir(work, bots)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        with NetnsCluster(
            work / "cluster", workers=({"kahuna_sandbox": per_node},) * nodes,
            worker_cpus=per_node, head_cpus=0, env=node_env, worker_cpu_sets=cpu_sets,
        ) as cluster:  # fmt: skip
            print(f"cluster up: {layout}, {_load()}")
            namespaces = [node.netns for node in cluster.nodes]
            also = f"ray-chain{also_chain}" + ("" if also_prestart else "-noprestart")
            kinds = ["local", "ray"] + ([] if also_chain is None else [also])
            rates: dict[str, list[float]] = {kind: [] for kind in kinds}
            cpu_per_game: dict[str, list[float]] = {kind: [] for kind in kinds}
            steady: dict[str, list[float]] = {kind: [] for kind in kinds}
            whole: dict[str, list[float]] = {kind: [] for kind in kinds}
            steps: dict[str, list[float]] = {}
            spans: dict[str, list[float]] = {kind: [] for kind in kinds}
            fixed: dict[str, dict[str, list[float]]] = {kind: {} for kind in kinds}
            for number in range(runs):
                for kind in kinds:
                    argv = [sys.executable, __file__, "_one", "--data", str(data),
                            "--name", f"{kind}{number}", "--games", str(games),
                            "--seed", str(number), "--cpus", str(cpus)]  # fmt: skip
                    argv += [] if live else ["--no-live"]
                    daemons = _daemon_cpu(namespaces)
                    busy = _busy()
                    arena_cpu = _group_cpu_s(group)
                    if kind.startswith("ray"):
                        chain = max_chain if kind == "ray" else also_chain
                        more = [] if kind == "ray" or also_prestart else ["--no-prestart"]
                        argv = cluster.netns_argv(cluster.head, [*argv, "--ray", cluster.address,
                                                                 "--max-chain", str(chain), *more])
                        result = _play(argv, cluster.node_env(cluster.head))
                        for step, values in result["overheads"].items():
                            if kind == "ray":
                                steps.setdefault(step, []).extend(values)
                    else:
                        result = _play(argv, env)
                    after = _busy()
                    spent = _daemon_cpu(namespaces)
                    arena_cpu = _group_cpu_s(group) - arena_cpu
                    spans[kind] += result["spans"]["game to game within a match"]
                    rate = result["games"] / result["seconds"]
                    rates[kind].append(rate)
                    whole[kind].append(result["games"] / result["process_seconds"])
                    if result["first_games"] and result["games"] > 1:  # start-up apart
                        rest = result["seconds"] - result["first_games"][0]
                        steady[kind].append((result["games"] - 1) / rest)
                    cpu_per_game[kind].append(1000 * arena_cpu / max(1, result["games"]))
                    print(
                        f"run {number} {kind:5}: {result['games']} games in"
                        f" {result['seconds']:.2f} s = {rate:.2f} games/s"
                        f" ({result['failed']} failed matches), machine busy"
                        f" {100 * (after[0] - busy[0]) / max(1, after[1] - busy[1]):.0f}%,"
                        f" driver CPU {result['driver_cpu']:.1f} s, {_load()}"
                    )
                    print(f"    the whole process, its start to its exit:"
                          f" {result['process_seconds']:.2f} s = {whole[kind][-1]:.2f} games/s")
                    for part, seconds in result["fixed"].items():
                        fixed[kind].setdefault(part, []).append(seconds)
                    print("    fixed costs: " + ", ".join(
                        f"{part} {seconds:.2f} s" for part, seconds in result["fixed"].items()))
                    print("    the first two games stored after the start: "
                          + ", ".join(f"{t:.2f}" for t in result["first_games"]) + " s"
                          + "".join(f"; {k} {v:.2f} s" for k, v in result["startup"].items()))
                    print(f"    the worker processes' CPU (referees, and Ray's in Ray's):"
                          f" {1000 * result['worker_cpu'] / max(1, result['games']):.0f}"
                          " ms a game")  # fmt: skip
                    if group is not None:
                        per_game = cpu_per_game[kind][-1]
                        print(f"    arena CPU (drivers, workers, referees, Ray; not the bots):"
                              f" {arena_cpu:.1f} s = {per_game:.0f} ms a game")  # fmt: skip
                    used = {k: v - daemons.get(k, 0.0) for k, v in spent.items()}
                    total = sum(used.values())
                    print(f"    Ray daemons' CPU during it: {total:.1f} s ("
                          + ", ".join(f"{k} {v:.1f}" for k, v in sorted(
                              used.items(), key=lambda kv: -kv[1]) if v >= 0.05)
                          + ")")  # fmt: skip
                    if kind.startswith("ray"):
                        print(f"    Ray worker processes that played matches:"
                              f" {len(result['ray_workers'])}; {result['tasks']} tasks for"
                              f" {bots * (bots - 1) // 2} matches,"
                              f" {result['prestarted']} prestarted")  # fmt: skip
            local, ray = statistics.mean(rates["local"]), statistics.mean(rates["ray"])
            print(f"local executor ({cpus} CPUs): {local:.2f} games/s; Ray ({layout},"
                  f" chains of up to {max_chain}): {ray:.2f} games/s; ratio"
                  f" {100 * ray / local:.1f}% (target >= 90%)")  # fmt: skip
            local_w, ray_w = statistics.mean(whole["local"]), statistics.mean(whole["ray"])
            print(f"whole processes (start to exit): local {local_w:.2f}, Ray {ray_w:.2f}"
                  f" games/s; ratio {100 * ray_w / local_w:.1f}%")  # fmt: skip
            if steady["local"] and steady["ray"]:
                local_s, ray_s = statistics.mean(steady["local"]), statistics.mean(steady["ray"])
                print(f"from the first stored game on (each run's start-up apart): local"
                      f" {local_s:.2f}, Ray {ray_s:.2f} games/s; ratio"
                      f" {100 * ray_s / local_s:.1f}%")  # fmt: skip
            print("the fixed costs of a run (median s over the runs):")
            for part in fixed["local"]:
                print(f"    {part}: " + ", ".join(
                    f"{kind} {statistics.median(fixed[kind][part]):.2f}" for kind in kinds))
            for kind in kinds[2:]:
                other = statistics.mean(rates[kind])
                print(f"{kind}: {other:.2f} games/s, {100 * other / local:.1f}% of local")
            if group is not None:
                local_cpu = statistics.mean(cpu_per_game["local"])
                ray_cpu = statistics.mean(cpu_per_game["ray"])
                print(f"arena CPU a game: local {local_cpu:.0f} ms, Ray {ray_cpu:.0f} ms"
                      f" ({ray_cpu / local_cpu:.2f}x)")  # fmt: skip
            print("within a match, one game's end to the next's (median ms): "
                  + ", ".join(f"{kind} {1000 * statistics.median(spans[kind]):.0f}"
                              for kind in kinds))  # fmt: skip
            for kind, what in (("first", "a task's first match"),
                               ("chained", "a match queued behind another in its task")):
                print(f"Ray, per match, {what} (median / min / max ms over every run):")
                for _s, _e, step in _STEPS:
                    values = steps.get(f"{kind}|{step}", [])
                    if values:
                        print(f"    {step}: {1000 * statistics.median(values):.0f} /"
                              f" {1000 * min(values):.0f} / {1000 * max(values):.0f}"
                              f" ({len(values)} matches)")  # fmt: skip
    finally:
        _leave_cpu_group(group)
        shutil.rmtree(work, ignore_errors=True)
    return 0


# ------------------------------------------------------------------ verify


def bench_verify(games: int, repeat: int) -> int:
    from arena.referee import MatchConfig, run_match
    from arena.tournament.execution.node_trust import check_game, deal_seeds

    config = MatchConfig(games=games, seed=3)
    job = MatchJob(1, config, load_bot(SAMPLES / "python_greedy"),
                   load_bot(SAMPLES / "python_random"))  # fmt: skip
    seeds = deal_seeds(config)
    reports = run_match(config, job.first, job.second).games
    for report in reports:
        check_game(job, seeds, report)  # each passes: the figure is of real checks
    rates = []
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(repeat):
            for report in reports:
                check_game(job, seeds, report)
        rates.append(repeat * len(reports) / (time.perf_counter() - started))
    size = statistics.mean(len(json.dumps(r.record)) for r in reports)
    actions = statistics.mean(r.actions for r in reports)
    print(f"verify: the driver checks {' / '.join(f'{r:.0f}' for r in rates)} games/s"
          f" (one thread; {len(reports)} real games x {repeat} each run; records of"
          f" ~{size / 1000:.1f} kB, {actions:.0f} actions); {_load()}")  # fmt: skip
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    commit = sub.add_parser("commit")
    commit.add_argument("--games", type=int, default=2000)
    commit.add_argument("--bots", type=int, default=8)
    commit.add_argument("--profile", action="store_true")
    commit.add_argument("--runs", type=int, default=2)
    verify = sub.add_parser("verify")
    verify.add_argument("--games", type=int, default=16)
    verify.add_argument("--repeat", type=int, default=20)
    cluster = sub.add_parser("cluster")
    cluster.add_argument("--games", type=int, default=4)
    cluster.add_argument("--bots", type=int, default=6)
    cluster.add_argument("--runs", type=int, default=2)
    cluster.add_argument("--cpus", type=int, default=2)
    cluster.add_argument("--nodes", type=int, default=2, help="worker nodes (default 2)")
    cluster.add_argument(
        "--no-confine", dest="confine", action="store_false",
        help="let every node run on every CPU (default: each node on its own share)",
    )  # fmt: skip
    cluster.add_argument(
        "--no-slot-pinning", dest="slot_pinning", action="store_false",
        help="KAHUNA_RAY_SLOTS=0 on the nodes: match tasks not pinned to their slots' CPUs",
    )  # fmt: skip
    cluster.add_argument(
        "--no-live", dest="live", action="store_false",
        help="tournaments without the live view (no live events from the matches)",
    )  # fmt: skip
    cluster.add_argument(
        "--max-chain", type=int, default=4,
        help="matches a Ray task plays at most in turn (RayExecutor's max_chain; default 4)",
    )  # fmt: skip
    cluster.add_argument(
        "--also-chain", type=int, metavar="N",
        help="also alternate Ray runs with chains of at most N (e.g. 1: a task per match)",
    )  # fmt: skip
    cluster.add_argument(
        "--also-no-prestart", dest="also_prestart", action="store_false",
        help="those runs without any prestart (each half's bots, the next match's too,"
        " launched when its turn comes)",
    )  # fmt: skip
    one = sub.add_parser("_one")
    one.add_argument("--data", type=Path, required=True)
    one.add_argument("--name", required=True)
    one.add_argument("--games", type=int, required=True)
    one.add_argument("--seed", type=int, required=True)
    one.add_argument("--cpus", type=int, required=True)
    one.add_argument("--ray")
    one.add_argument("--no-live", dest="live", action="store_false")
    one.add_argument("--max-chain", type=int)
    one.add_argument("--no-prestart", dest="prestart", action="store_false")
    args = parser.parse_args(argv)
    if args.what == "commit":
        return bench_commit(args.games, args.bots, args.profile, args.runs)
    if args.what == "verify":
        return bench_verify(args.games, args.repeat)
    if args.what == "cluster":
        return bench_cluster(
            args.games, args.bots, args.runs, args.cpus, args.nodes, args.confine,
            args.slot_pinning, args.live, args.max_chain, args.also_chain, args.also_prestart,
        )  # fmt: skip
    return run_one(
        args.data, args.name, args.games, args.seed, args.ray, args.cpus, args.live,
        args.max_chain, args.prestart,
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
