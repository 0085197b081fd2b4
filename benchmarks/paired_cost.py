"""What fresh processes for each half of a paired match cost, measured.

    python3 benchmarks/paired_cost.py [--repeats 3] [--bots 4] [--games 2 8]
                                      [--concurrency 1 2] [--match-games 8]
                                      [--baseline-tree DIR]

Each bot gets separate processes for the two halves of the deal pairs
(``arena.referee.halves``), so that no process plays both games of a deal. This
compares, in alternating runs (before, after, before, after, ...), games/s of:

* a round robin (``TournamentRunner``, each run in a fresh process as `arena
  tournament run` does; copies of python_random and python_greedy) at each
  ``--games`` per match and ``--concurrency``, in three modes:
  ``before`` one run per match (one process per bot per match: no protection,
  the floor), ``halves`` a job per half with no prestart (what the halves cost
  alone), ``after`` the halves played in turn by one worker, the second half's
  processes launched while the first half plays (``play_in_turn``);
* `arena match`'s own path (``--match-games`` games, random vs greedy, in this
  process): ``before`` ``run_match`` (one process per bot), ``after``
  ``run_halves`` (the two halves at once, each with its own processes).

``--baseline-tree DIR``: ``before`` runs another checkout's code (e.g. a worktree
of main): the round robins and the match path then each run in a fresh process,
``PYTHONPATH=DIR`` for ``before`` and this checkout for the others, so that the
loss is measured against one process per bot per match with that checkout's
launch cost (cheaper launches are a win of their own: the target is the loss
against that checkout).

Prints each run and, per setting, the median games/s of each mode and the loss
of ``after`` against ``before`` (the target: under 10%). Asserts nothing.
Timings on a shared machine are noisy: the load is printed with the figures.
Where the host allows (root, cgroup v1), each timed run also gets a cpuacct
group of its own, and the CPU milliseconds per game of all its processes, bots
included, are printed: a figure the machine's load hardly moves, which gives
the loss when every CPU is busy (concurrency = CPUs): 1 - before/after.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

from tournament import _copy_bot, _field

MODES = ("before", "halves", "after")


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


CPUACCT = Path("/sys/fs/cgroup/cpuacct")


class _Accounting:
    """The CPU of this process and of all it starts, bots included, from a cgroup v1
    cpuacct group of its own (``--cpuacct DIR``, made by the parent): a bot's cpuacct
    group is made inside its launcher's own group (``arena.sandbox.cgroups``), and a
    group's usage counts its children's. Without one, no figure (None)."""

    def __init__(self, group: Path | None) -> None:
        self.usage = None if group is None else group / "cpuacct.usage"
        if group is not None:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    def cpu_s(self) -> float | None:
        return None if self.usage is None else int(self.usage.read_text()) / 1e9


def _cpuacct_group(number: int) -> Path | None:
    """A fresh cpuacct group for one timed run, where the host allows (root, cgroup v1)."""
    if os.geteuid() != 0 or not (CPUACCT / "cgroup.procs").exists():
        return None
    group = CPUACCT / f"kahuna-bench-{os.getpid()}-{number}"
    group.mkdir()
    return group


def _remove_group(group: Path | None) -> None:
    """rmdir ``group`` once the run's last process (its forkserver) is gone."""
    deadline = time.monotonic() + 5.0
    while group is not None and group.exists():
        try:
            group.rmdir()
        except OSError:
            if time.monotonic() > deadline:
                print(f"  cgroup {group} left behind")
                return
            time.sleep(0.05)


def run_once(data: Path, name: str, mode: str, workers: int, games: int,
             cpuacct: Path | None) -> int:  # fmt: skip
    """One timed round robin in this (fresh) process, in ``mode``; prints JSON."""
    accounting = _Accounting(cpuacct)  # first: the workers and bots are counted too
    from arena.store import Store, TournamentConfig, list_bots
    from arena.tournament.execution import local_executor
    from arena.tournament.orchestration import runner
    from arena.tournament.policy.rounds import create_tournament

    if mode == "before":  # the unprotected baseline: every match is one run
        runner.half_configs = lambda config, remote=False: (config,)  # type: ignore[assignment]
    elif mode == "halves":  # a job of its own per half, no prestart
        local_executor._by_match = lambda jobs: [(job,) for job in jobs]  # type: ignore[assignment]
    with Store.open(data) as store:
        entrants = sorted(bot.name for bot in list_bots(store))
        config = TournamentConfig(games_per_match=games, seed=1)
        t = create_tournament(store, name, "round_robin", entrants, config)
        started, cpu_s = time.perf_counter(), accounting.cpu_s()
        summary = runner.TournamentRunner(store, t.id, concurrency=workers, pin_cpus=True).run()
        elapsed, cpu_after = time.perf_counter() - started, accounting.cpu_s()
    failed = {str(match): error for match, error in summary.failed_matches.items()}
    cpu = None if cpu_s is None or cpu_after is None else cpu_after - cpu_s
    print(json.dumps({"games": summary.games_recorded, "seconds": elapsed, "failed": failed,
                      "cpu_s": cpu}))  # fmt: skip
    return 0


