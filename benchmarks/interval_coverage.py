"""How often the shown 95% score interval holds the true score, by simulation.

For 5, 10, 20 and 50 deal pairs and every cell of a grid of true per-game win
and draw rates (steps of --step, plus rates near 0 and 1), it draws --runs
pentanomials and counts how often ``arena.tournament.statistics.stats.score_interval``
holds the true score. Pairs are independent; within a pair the two games are
independent draws from (win, draw, loss), except that with probability
``seat`` (0 and 0.5 are both simulated) the seat decides the pair (one game
won from each side: a pair score of exactly 1), which is what pairing is
for, and with probability ``deal`` (0, 0.5 and 1) the deal decides it for one
bot whichever seat it plays (both games won, both drawn or both lost: the
pair is one game counted twice), the hardest case for an interval over pairs.
fishtest's normal interval (``Summary.score``) is simulated beside it
for comparison. Prints, per number of pairs, the lowest coverage over the
grid and its cell, the mean coverage and the mean width.

    python3 benchmarks/interval_coverage.py [--runs 2000] [--step 0.1] [--seed 1]
        [--pairs 5 10 20 50] [--deal-only]
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from functools import cache

from arena.tournament.statistics.stats import Pentanomial, pentanomial_summary, score_interval

PAIRS = (5, 10, 20, 50)
MODELS = ((0.0, 0.0), (0.5, 0.0), (0.0, 0.5), (0.0, 1.0))
"""(seat-decided share, deal-decided share) of the pairs."""
TARGET = 0.93


def pair_probabilities(
    win: float, draw: float, seat: float, deal: float = 0.0
) -> tuple[float, ...]:
    """P(pair score = 0, 0.5, 1, 1.5, 2 points) for bot A."""
    loss = max(0.0, 1.0 - win - draw)
    game = (loss, draw, win)
    pair = [0.0] * 5
    for a in range(3):
        for b in range(3):
            pair[a + b] += game[a] * game[b] * (1 - seat - deal)
        pair[2 * a] += game[a] * deal
    pair[2] += seat
    return tuple(pair)


@cache
def shown(counts: tuple[int, int, int, int, int]) -> tuple[float, float] | None:
    interval = score_interval(Pentanomial(counts))
    return None if interval is None else (interval.low, interval.high)


@cache
def normal(counts: tuple[int, int, int, int, int]) -> tuple[float, float]:
    score = pentanomial_summary(Pentanomial(counts)).score.interval
    return score.low, score.high


def grid(step: float) -> list[tuple[float, float]]:
    steps = round(1 / step)
    rates = sorted({i * step for i in range(steps + 1)} | {0.02, 0.98})
    return [(w, d) for w in rates for d in rates if w + d <= 1 + 1e-9]


def coverage(n: int, win: float, draw: float, seat: float, deal: float, runs: int,
             rng: random.Random) -> tuple[float | None, float, float]:  # fmt: skip
    """(shown coverage, or None if it never gives an interval; normal coverage; mean width)."""
    probs = pair_probabilities(win, draw, seat, deal)
    truth = sum(p * i / 4 for i, p in enumerate(probs))
    held = given = normal_held = 0
    width = 0.0
    for _ in range(runs):
        drawn = Counter(rng.choices(range(5), weights=probs, k=n))
        counts = (drawn[0], drawn[1], drawn[2], drawn[3], drawn[4])
        low_high = shown(counts)
        if low_high is not None:
            given += 1
            held += low_high[0] - 1e-12 <= truth <= low_high[1] + 1e-12
            width += low_high[1] - low_high[0]
        low, high = normal(counts)
        normal_held += low - 1e-12 <= truth <= high + 1e-12
    return (held / given if given else None), normal_held / runs, width / max(given, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2000, help="pentanomials per cell")
    parser.add_argument("--step", type=float, default=0.1, help="grid step of the rates")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pairs", type=int, nargs="+", default=list(PAIRS),
                        help="numbers of deal pairs to simulate")  # fmt: skip
    parser.add_argument("--deal-only", action="store_true",
                        help="only the deal-decided model (e=1): the hardest case")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    models = [(0.0, 1.0)] if args.deal_only else MODELS
    cells = [(w, d, s, e) for w, d in grid(args.step) for s, e in models]
    print(f"{len(cells)} cells (win, draw, seat- and deal-decided shares), {args.runs} runs each;"
          f" target >= {TARGET:.0%} wherever an interval is given")  # fmt: skip
    print("pairs  shown: min coverage (cell)                    mean   width  cells<93%"
          "   fishtest normal: min (cell)")  # fmt: skip
    for n in args.pairs:
        rows = [(coverage(n, w, d, s, e, args.runs, rng), (w, d, s, e)) for w, d, s, e in cells]
        given = [(c[0], cell, c[2]) for c, cell in rows if c[0] is not None]
        if not given:
            print(f"{n:5d}  too few pairs: no interval")
            continue
        low, cell, _ = min(given, key=lambda g: (g[0], g[1]))
        mean = sum(g[0] for g in given) / len(given)
        width = sum(g[2] for g in given) / len(given)
        below = sum(g[0] < TARGET for g in given)
        n_low, n_cell = min((c[1], cell) for c, cell in rows)
        print(f"{n:5d}  {low:6.1%} ({_cell(cell)})   {mean:6.1%}  {width:5.3f}  {below:5d}"
              f"       {n_low:6.1%} ({_cell(n_cell)})")


def _cell(cell: tuple[float, float, float, float]) -> str:
    win, draw, seat, deal = cell
    return f"w={win:.2f} d={draw:.2f} s={seat:.1f} e={deal:.1f}"


if __name__ == "__main__":
    main()
