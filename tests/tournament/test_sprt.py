"""The pentanomial GSPRT against an independent maximisation, and by simulation."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.testing.examples import examples
from arena.tournament.statistics.sprt import (
    ELO_LIMITS,
    GAIN,
    NON_REGRESSION,
    PRESETS,
    Decision,
    EloModel,
    SprtParams,
    llr,
    sprt_state,
)
from arena.tournament.statistics.stats import Pentanomial

VALUES = (0.0, 0.25, 0.5, 0.75, 1.0)
NT = 800 / math.log(10)


def solve(h: list[list[float]], g: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (small dense systems)."""
    n = len(g)
    m = [[*row, g[i]] for i, row in enumerate(h)]
    for c in range(n):
        pivot = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[pivot] = m[pivot], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def max_loglik(phat: list[float], rows: list[list[float]], target: list[float]) -> float:
    """max sum phat_i log p_i subject to sum_i rows[k][i] p_i = target[k] (rows[0] = ones).

    By convex duality: p_i = phat_i / (lam . r_i) where lam minimises the dual
    lam . target - sum phat_i log(lam . r_i); damped Newton on lam. -inf if the
    constraints cannot be met by a positive distribution (the dual runs away).
    """
    k, n = len(rows), len(phat)
    lam = [1.0] + [0.0] * (k - 1)

    def dots(lm: list[float]) -> list[float]:
        return [sum(lm[j] * rows[j][i] for j in range(k)) for i in range(n)]

    def dual(lm: list[float]) -> float:
        d = dots(lm)
        if min(d) <= 0:
            return math.inf
        return sum(lm[j] * target[j] for j in range(k)) - sum(
            p * math.log(x) for p, x in zip(phat, d, strict=True)
        )

    for _ in range(60):  # Newton converges in far fewer when the constraints can be met
        d = dots(lam)
        p = [ph / x for ph, x in zip(phat, d, strict=True)]
        grad = [target[j] - sum(rows[j][i] * p[i] for i in range(n)) for j in range(k)]
        if max(abs(x) for x in grad) < 1e-14:
            break
        hess = [
            [sum(phat[i] * rows[a][i] * rows[b][i] / d[i] ** 2 for i in range(n)) for b in range(k)]
            for a in range(k)
        ]
        step = solve(hess, grad)
        t, here = 1.0, dual(lam)
        while t > 1e-20:
            new = [lam[j] - t * step[j] for j in range(k)]
            if dual(new) <= here:
                break
            t /= 2
        else:
            break  # no descent left at float precision: judged by the gradient below
        lam = new
        if max(abs(x) for x in lam) > 1e12:
            return -math.inf
    d = dots(lam)
    p = [ph / x for ph, x in zip(phat, d, strict=True)]
    grad = [target[j] - sum(rows[j][i] * p[i] for i in range(n)) for j in range(k)]
    if max(abs(x) for x in grad) > 1e-10:
        return -math.inf  # the constraints cannot be met: no feasible distribution
    return sum(ph * math.log(q) for ph, q in zip(phat, p, strict=True))


def loglik_mean(phat: list[float], s: float) -> float:
    return max_loglik(phat, [[1.0] * 5, list(VALUES)], [1.0, s])


def loglik_t(phat: list[float], t: float) -> float:
    """Profile over the mean m: with m fixed, (m - 1/2)/sigma = t is linear in p."""
    if t == 0:
        return loglik_mean(phat, 0.5)
    squares = [v * v for v in VALUES]

    def at(m: float) -> float:
        if (m - 0.5) * t <= 0:
            return -math.inf
        try:
            return max_loglik(
                phat, [[1.0] * 5, list(VALUES), squares], [1.0, m, m * m + ((m - 0.5) / t) ** 2]
            )
        except (ZeroDivisionError, OverflowError, ValueError):
            return -math.inf  # far outside the feasible means: the Newton system degenerates

    # sigma <= 1/2 on [0, 1], so |m - 1/2| <= |t| / 2: scan that range, then zoom in
    # around the best point (a grid, not a line search: infeasible means give -inf)
    reach = math.copysign(min(0.5, abs(t) / 2), t)
    lo, hi = sorted((0.5, 0.5 + reach))
    best = -math.inf
    for points in (201, *[11] * 16):
        grid = [lo + (hi - lo) * i / (points - 1) for i in range(points)]
        values = [at(m) for m in grid]
        i = max(range(points), key=lambda j: values[j])
        best = max(best, values[i])
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, points - 1)]
    return best