def match_once(bots: list[Path], mode: str, games: int, seed: int, cpuacct: Path | None) -> int:
    """One timed `arena match` path (warmed up first) in this (fresh) process; prints JSON."""
    accounting = _Accounting(cpuacct)
    from arena.referee import MatchConfig, load_bot, run_match
    from arena.referee.halves import run_halves

    first, second = load_bot(bots[0]), load_bot(bots[1])
    run_match(MatchConfig(games=2), first, second)  # warm-up: the compiled trees, imports
    play = run_match if mode == "before" else _as_arena_match(run_halves)
    started, cpu_s = time.perf_counter(), accounting.cpu_s()
    play(MatchConfig(games=games, seed=seed), first, second)
    elapsed, cpu_after = time.perf_counter() - started, accounting.cpu_s()
    cpu = None if cpu_s is None or cpu_after is None else cpu_after - cpu_s
    print(json.dumps({"games": games, "seconds": elapsed, "failed": {}, "cpu_s": cpu}))
    return 0


CHECKOUT = Path(__file__).resolve().parent.parent


def _as_arena_match(run_halves: Any) -> Any:
    """``run_halves`` with the prestart `arena match` decides on this machine's CPUs."""
    from arena.referee.prestart import decide_prestart
    from arena.tournament.execution.cpu_placement import usable_cpus

    return functools.partial(run_halves, prestart=decide_prestart(cpus=len(usable_cpus())))


def _tree(mode: str, baseline: Path | None) -> Path:
    """The code a timed run uses: the baseline's for ``before`` if there is one."""
    return baseline if baseline is not None and mode == "before" else CHECKOUT


Timed = tuple[float, float]
"""(games/s, CPU ms per game: every process of the run, bots included; nan if unknown)."""
_runs = itertools.count(1)


def _run_json(command: list[str], tree: Path) -> Timed:
    group = _cpuacct_group(next(_runs))
    if group is not None:
        command = [*command, "--cpuacct", str(group)]
    # run from the tree too: the workers' forkserver puts its working directory first on
    # its sys.path (``python -c``), before PYTHONPATH
    env = {**os.environ, "PYTHONPATH": str(tree)}
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=True, env=env,
                              cwd=tree)  # fmt: skip
    finally:
        _remove_group(group)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if result["failed"]:
        print(f"  failed matches: {result['failed']}")
    cpu_s = result.get("cpu_s")
    games = max(1, result["games"])
    return result["games"] / result["seconds"], math.nan if cpu_s is None else cpu_s * 1000 / games


_MAKE_STORE = """
import sys
from pathlib import Path
from arena.referee import load_bot
from arena.store import Store, add_bot_version
with Store.open(Path(sys.argv[1])) as store:
    for directory in sys.argv[2:]:
        add_bot_version(store, load_bot(Path(directory)))
"""


def _make_store(data: Path, bots: list[Path], tree: Path) -> None:
    """A store holding ``bots``, made by the code at ``tree`` (its schema)."""
    subprocess.run([sys.executable, "-c", _MAKE_STORE, str(data), *map(str, bots)],
                   check=True, env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree)  # fmt: skip


def _timed(data: Path, name: str, mode: str, workers: int, games: int,
           baseline: Path | None) -> Timed:  # fmt: skip
    command = [sys.executable, __file__, "_once", "--data", str(data), "--name", name,
               "--mode", mode, "--concurrency", str(workers), "--games", str(games)]  # fmt: skip
    return _run_json(command, _tree(mode, baseline))


def _timed_match(bots: list[Path], mode: str, games: int, seed: int, baseline: Path) -> Timed:
    command = [sys.executable, __file__, "_match", "--mode", mode, "--games", str(games),
               "--seed", str(seed), *map(str, bots)]  # fmt: skip
    return _run_json(command, _tree(mode, baseline))


def _report(
    label: str, rates: dict[str, list[float]], cpu: dict[str, list[float]] | None = None
) -> None:
    medians = {mode: statistics.median(values) for mode, values in rates.items()}
    parts = [f"{mode} {medians[mode]:.2f}" for mode in rates]
    loss = 100 * (1 - medians["after"] / medians["before"])
    print(f"== {label}: median games/s {', '.join(parts)}; after loses {loss:.1f}% (target < 10%)")
    if cpu and all(values and not any(map(math.isnan, values)) for values in cpu.values()):
        per_game = {mode: statistics.median(values) for mode, values in cpu.items()}
        shown = ", ".join(f"{mode} {value:.0f}" for mode, value in per_game.items())
        cpu_loss = 100 * (1 - per_game["before"] / per_game["after"])
        print(f"   CPU ms per game (all processes, bots included): {shown}; with every CPU"
              f" busy, after loses {cpu_loss:.1f}%")  # fmt: skip


