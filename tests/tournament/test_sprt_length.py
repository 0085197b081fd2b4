"""SPRT length and interval cost from pair-score distributions
(arena.tournament.statistics.sprt_length)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.tournament.statistics.sprt import Decision, EloModel, SprtParams
from arena.tournament.statistics.sprt_length import (
    independent_pairs,
    pair_probabilities,
    pair_variance,
    pairs_for_half_width,
    simulate_sprt,
    sprt_length,
)
from arena.tournament.statistics.stats import Pentanomial, Trinomial, trinomial_summary

LOGISTIC = SprtParams(elo0=0.0, elo1=50.0, model=EloModel.LOGISTIC)


def test_independent_pairs_hand_worked() -> None:
    # loss 1/4, draw 1/2, win 1/4: LL 1/16, LD+DL 1/4, DD+WL+LW 1/4+1/8, WD+DW 1/4, WW 1/16
    probs = independent_pairs(Trinomial(1, 2, 1))
    assert probs == pytest.approx((1 / 16, 1 / 4, 3 / 8, 1 / 4, 1 / 16), abs=1e-15)


def test_pair_probabilities_regularize_zero_counts() -> None:
    probs = pair_probabilities(Pentanomial((0, 0, 1, 0, 1)))
    assert probs == pytest.approx((1e-3 / 2.003, 1e-3 / 2.003, 1 / 2.003, 1e-3 / 2.003, 1 / 2.003))


@given(st.tuples(*(st.integers(1, 1000),) * 3))
def test_independent_games_halve_the_game_variance(counts: tuple[int, int, int]) -> None:
    tri = Trinomial(*counts)
    per_game = trinomial_summary(tri).variance
    assert pair_variance(independent_pairs(tri)) == pytest.approx(per_game / 2, rel=1e-9)


def test_pair_variance_hand_worked() -> None:
    # half LL, half WW: scores 0 and 1, variance 1/4; all DD: 0
    assert pair_variance((0.5, 0, 0, 0, 0.5)) == pytest.approx(0.25)
    assert pair_variance((0, 0, 1, 0, 0)) == 0.0


@pytest.mark.parametrize(
    ("variance", "half_width", "pairs"),
    [
        (0.25, 0.1, 1.959963984540054**2 * 25),
        (0.0, 0.1, 0.0),
        (0.01, 0.01, 1.959963984540054**2 * 100),
    ],
)
def test_pairs_for_half_width(variance: float, half_width: float, pairs: float) -> None:
    assert pairs_for_half_width(variance, half_width) == pytest.approx(pairs)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pairs_for_half_width(0.1, 0.0), "half-width must be > 0"),
        (lambda: pairs_for_half_width(-0.1, 0.1), "variance is >= 0"),
        (lambda: pair_variance((0.5, 0.5)), "5 probabilities"),
        (lambda: pair_variance((0.5, 0.5, 0.5, 0, 0)), "summing to 1"),
        (
            lambda: simulate_sprt((0, 0, 1, 0, 0), LOGISTIC, random.Random(0), max_pairs=0),
            "max_pairs",
        ),
        (lambda: sprt_length((0, 0, 1, 0, 0), LOGISTIC, runs=0, seed=0, max_pairs=5), "runs"),
    ],
)
def test_bad_input_names_the_problem(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


def test_clear_superiority_and_inferiority_decide() -> None:
    win = simulate_sprt((0, 0, 0.1, 0.2, 0.7), LOGISTIC, random.Random(1), max_pairs=10_000)
    loss = simulate_sprt((0.7, 0.2, 0.1, 0, 0), LOGISTIC, random.Random(1), max_pairs=10_000)
    assert win.decision is Decision.H1 and loss.decision is Decision.H0
    assert win.pairs < 50 and loss.pairs < 50


def test_cap_gives_inconclusive() -> None:
    run = simulate_sprt((0.25, 0, 0.5, 0, 0.25), LOGISTIC, random.Random(3), max_pairs=3)
    assert run == type(run)(3, Decision.CONTINUE)


@pytest.mark.slow  # long: a simulation or many generated cases
def test_length_is_seeded_and_counts_every_run() -> None:
    probs = (0.1, 0.15, 0.4, 0.2, 0.15)
    first = sprt_length(probs, LOGISTIC, runs=40, seed=7, max_pairs=5_000)
    assert first == sprt_length(probs, LOGISTIC, runs=40, seed=7, max_pairs=5_000)
    assert first.h0 + first.h1 + first.inconclusive == 40
    assert first.mean_games == 2 * first.mean_pairs


@pytest.mark.slow  # long: a simulation or many generated cases
def test_lower_pair_variance_means_a_shorter_test() -> None:
    # the same mean score (0.575 per game, +52.5 logistic Elo), the pair variance lower
    # when pairs are correlated: mass moved from the extremes to the middle.
    spread = (0.15, 0.15, 0.2, 0.25, 0.25)
    tight = (0.0, 0.1, 0.5, 0.4, 0.0)
    means = [sum(p * i / 4 for i, p in enumerate(probs)) for probs in (spread, tight)]
    assert means[0] == pytest.approx(means[1])
    assert pair_variance(tight) < pair_variance(spread) / 2
    params = SprtParams(elo0=0.0, elo1=50.0, model=EloModel.LOGISTIC)
    long_run = sprt_length(spread, params, runs=200, seed=1, max_pairs=20_000)
    short_run = sprt_length(tight, params, runs=200, seed=1, max_pairs=20_000)
    assert short_run.mean_pairs < 0.7 * long_run.mean_pairs
    # near elo1 the test mostly accepts H1 (beta = 0.05, plus sampling error)
    assert short_run.h1 >= 150 and long_run.h1 >= 120
    assert math.isfinite(long_run.mean_pairs)