def independent_llr(counts: tuple[int, ...], params: SprtParams) -> float:
    reg = [float(c) if c else 1e-3 for c in counts]
    n = sum(reg)
    phat = [c / n for c in reg]
    if params.model is EloModel.LOGISTIC:
        s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (params.elo0, params.elo1))
        return n * (loglik_mean(phat, s1) - loglik_mean(phat, s0))
    t0, t1 = (math.sqrt(2) * e / NT for e in (params.elo0, params.elo1))
    return n * (loglik_t(phat, t1) - loglik_t(phat, t0))


CASES = [
    ((461, 7604, 17562, 7920, 453), 0.0, 2.0),
    ((461, 7604, 17562, 7920, 453), -1.75, 0.25),
    ((30, 120, 260, 140, 50), 0.0, 10.0),
    ((0, 3, 40, 5, 0), -5.0, 5.0),
    ((5, 1, 2, 1, 9), 10.0, 40.0),
    ((1200, 900, 700, 800, 1500), 0.0, 5.0),
]
CASE_IDS = ["fishtest-34k-gain", "fishtest-34k-nonreg", "small", "zeros", "tiny", "wide"]


@pytest.mark.slow  # long: a simulation or many generated cases
@pytest.mark.parametrize("model", list(EloModel), ids=[m.value for m in EloModel])
@pytest.mark.parametrize(("counts", "elo0", "elo1"), CASES, ids=CASE_IDS)
def test_llr_equals_an_independent_constrained_maximisation(
    counts: tuple[int, int, int, int, int], elo0: float, elo1: float, model: EloModel
) -> None:
    params = SprtParams(elo0, elo1, model=model)
    assert llr(Pentanomial(counts), params) == pytest.approx(
        independent_llr(counts, params), abs=1e-6
    )


@pytest.mark.parametrize("model", list(EloModel), ids=[m.value for m in EloModel])
def test_llr_is_largest_when_h1_is_the_observed_elo(model: EloModel) -> None:
    # The H1 likelihood is maximal when H1's constraint is what the data show (then the
    # H1 MLE is the empirical distribution itself): moving elo1 either way lowers the LLR.
    penta = Pentanomial((10, 20, 40, 20, 30))
    mean = (20 * 0.25 + 40 * 0.5 + 20 * 0.75 + 30) / 120  # 7/12, by hand
    var = (10 * mean**2 + 20 * (0.25 - mean) ** 2 + 40 * (0.5 - mean) ** 2
           + 20 * (0.75 - mean) ** 2 + 30 * (1 - mean) ** 2) / 120  # fmt: skip
    if model is EloModel.LOGISTIC:
        observed = 400 * math.log10(mean / (1 - mean))  # 400 log10(1.4) = 58.45
    else:
        observed = (mean - 0.5) / math.sqrt(2 * var) * NT
    peak = llr(penta, SprtParams(0.0, observed, model=model))
    assert peak > 0
    for other in (observed - 5, observed - 0.1, observed + 0.1, observed + 5):
        assert llr(penta, SprtParams(0.0, other, model=model)) < peak


