"""Tournament benchmarks: Swiss pairing time, and round-robin games per second.

    python3 benchmarks/tournament.py pairing [--bots 1000 --rounds 9]
    python3 benchmarks/tournament.py games   [--games 8] [--bots 10] [--concurrency 2]

`games` compares a round robin at --concurrency with the same round robin (same
bots, games and deals) at concurrency 1, and with one match played alone by
run_match (random vs greedy, no store, no workers). Each round robin runs in a
fresh process, as `arena tournament run` does. The default field (10 bots, 45
matches, 360 games) is a tournament; with 4 bots (48 games, ~3 s) starting the
workers and the last match running alone weigh in more.

Prints figures; asserts nothing. Timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

from arena.tournament.pairing.swiss import SwissEntrant, SwissRound, pair_swiss_round


def _simulate_round(
    scores: dict[str, float],
    opponents: dict[str, set[str]],
    byes: set[str],
    rnd: SwissRound,
    rng: random.Random,
    games: int,
) -> None:
    for p in rnd.pairings:
        opponents[p.first].add(p.second)
        opponents[p.second].add(p.first)
        first_points = rng.choice([0.0, 0.5, 1.0, 1.0, 1.5, 2.0][: games * 2 + 1])
        scores[p.first] += first_points
        scores[p.second] += games - first_points
    if rnd.bye is not None:
        byes.add(rnd.bye)
        scores[rnd.bye] += games


def bench_pairing(bot_count: int, rounds: int, seed: int) -> int:
    """Pair every round of a simulated Swiss tournament; print the time of each."""
    rng = random.Random(seed)
    bots = [f"bot{i:05d}" for i in range(bot_count)]
    strength = {b: rng.gauss(0, 1) for b in bots}
    scores = dict.fromkeys(bots, 0.0)
    opponents: dict[str, set[str]] = {b: set() for b in bots}
    byes: set[str] = set()
    times_s: list[float] = []
    for number in range(1, rounds + 1):
        order = sorted(bots, key=lambda b: (-scores[b], -strength[b]))
        entrants = [SwissEntrant(b, scores[b], frozenset(opponents[b]), b in byes) for b in order]
        started = time.perf_counter()
        rnd = pair_swiss_round(entrants)
        elapsed_s = time.perf_counter() - started
        times_s.append(elapsed_s)
        groups = len({e.score for e in entrants})
        rematches = sum(p.second in opponents[p.first] for p in rnd.pairings)
        levels = sorted({e.score for e in entrants}, reverse=True)
        group = {e.bot: levels.index(e.score) for e in entrants}
        far = sum(abs(group[p.first] - group[p.second]) > 1 for p in rnd.pairings)
        print(
            f"round {number:2d}: {groups:3d} score groups, paired in {elapsed_s * 1000:7.1f} ms,"
            f" rematches {rematches}, pairs beyond the next group {far}"
        )
        _simulate_round(scores, opponents, byes, rnd, rng, games=2)
    print(
        f"swiss pairing, {bot_count} bots: max {max(times_s):.3f} s,"
        f" median {statistics.median(times_s):.3f} s per round (target <= 2 s)"
    )
    return 0


SAMPLES = Path(__file__).resolve().parents[1] / "sample_bots"


def _field(bots: int) -> dict[str, str]:
    """``bots`` entrants, alternately copies of python_random and python_greedy."""
    kinds = ("python_random", "python_greedy")
    return {f"{kinds[i % 2].split('_')[1][0]}{i // 2 + 1}": kinds[i % 2] for i in range(bots)}


def _copy_bot(root: Path, name: str, sample: str) -> Path:
    target = root / "src" / name
    shutil.copytree(SAMPLES / sample, target, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (target / "bot.toml").read_text().replace(f'name = "{sample}"', f'name = "{name}"')
    (target / "bot.toml").write_text(toml)
    return target


def _busy_cores() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far, from /proc/stat."""
    fields = [float(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields) - idle) / ticks, sum(fields) / ticks


def run_round_robin(data: Path, name: str, workers: int, pin: bool, games: int, seed: int) -> int:
    """One round robin of every stored bot, timed in this (fresh) process; prints JSON.

    Each measured tournament runs in a process of its own, as `arena tournament
    run` does, so each pays for starting its workers (the forkserver) once.
    """
    from arena.store import Store, TournamentConfig, list_bots
    from arena.tournament.orchestration.runner import TournamentRunner
    from arena.tournament.policy.rounds import create_tournament

    with Store.open(data) as store:
        entrants = sorted(bot.name for bot in list_bots(store))
        config = TournamentConfig(games_per_match=games, seed=seed)
        t = create_tournament(store, name, "round_robin", entrants, config)
        busy0, total0 = _busy_cores()
        cpu0 = time.process_time()
        started = time.perf_counter()
        summary = TournamentRunner(store, t.id, concurrency=workers, pin_cpus=pin).run()
        elapsed_s = time.perf_counter() - started
        cpu_s = time.process_time() - cpu0
        busy1, total1 = _busy_cores()
    busy = (busy1 - busy0) / (total1 - total0)
    failed = {str(match): error for match, error in summary.failed_matches.items()}
    print(json.dumps({"games": summary.games_recorded, "seconds": elapsed_s, "busy": busy,
                      "runner_cpu_s": cpu_s, "failed": failed}))  # fmt: skip
    return 0


