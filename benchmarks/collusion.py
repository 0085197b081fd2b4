"""Measure how long `arena ladder collusion`'s report takes on a synthetic history.

    python3 benchmarks/collusion.py [--bots 40] [--games 20000] [--seed 1]

Draws ``--games`` games between random pairs of ``--bots`` bots whose true
strengths are normal on the Bradley-Terry log10 scale (no collusion), runs
``arena.tournament.policy.collusion.collusion_report`` on them and prints the pairs
tested, the seconds it took and how many honest pairs it flagged (about
alpha of them are expected by chance).
"""

from __future__ import annotations

import argparse
import random
import time

from arena.store import ResultRow
from arena.tournament.policy.collusion import ALPHA, collusion_report


def history(bots: int, games: int, seed: int) -> list[ResultRow]:
    rng = random.Random(seed)
    names = [f"b{i}" for i in range(bots)]
    strength = {name: rng.gauss(0, 1) for name in names}
    rows = []
    for game_id in range(1, games + 1):
        a, b = rng.sample(names, 2)
        p = 1 / (1 + 10 ** (strength[b] - strength[a]))
        rows.append(ResultRow(game_id, 1, (a, b), (a, b), 0 if rng.random() < p else 1))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=40)
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rows = history(args.bots, args.games, args.seed)
    started = time.perf_counter()
    report = collusion_report(rows)
    took = time.perf_counter() - started
    flagged = sum(e.flagged for e in report)
    print(f"{args.games} games, {args.bots} bots: {len(report)} pairs tested in {took:.2f} s;"
          f" {flagged} honest pairs flagged at alpha {ALPHA:g}")  # fmt: skip


if __name__ == "__main__":
    main()
