"""What fresh processes for each half of a paired match cost (issue 9), measured.

    python3 benchmarks/paired_cost.py [--repeats 3] [--bots 4] [--games 2 8]
                                      [--concurrency 1 2] [--match-games 8]

Issue 9 gives each bot separate processes for the two halves of the deal pairs
(``arena.referee.halves``), so that no process plays both games of a deal. This
compares, in alternating runs (before, after, before, after, ...), games/s of:

* a round robin (``TournamentRunner``, each run in a fresh process as `arena
  tournament run` does; copies of python_random and python_greedy) at each
  ``--games`` per match and ``--concurrency``, in three modes:
  ``before`` one run per match (one process per bot per match: the unprotected
  baseline), ``halves`` a job per half with no prestart (what the fix cost
  first), ``after`` the halves played in turn by one worker, the second half's
  processes launched while the first half plays (``play_in_turn``);
* `arena match`'s own path (``--match-games`` games, random vs greedy, in this
  process): ``before`` ``run_match`` (one process per bot), ``after``
  ``run_halves`` (the two halves at once, each with its own processes).

Prints each run and, per setting, the median games/s of each mode and the loss
of ``after`` against ``before`` (the target: under 10%). Asserts nothing.
Timings on a shared machine are noisy: the load is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
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


def run_once(data: Path, name: str, mode: str, workers: int, games: int) -> int:
    """One timed round robin in this (fresh) process, in ``mode``; prints JSON."""
    from arena.store import Store, TournamentConfig, list_bots
    from arena.tournament import local_executor, runner
    from arena.tournament.rounds import create_tournament

    if mode == "before":  # the unprotected baseline: every match is one run
        runner.half_configs = lambda config, remote=False: (config,)  # type: ignore[assignment]
    elif mode == "halves":  # a job of its own per half, no prestart
        local_executor._by_match = lambda jobs: [(job,) for job in jobs]  # type: ignore[assignment]
    with Store.open(data) as store:
        entrants = sorted(bot.name for bot in list_bots(store))
        config = TournamentConfig(games_per_match=games, seed=1)
        t = create_tournament(store, name, "round_robin", entrants, config)
        started = time.perf_counter()
        summary = runner.TournamentRunner(store, t.id, concurrency=workers, pin_cpus=True).run()
        elapsed = time.perf_counter() - started
    failed = {str(match): error for match, error in summary.failed_matches.items()}
    print(json.dumps({"games": summary.games_recorded, "seconds": elapsed, "failed": failed}))
    return 0


def _timed(data: Path, name: str, mode: str, workers: int, games: int) -> float:
    command = [sys.executable, __file__, "_once", "--data", str(data), "--name", name,
               "--mode", mode, "--concurrency", str(workers), "--games", str(games)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if result["failed"]:
        print(f"  failed matches: {result['failed']}")
    rate: float = result["games"] / result["seconds"]
    return rate


def _report(label: str, rates: dict[str, list[float]]) -> None:
    medians = {mode: statistics.median(values) for mode, values in rates.items()}
    parts = [f"{mode} {medians[mode]:.2f}" for mode in rates]
    loss = 100 * (1 - medians["after"] / medians["before"])
    print(f"== {label}: median games/s {', '.join(parts)}; after loses {loss:.1f}% (target < 10%)")


def bench(repeats: int, bots: int, games: list[int], concurrency: list[int],
          match_games: int) -> int:  # fmt: skip
    from arena.referee import MatchConfig, load_bot, run_match
    from arena.referee.halves import run_halves
    from arena.store import Store, add_bot_version

    print(f"load before: {_load()} (1, 5, 15 min), {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="kahuna-bench-") as work:
        root = Path(work)
        dirs = {name: _copy_bot(root, name, sample) for name, sample in _field(bots).items()}
        first, second = load_bot(dirs["r1"]), load_bot(dirs["g1"])
        run_match(MatchConfig(games=2), first, second)  # warm-up
        match_rates: dict[str, list[float]] = {"before": [], "after": []}
        for repeat in range(repeats):
            for mode in ("before", "after"):
                config = MatchConfig(games=match_games, seed=repeat)
                play = run_match if mode == "before" else run_halves
                started = time.perf_counter()
                play(config, first, second)
                rate = match_games / (time.perf_counter() - started)
                match_rates[mode].append(rate)
                print(f"arena match path, {match_games} games, {mode}: {rate:.2f} games/s")
        _report(f"arena match, {match_games} games", match_rates)
        data = root / "data"
        with Store.open(data) as store:
            for directory in dirs.values():
                add_bot_version(store, load_bot(directory))
        number = 0
        for per_match in games:
            for workers in concurrency:
                rates: dict[str, list[float]] = {mode: [] for mode in MODES}
                for _ in range(repeats):
                    for mode in MODES:
                        number += 1
                        rate = _timed(data, f"rr{number}", mode, workers, per_match)
                        rates[mode].append(rate)
                        print(f"round robin, {bots} bots, {per_match} games/match, concurrency"
                              f" {workers}, {mode}: {rate:.2f} games/s")  # fmt: skip
                _report(f"round robin, {per_match} games/match, concurrency {workers}", rates)
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
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs per mode")
    parser.add_argument("--bots", type=int, default=4, help="round-robin entrants (r/g copies)")
    parser.add_argument("--games", type=int, nargs="+", default=[2, 8], help="games per match")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--match-games", type=int, default=8, help="games of the match path")
    args = parser.parse_args(argv)
    if args.what == "_once":
        return run_once(args.data, args.name, args.mode, args.concurrency, args.games)
    return bench(args.repeats, args.bots, args.games, args.concurrency, args.match_games)


if __name__ == "__main__":
    raise SystemExit(main())