def test_bounds_and_presets() -> None:
    p = SprtParams(0, 5, alpha=0.05, beta=0.1)
    assert p.lower_bound == pytest.approx(math.log(0.1 / 0.95))
    assert p.upper_bound == pytest.approx(math.log(0.9 / 0.05))
    # fishtest's non-regression [-1.75, 0.25] and gain [0, 2] bounds, x 20 (README)
    assert (NON_REGRESSION.elo0, NON_REGRESSION.elo1) == (-35.0, 5.0)
    assert (GAIN.elo0, GAIN.elo1) == (0.0, 40.0)
    assert NON_REGRESSION.model is GAIN.model is EloModel.NORMALIZED
    assert PRESETS == {"nonreg": NON_REGRESSION, "gain": GAIN}


@pytest.mark.parametrize(
    ("counts", "decision"),
    [
        ((0, 10, 100, 400, 300), Decision.H1),
        ((300, 400, 100, 10, 0), Decision.H0),
        ((10, 10, 10, 10, 10), Decision.CONTINUE),
    ],
    ids=["strong-a", "strong-b", "undecided"],
)
def test_decisions(counts: tuple[int, int, int, int, int], decision: Decision) -> None:
    state = sprt_state(Pentanomial(counts), GAIN)
    assert state.decision is decision
    assert (state.lower_bound, state.upper_bound) == (GAIN.lower_bound, GAIN.upper_bound)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"elo0": 5, "elo1": 0},
        {"elo0": 0, "elo1": 5, "alpha": 0},
        {"elo0": 0, "elo1": 5, "beta": 1.2},
        {"elo0": 0, "elo1": 5, "alpha": 0.6, "beta": 0.5},
        {"elo0": 0, "elo1": math.inf},
        {"elo0": 0, "elo1": 201},
        {"elo0": -1001, "elo1": 0, "model": EloModel.LOGISTIC},
    ],
    ids=["reversed", "alpha-zero", "beta-above-1", "alpha-plus-beta", "infinite",
         "normalized-beyond-200", "logistic-beyond-1000"],
)  # fmt: skip
def test_bad_parameters_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        SprtParams(**kwargs)  # type: ignore[arg-type]


@pytest.mark.slow  # long: a simulation or many generated cases
@settings(max_examples=examples(300), deadline=None)
@given(
    counts=st.tuples(*[st.sampled_from([0, 1, 2, 7, 100, 10_000, 10**6])] * 5).filter(any),
    model=st.sampled_from(list(EloModel)),
    sign=st.sampled_from([1, -1]),
    width=st.sampled_from([0.5, 5.0, 50.0]),
)
def test_llr_exists_for_any_counts_at_the_bound_limits(
    counts: tuple[int, int, int, int, int], model: EloModel, sign: int, width: float
) -> None:
    """Bounds the parameters accept never make ``llr`` fail in the middle of a test
    (an earlier SPRT format stopped on a ValueError with a large normalized bound)."""
    limit = ELO_LIMITS[model]
    low, high = sorted((sign * limit, sign * (limit - width)))
    value = llr(Pentanomial(counts), SprtParams(low, high, model=model))
    assert math.isfinite(value)


def test_the_normalized_limit_has_a_reason() -> None:
    """Control: just past the normalized limit's reason (t = 0.94 per pair, 231.7 nElo)
    the LLR does fail for some counts, so the limit is not arbitrary."""
    past = SprtParams(0.0, 1.0, model=EloModel.NORMALIZED)
    object.__setattr__(past, "elo0", 239.0)  # past the check, as a store edited by hand
    object.__setattr__(past, "elo1", 240.0)
    with pytest.raises(ValueError, match="outside what the outcomes allow"):
        llr(Pentanomial((0, 10, 1, 10000, 100)), past)


# --- operating characteristics by simulation --------------------------------------------

BASE = (0.05, 0.2, 0.5, 0.2, 0.05)


def tilted(target: float, statistic: str) -> list[float]:
    """BASE exponentially tilted until its mean (or t-value per pair) is the target."""

    def dist(theta: float) -> list[float]:
        w = [b * math.exp(theta * v) for b, v in zip(BASE, VALUES, strict=True)]
        return [x / sum(w) for x in w]

    def stat(theta: float) -> float:
        p = dist(theta)
        mu = sum(q * v for q, v in zip(p, VALUES, strict=True))
        if statistic == "mean":
            return mu
        var = sum(q * (v - mu) ** 2 for q, v in zip(p, VALUES, strict=True))
        return (mu - 0.5) / math.sqrt(var)

    lo, hi = -20.0, 20.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if stat(mid) < target else (lo, mid)
    return dist((lo + hi) / 2)


