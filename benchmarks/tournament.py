"""Tournament benchmarks: Swiss pairing time, and round-robin games per second.

    python3 benchmarks/tournament.py pairing [--bots 1000 --rounds 9]
    python3 benchmarks/tournament.py games   [--games 4]

Prints figures; asserts nothing. Timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena.tournament.swiss import SwissEntrant, SwissRound, pair_swiss_round


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
FIELD = {"r1": "python_random", "r2": "python_random", "g1": "python_greedy", "g2": "python_greedy"}


def _copy_bot(root: Path, name: str, sample: str) -> Path:
    target = root / "src" / name
    shutil.copytree(SAMPLES / sample, target, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (target / "bot.toml").read_text().replace(f'name = "{sample}"', f'name = "{name}"')
    (target / "bot.toml").write_text(toml)
    return target


def bench_games(games_per_match: int, concurrency: int) -> int:
    """Round-robin games/s against twice the rate of one match run alone."""
    from arena.referee import MatchConfig, load_bot, run_match
    from arena.server.tournament_runner import TournamentRunner
    from arena.store import Store, TournamentConfig, add_bot_version, create_tournament

    with tempfile.TemporaryDirectory(prefix="kahuna-bench-") as work:
        root = Path(work)
        dirs = {name: _copy_bot(root, name, sample) for name, sample in FIELD.items()}
        run_match(
            MatchConfig(games=2, seed=2), load_bot(dirs["r1"]), load_bot(dirs["g1"])
        )  # warm-up
        started = time.perf_counter()
        run_match(
            MatchConfig(games=games_per_match, seed=3), load_bot(dirs["r1"]), load_bot(dirs["g1"])
        )
        single_s = time.perf_counter() - started
        single_rate = games_per_match / single_s
        print(
            f"single match: {games_per_match} games in {single_s:.2f} s = {single_rate:.2f} games/s"
        )
        with Store.open(root / "data") as store:
            for directory in dirs.values():
                add_bot_version(store, load_bot(directory))
            rates = {}
            for workers in sorted({1, concurrency}):
                config = TournamentConfig(games_per_match=games_per_match, seed=workers)
                t = create_tournament(store, f"rr{workers}", "round_robin", list(FIELD), config)
                started = time.perf_counter()
                summary = TournamentRunner(store, t.id, concurrency=workers).run()
                elapsed_s = time.perf_counter() - started
                rates[workers] = summary.games_recorded / elapsed_s
                games_played = summary.games_recorded
                print(
                    f"round robin, {len(FIELD)} bots, concurrency {workers}: "
                    f"{games_played} games in {elapsed_s:.2f} s = {rates[workers]:.2f} games/s"
                )
    for label, base in (("one match alone", single_rate), ("one match at a time", rates[1])):
        ratio = rates[concurrency] / (concurrency * base)
        print(
            f"concurrency {concurrency}: {100 * ratio:.0f}% of {concurrency} x the rate of {label}"
            " (target >= 80%)"
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
    args = parser.parse_args(argv)
    if args.what == "pairing":
        return bench_pairing(args.bots, args.rounds, args.seed)
    return bench_games(args.games, args.concurrency)


if __name__ == "__main__":
    sys.exit(main())