def _timed_round_robin(
    data: Path, name: str, workers: int, pin: bool, games: int, seed: int
) -> dict[str, Any]:
    command = [
        sys.executable, __file__, "_round-robin", "--data", str(data), "--name", name,
        "--concurrency", str(workers), "--games", str(games), "--seed", str(seed),
    ]  # fmt: skip
    if not pin:
        command.append("--no-pin")
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    failed = result.pop("failed")
    for match, error in failed.items():
        print(f"  match {match} failed: {error}")
    if failed:
        print("  its log ends:", *done.stderr.strip().splitlines()[-15:], sep="\n    ")
    return result


def bench_games(games_per_match: int, concurrency: int, bots: int) -> int:
    """Round-robin games/s against twice the rate of one match run alone."""
    from arena.referee import MatchConfig, load_bot, run_match
    from arena.store import Store, add_bot_version

    field = _field(bots)
    with tempfile.TemporaryDirectory(prefix="kahuna-bench-") as work:
        root = Path(work)
        dirs = {name: _copy_bot(root, name, sample) for name, sample in field.items()}
        first, second = load_bot(dirs["r1"]), load_bot(dirs["g1"])
        run_match(MatchConfig(games=2, seed=2), first, second)  # warm-up
        single_rates = []
        for seed in (3, 4, 5, 6):
            started = time.perf_counter()
            run_match(MatchConfig(games=games_per_match, seed=seed), first, second)
            single_rates.append(games_per_match / (time.perf_counter() - started))
        single_rate = statistics.mean(single_rates)
        print(
            f"single match (random vs greedy, {games_per_match} games, alone):"
            f" {' / '.join(f'{r:.2f}' for r in single_rates)} games/s, mean {single_rate:.2f}"
        )
        data = root / "data"
        with Store.open(data) as store:
            for directory in dirs.values():
                add_bot_version(store, load_bot(directory))
        rates: dict[tuple[int, bool], float] = {}
        runs = [(1, False), (concurrency, True), (concurrency, False)]
        for number, (workers, pin) in enumerate(runs):
            result = _timed_round_robin(data, f"rr{number}", workers, pin, games_per_match, number)
            rates[workers, pin] = result["games"] / result["seconds"]
            print(
                f"round robin, {len(field)} bots, concurrency {workers}"
                f"{', pinned' if pin and workers > 1 else ''}: {result['games']:.0f} games"
                f" in {result['seconds']:.2f} s = {rates[workers, pin]:.2f} games/s,"
                f" machine busy {100 * result['busy']:.0f}%"
            )
    for pin in (True, False):
        rate = rates[concurrency, pin]
        label = "pinned" if pin else "not pinned"
        for base_label, base in (
            ("one match alone", single_rate),
            ("concurrency 1", rates[1, False]),
        ):
            print(
                f"concurrency {concurrency} {label}: {100 * rate / (concurrency * base):.0f}%"
                f" of {concurrency} x the rate of {base_label} (target >= 80%)"
            )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    pairing = sub.add_parser("pairing", help="Swiss pairing time for a large field")
    pairing.add_argument("--bots", type=int, default=1000)
    pairing.add_argument("--rounds", type=int, default=9)
    pairing.add_argument("--seed", type=int, default=1)
    games = sub.add_parser("games", help="round-robin games/s of the sample bots")
    games.add_argument("--games", type=int, default=8, help="games per match")
    games.add_argument("--concurrency", type=int, default=2)
    games.add_argument("--bots", type=int, default=10, help="round-robin entrants (r/g copies)")
    once = sub.add_parser("_round-robin", help=argparse.SUPPRESS)  # one timed run, for `games`
    once.add_argument("--data", type=Path, required=True)
    once.add_argument("--name", required=True)
    once.add_argument("--concurrency", type=int, required=True)
    once.add_argument("--games", type=int, required=True)
    once.add_argument("--seed", type=int, required=True)
    once.add_argument("--no-pin", action="store_true")
    args = parser.parse_args(argv)
    if args.what == "pairing":
        return bench_pairing(args.bots, args.rounds, args.seed)
    if args.what == "_round-robin":
        return run_round_robin(
            args.data, args.name, args.concurrency, not args.no_pin, args.games, args.seed
        )
    return bench_games(args.games, args.concurrency, args.bots)


if __name__ == "__main__":
    sys.exit(main())