def run_tests(
    params: SprtParams,
    true_elo: float,
    n_tests: int,
    seed: int,
    decided: dict[tuple[int, ...], Decision] | None = None,
) -> dict[Decision, int]:
    """``n_tests`` sequential tests with pairs drawn at ``true_elo``: how each ended.
    ``decided`` holds ``sprt_state``'s decision for counts already judged under
    ``params`` (a pure function of them): many tests pass through the same counts."""
    decided = {} if decided is None else decided
    if params.model is EloModel.LOGISTIC:
        probs = tilted(1 / (1 + 10 ** (-true_elo / 400)), "mean")
    else:
        probs = tilted(math.sqrt(2) * true_elo / NT, "t")
    rng = random.Random(seed)
    outcomes = {d: 0 for d in Decision}
    batch, cap = 4, 4000
    for _ in range(n_tests):
        counts = [0] * 5
        decision = Decision.CONTINUE
        while decision is Decision.CONTINUE and sum(counts) < cap:
            for i in rng.choices(range(5), weights=probs, k=batch):
                counts[i] += 1
            key = tuple(counts)
            if (known := decided.get(key)) is None:
                known = decided[key] = sprt_state(Pentanomial(key), params).decision  # type: ignore[arg-type]
            decision = known
        outcomes[decision] += 1
    return outcomes


@pytest.mark.slow  # long: a simulation or many generated cases
@pytest.mark.parametrize(
    ("params", "n_tests"),
    [
        (SprtParams(0.0, 40.0, model=EloModel.LOGISTIC), 1500),
        (SprtParams(0.0, 60.0, model=EloModel.NORMALIZED), 600),
    ],
    ids=["logistic", "normalized"],
)
def test_error_rates_by_simulation(params: SprtParams, n_tests: int) -> None:
    slack = 3 * math.sqrt(0.05 * 0.95 / n_tests)
    decided: dict[tuple[int, ...], Decision] = {}
    at_h0 = run_tests(params, params.elo0, n_tests, seed=12, decided=decided)
    at_h1 = run_tests(params, params.elo1, n_tests, seed=13, decided=decided)
    # inconclusive tests (at the cap) are rare and never count as the right decision
    assert at_h0[Decision.H1] / n_tests <= params.alpha + slack, at_h0
    assert at_h1[Decision.H0] / n_tests <= params.beta + slack, at_h1
    # and the test does decide, mostly for the true hypothesis
    assert at_h0[Decision.H0] / n_tests >= 1 - params.beta - slack - 0.01, at_h0
    assert at_h1[Decision.H1] / n_tests >= 1 - params.alpha - slack - 0.01, at_h1


@pytest.mark.soak
@pytest.mark.parametrize(
    "params",
    [
        SprtParams(0.0, 40.0, model=EloModel.LOGISTIC),
        SprtParams(0.0, 60.0, model=EloModel.NORMALIZED),
        SprtParams(-20.0, 20.0, alpha=0.1, beta=0.02, model=EloModel.NORMALIZED),
    ],
    ids=["logistic", "normalized", "normalized-uneven-errors"],
)
def test_error_rates_by_simulation_soak(params: SprtParams) -> None:
    # The presets' bounds need ~10^4 pairs per test: too slow to simulate thousands of times
    # in Python; these bounds exercise the same code with tests of a few hundred pairs.
    n = 5000
    at_h0 = run_tests(params, params.elo0, n, seed=1)
    at_h1 = run_tests(params, params.elo1, n, seed=2)
    assert at_h0[Decision.H1] / n <= params.alpha + 3 * math.sqrt(params.alpha / n), at_h0
    assert at_h1[Decision.H0] / n <= params.beta + 3 * math.sqrt(params.beta / n), at_h1
    assert at_h0[Decision.CONTINUE] + at_h1[Decision.CONTINUE] <= n // 100