def bench(repeats: int, bots: int, games: list[int], concurrency: list[int],
          match_games: int, baseline: Path | None) -> int:  # fmt: skip
    from arena.referee import MatchConfig, load_bot, run_match
    from arena.referee.halves import run_halves

    print(f"load before: {_load()} (1, 5, 15 min), {os.cpu_count()} CPUs")
    if baseline is not None:
        print(f"before: the code at {baseline}; halves, after: {CHECKOUT}")
    with tempfile.TemporaryDirectory(prefix="kahuna-bench-") as work:
        root = Path(work)
        dirs = {name: _copy_bot(root, name, sample) for name, sample in _field(bots).items()}
        first, second = load_bot(dirs["r1"]), load_bot(dirs["g1"])
        run_match(MatchConfig(games=2), first, second)  # warm-up
        match_rates: dict[str, list[float]] = {"before": [], "after": []}
        match_cpu: dict[str, list[float]] = {"before": [], "after": []}
        for repeat in range(repeats):
            for mode in ("before", "after"):
                if baseline is not None:  # each in a fresh process, with its code
                    pair = [dirs["r1"], dirs["g1"]]
                    rate, cpu = _timed_match(pair, mode, match_games, repeat, baseline)
                    match_rates[mode].append(rate)
                    match_cpu[mode].append(cpu)
                    print(f"arena match path, {match_games} games, {mode}: {rate:.2f} games/s,"
                          f" {cpu:.0f} CPU ms/game")  # fmt: skip
                    continue
                config = MatchConfig(games=match_games, seed=repeat)
                play = run_match if mode == "before" else _as_arena_match(run_halves)
                started = time.perf_counter()
                play(config, first, second)
                rate = match_games / (time.perf_counter() - started)
                match_rates[mode].append(rate)
                print(f"arena match path, {match_games} games, {mode}: {rate:.2f} games/s")
        _report(f"arena match, {match_games} games", match_rates, match_cpu)
        # a store per tree, made by that tree's code: an older arena refuses a newer schema
        stores: dict[Path, Path] = {}
        for mode in MODES:
            tree = _tree(mode, baseline)
            if tree not in stores:
                stores[tree] = root / f"data-{len(stores)}"
                _make_store(stores[tree], list(dirs.values()), tree)
        number = 0
        for per_match in games:
            for workers in concurrency:
                rates: dict[str, list[float]] = {mode: [] for mode in MODES}
                cpus: dict[str, list[float]] = {mode: [] for mode in MODES}
                for _ in range(repeats):
                    for mode in MODES:
                        number += 1
                        data = stores[_tree(mode, baseline)]
                        rate, cpu = _timed(data, f"rr{number}", mode, workers, per_match,
                                           baseline)  # fmt: skip
                        rates[mode].append(rate)
                        cpus[mode].append(cpu)
                        print(f"round robin, {bots} bots, {per_match} games/match, concurrency"
                              f" {workers}, {mode}: {rate:.2f} games/s, {cpu:.0f} CPU ms/game,"
                              f" load {_load().split()[0]}")  # fmt: skip
                _report(f"round robin, {per_match} games/match, concurrency {workers}", rates,
                        cpus)  # fmt: skip
    print(f"load after: {_load()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what")
    once = sub.add_parser("_once", help=argparse.SUPPRESS)  # one timed round robin
    once.add_argument("--data", type=Path, required=True)
    once.add_argument("--name", required=True)
    once.add_argument("--mode", choices=MODES, required=True)
    once.add_argument("--concurrency", type=int, required=True)
    once.add_argument("--games", type=int, required=True)
    match = sub.add_parser("_match", help=argparse.SUPPRESS)  # one timed match path
    match.add_argument("--mode", choices=("before", "after"), required=True)
    match.add_argument("--games", type=int, required=True)
    match.add_argument("--seed", type=int, required=True)
    match.add_argument("bots", type=Path, nargs=2)
    for command in (once, match):
        command.add_argument("--cpuacct", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs per mode")
    parser.add_argument("--bots", type=int, default=4, help="round-robin entrants (r/g copies)")
    parser.add_argument("--games", type=int, nargs="+", default=[2, 8], help="games per match")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--match-games", type=int, default=8, help="games of the match path")
    parser.add_argument(
        "--baseline-tree",
        type=Path,
        default=None,
        help="a checkout whose code plays `before` (e.g. main before a change)",
    )
    args = parser.parse_args(argv)
    if args.what == "_once":
        return run_once(args.data, args.name, args.mode, args.concurrency, args.games,
                        args.cpuacct)  # fmt: skip
    if args.what == "_match":
        return match_once(args.bots, args.mode, args.games, args.seed, args.cpuacct)
    baseline = None if args.baseline_tree is None else args.baseline_tree.resolve()
    return bench(args.repeats, args.bots, args.games, args.concurrency, args.match_games,
                 baseline)  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
