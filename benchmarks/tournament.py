"""Tournament benchmarks: Swiss pairing time, and round-robin games per second.

    python3 benchmarks/tournament.py pairing [--bots 1000 --rounds 9]
    python3 benchmarks/tournament.py games   [--games 4]

Prints figures; asserts nothing. Timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

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
        print(
            f"round {number:2d}: {groups:3d} score groups, paired in {elapsed_s * 1000:7.1f} ms,"
            f" rematches {rematches}"
        )
        _simulate_round(scores, opponents, byes, rnd, rng, games=2)
    print(
        f"swiss pairing, {bot_count} bots: max {max(times_s):.3f} s,"
        f" median {statistics.median(times_s):.3f} s per round (target <= 2 s)"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    pairing = sub.add_parser("pairing", help="Swiss pairing time for a large field")
    pairing.add_argument("--bots", type=int, default=1000)
    pairing.add_argument("--rounds", type=int, default=9)
    pairing.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.what == "pairing":
        return bench_pairing(args.bots, args.rounds, args.seed)
    return 2


if __name__ == "__main__":
    sys.exit(main())
