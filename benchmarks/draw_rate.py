"""Measure Kahuna's draw rate, the TrueSkill draw probability of arena.tournament.rating.ratings.

    python3 benchmarks/draw_rate.py [--games 20000] [--first-seed 0]

Plays seeded uniformly random games (arena.kahuna.play_random_game, seeds
first-seed .. first-seed+games-1, all variants off) and prints how many
ended in a draw (R7.5), with a 95% Wilson interval, plus the win rate of seat 0.
With ``--bot-games N`` it also plays N games (matches of 10) between the sample
bots (greedy against greedy, greedy against random) through the referee.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

from arena.kahuna import play_random_game


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = (
        z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    )
    return centre - half, centre + half


def bot_draws(games: int) -> None:
    """Draws between the sample bots, played for real (sandbox, referee)."""
    from pathlib import Path

    from arena.referee import MatchConfig, load_bot, run_match

    samples = Path(__file__).resolve().parents[1] / "sample_bots"
    greedy, rnd = load_bot(samples / "python_greedy"), load_bot(samples / "python_random")
    for label, pair in (("greedy-greedy", (greedy, greedy)), ("greedy-random", (greedy, rnd))):
        draws = played = 0
        for seed in range(max(1, games // 20)):
            report = run_match(MatchConfig(games=10, seed=seed), *pair)
            played += len(report.games)
            draws += sum(g.winner is None for g in report.games)
        low, high = wilson(draws, played)
        print(f"{label}: {draws} draws in {played} games (95% CI {low:.4f}..{high:.4f})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Kahuna draw rate over seeded random games")
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--bot-games", type=int, default=0, help="also play sample-bot games")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    winners: Counter[int | None] = Counter()
    reasons: Counter[str] = Counter()
    for seed in range(args.first_seed, args.first_seed + args.games):
        result = play_random_game(seed).result
        assert result is not None
        winners[result.winner] += 1
        reasons[str(result.termination)] += 1
    draws = winners[None]
    low, high = wilson(draws, args.games)
    print(
        f"random games: {args.games} (seeds {args.first_seed}..{args.first_seed + args.games - 1})"
        f" in {time.perf_counter() - started:.1f} s"
    )
    print(f"draws: {draws} = {draws / args.games:.4f} (95% CI {low:.4f}..{high:.4f})")
    print(f"seat 0 wins: {winners[0] / args.games:.4f}, seat 1 wins: {winners[1] / args.games:.4f}")
    print("terminations: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
    if args.bot_games:
        bot_draws(args.bot_games)
    return 0


if __name__ == "__main__":
    sys.exit(main())