# --- properties ---------------------------------------------------------------------------

pentanomials = st.tuples(*[st.integers(0, 300)] * 5).filter(lambda c: sum(c) > 0)
models = st.sampled_from(list(EloModel))
bounds = st.tuples(st.floats(-20, 20), st.floats(0.5, 20)).map(lambda b: (b[0], b[0] + b[1]))


@settings(max_examples=examples(60), deadline=None)
@given(pentanomials, models, bounds, st.integers(0, 3))
def test_llr_rises_when_a_pair_scores_higher(
    counts: tuple[int, ...], model: EloModel, b: tuple[float, float], i: int
) -> None:
    """Moving one pair up a cell never lowers the LLR, where the move empties and fills no
    cell. Empty cells are regularised (1e-3 a cell, as fishtest's LLRcalc does), so a
    move that empties or fills one changes the regulariser too, and there the LLR may
    fall by more than any rounding."""
    counts = (*counts[:i], max(counts[i], 2), max(counts[i + 1], 1), *counts[i + 2 :])
    better = list(counts)
    better[i] -= 1
    better[i + 1] += 1
    params = SprtParams(b[0], b[1], model=model)
    before = llr(Pentanomial(counts), params)  # type: ignore[arg-type]
    after = llr(Pentanomial(tuple(better)), params)  # type: ignore[arg-type]
    assert after >= before - 1e-9 * max(1.0, abs(before))  # rounding only


@settings(max_examples=examples(60), deadline=None)
@given(pentanomials, models, bounds)
def test_swapping_the_bots_negates_the_llr(
    counts: tuple[int, ...], model: EloModel, b: tuple[float, float]
) -> None:
    penta = Pentanomial(counts)  # type: ignore[arg-type]
    mine = llr(penta, SprtParams(b[0], b[1], model=model))
    theirs = llr(penta.swapped(), SprtParams(-b[1], -b[0], model=model))
    assert theirs == pytest.approx(-mine, abs=1e-7 * max(1.0, abs(mine)))


# LLRs computed with fishtest's own algorithm (server/fishtest/stats/LLRcalc.py:
# LLR_logistic and LLR_normalized, regularised counts, the secular equation solved to
# machine precision, fishtest's 10 fixed-point iterations for the t-value), outside this
# repository: (counts, elo0, elo1, logistic LLR, normalized LLR).
FISHTEST_VALUES = [
    ((461, 7604, 17562, 7920, 453), 0, 2, 2.128080566660505, 2.1248464617545526),
    ((461, 7604, 17562, 7920, 453), -1.75, 0.25, 9.113942831533208, 4.096347879551174),
    ((0, 0, 0, 0, 20), 0, 40, 2.1705331744636776, 2.980528020480152),
    ((1, 0, 12, 0, 19), 0, 100, 6.741137423849395, 6.83068431927033),
    ((40, 3, 310, 2, 55), -35, 5, 14.891594173456582, 8.962574347384868),
    ((120, 0, 700, 0, 180), 0, 5, 2.5403653940532704, 2.023836004032413),
    ((7, 1, 30, 0, 2), -10, 10, -1.3385701729772908, -0.9228904542530108),
]


@pytest.mark.parametrize(("counts", "elo0", "elo1", "logistic", "normalized"), FISHTEST_VALUES)
def test_llr_agrees_with_fishtest_to_1e_6(
    counts: tuple[int, int, int, int, int], elo0: float, elo1: float, logistic: float,
    normalized: float,
) -> None:  # fmt: skip
    for model, expected in ((EloModel.LOGISTIC, logistic), (EloModel.NORMALIZED, normalized)):
        got = llr(Pentanomial(counts), SprtParams(elo0, elo1, model=model))
        assert got == pytest.approx(expected, abs=1e-6), model
