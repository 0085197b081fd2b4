"""How many games an SPRT or a fixed-width interval needs, from a pair-score distribution.

Pure: randomness comes from a seeded ``random.Random`` passed in. Used by
``benchmarks/pairing_variance.py`` to turn measured pentanomials into the
cost of a test with and without paired deals:

* ``pair_probabilities``: the measured distribution of bot A's pair score
  (0, 0.5, 1, 1.5, 2 points), with fishtest's regularization of zero counts;
* ``independent_pairs``: the pair-score distribution when the two games of a
  pair are independent draws from one per-game (trinomial) distribution,
  which is what unpaired deals give;
* ``simulate_sprt`` / ``sprt_length``: the pentanomial GSPRT of
  ``arena.tournament.statistics.sprt`` run on pairs drawn from such a distribution,
  until it decides or reaches a cap;
* ``pairs_for_half_width``: pairs needed for a 95% interval of the score of
  a given half-width, from the variance of one pair's score (scaled to [0, 1]).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from arena.tournament.statistics.sprt import Decision, SprtParams, sprt_state
from arena.tournament.statistics.stats import Z95, Pentanomial, Trinomial


def _normalized(weights: Sequence[float]) -> tuple[float, ...]:
    total = sum(weights)
    return tuple(w / total for w in weights)


def pair_probabilities(penta: Pentanomial) -> tuple[float, ...]:
    """The five pair-score probabilities of measured counts (zero counts as 1e-3)."""
    return _normalized(penta.regularized())


def independent_pairs(tri: Trinomial) -> tuple[float, ...]:
    """Pair-score probabilities of two independent games with tri's loss/draw/win rates."""
    loss, draw, win = _normalized(tri.regularized())
    return (
        loss * loss,
        2 * loss * draw,
        draw * draw + 2 * loss * win,
        2 * draw * win,
        win * win,
    )


def pair_variance(probs: Sequence[float]) -> float:
    """Variance of one pair's score scaled to [0, 1] (points / 2)."""
    if len(probs) != 5 or any(p < 0 for p in probs) or abs(sum(probs) - 1.0) > 1e-9:
        raise ValueError(f"a pair-score distribution is 5 probabilities summing to 1: {probs}")
    mean = sum(p * i / 4 for i, p in enumerate(probs))
    return sum(p * (i / 4 - mean) ** 2 for i, p in enumerate(probs))


def pairs_for_half_width(variance: float, half_width: float) -> float:
    """Pairs for a 95% score interval of this half-width: (z sigma / h)^2."""
    if not half_width > 0.0:
        raise ValueError(f"an interval half-width must be > 0, got {half_width}")
    if variance < 0.0:
        raise ValueError(f"a variance is >= 0, got {variance}")
    return (Z95 * Z95 * variance) / (half_width * half_width)


@dataclass(frozen=True)
class SprtRun:
    pairs: int
    decision: Decision


def simulate_sprt(
    probs: Sequence[float], params: SprtParams, rng: random.Random, *, max_pairs: int
) -> SprtRun:
    """One SPRT on pairs drawn from ``probs``; stops at a decision or after ``max_pairs``."""
    pair_variance(probs)  # validates
    if max_pairs < 1:
        raise ValueError(f"max_pairs must be >= 1, got {max_pairs}")
    counts = [0, 0, 0, 0, 0]
    outcomes = range(5)
    for pairs in range(1, max_pairs + 1):
        counts[rng.choices(outcomes, weights=probs)[0]] += 1
        state = sprt_state(
            Pentanomial((counts[0], counts[1], counts[2], counts[3], counts[4])), params
        )
        if state.decision is not Decision.CONTINUE:
            return SprtRun(pairs, state.decision)
    return SprtRun(max_pairs, Decision.CONTINUE)


@dataclass(frozen=True)
class SprtLength:
    """What ``runs`` simulated tests did: mean pairs played and how they ended."""

    runs: int
    mean_pairs: float
    h1: int
    h0: int
    inconclusive: int

    @property
    def mean_games(self) -> float:
        return 2.0 * self.mean_pairs


def sprt_length(
    probs: Sequence[float], params: SprtParams, *, runs: int, seed: int, max_pairs: int
) -> SprtLength:
    """Average length of ``runs`` simulated SPRTs (seeded: the same figures every time)."""
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    rng = random.Random(seed)
    done = [simulate_sprt(probs, params, rng, max_pairs=max_pairs) for _ in range(runs)]
    return SprtLength(
        runs=runs,
        mean_pairs=sum(run.pairs for run in done) / runs,
        h1=sum(run.decision is Decision.H1 for run in done),
        h0=sum(run.decision is Decision.H0 for run in done),
        inconclusive=sum(run.decision is Decision.CONTINUE for run in done),
    )
