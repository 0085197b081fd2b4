"""Paired-deal statistics against values worked out by hand from the definitions."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.tournament.statistics.stats import (
    GameScore,
    Pentanomial,
    Trinomial,
    collect,
    pentanomial_summary,
    trinomial_summary,
)

Z = 1.959963984540054  # Phi^-1(0.975)
NT = 800 / math.log(10)


def phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


@pytest.mark.parametrize(
    ("counts", "mean", "variance"),
    [
        ((1, 2, 3, 2, 2), 0.55, 0.0975),
        ((1, 1, 1, 1, 1), 0.5, (2 * 0.25 + 2 * 0.0625) / 5),
        ((2, 1, 1, 1, 5), 0.65, (2 * 0.4225 + 0.16 + 0.0225 + 0.01 + 5 * 0.1225) / 10),
    ],
    ids=["skewed-10-pairs", "uniform-5-pairs", "heavy-top-10-pairs"],
)
def test_pentanomial_by_hand(
    counts: tuple[int, int, int, int, int], mean: float, variance: float
) -> None:
    s = pentanomial_summary(Pentanomial(counts))
    n = sum(counts)
    assert (s.n, s.games) == (n, 2 * n)
    assert s.score.value == pytest.approx(mean, abs=1e-12)
    assert s.variance == pytest.approx(variance, abs=1e-12)
    half = Z * math.sqrt(variance / n)
    assert s.score.interval.low == pytest.approx(mean - half, abs=1e-9)
    assert s.score.interval.high == pytest.approx(mean + half, abs=1e-9)
    assert s.logistic_elo.value == pytest.approx(400 * math.log10(mean / (1 - mean)), abs=1e-9)
    lo, hi = mean - half, mean + half
    assert s.logistic_elo.interval.low == pytest.approx(400 * math.log10(lo / (1 - lo)))
    assert s.logistic_elo.interval.high == pytest.approx(400 * math.log10(hi / (1 - hi)))
    sigma_game = math.sqrt(2 * variance)
    assert s.normalized_elo.value == pytest.approx((mean - 0.5) / sigma_game * NT, abs=1e-9)
    assert s.normalized_elo.interval.half_width == pytest.approx(half / sigma_game * NT)
    assert s.los == pytest.approx(phi((mean - 0.5) / math.sqrt(variance / n)), abs=1e-12)


def test_hand_worked_figures_as_numbers() -> None:
    # (1,2,3,2,2): mean 0.55, variance 0.0975, 10 pairs; the figures typed in from a calculator.
    s = pentanomial_summary(Pentanomial((1, 2, 3, 2, 2)))
    assert s.logistic_elo.value == pytest.approx(34.86007, abs=1e-4)  # 400 log10(11/9)
    assert s.normalized_elo.value == pytest.approx(39.33933, abs=1e-4)  # .05/sqrt(.195)*347.4356
    assert s.los == pytest.approx(0.693701, abs=1e-5)  # Phi(.05/sqrt(.00975)) = Phi(0.506370)


@pytest.mark.parametrize(
    ("tri", "mean", "variance"),
    [
        (Trinomial(3, 4, 5), 7 / 12, 0.5 - (7 / 12) ** 2),
        (Trinomial(10, 1, 10), 0.5, 20 * 0.25 / 21),
        (Trinomial(1, 8, 1), 0.5, 0.05),
    ],
    ids=["3-4-5", "one-draw", "drawish"],
)
def test_trinomial_by_hand(tri: Trinomial, mean: float, variance: float) -> None:
    s = trinomial_summary(tri)
    assert s.score.value == pytest.approx(mean, abs=1e-12)
    assert s.variance == pytest.approx(variance, abs=1e-12)
    assert s.games_sigma == pytest.approx(math.sqrt(variance))
    assert s.score.interval.half_width == pytest.approx(Z * math.sqrt(variance / tri.games))
    assert s.normalized_elo.value == pytest.approx((mean - 0.5) / math.sqrt(variance) * NT)


def fishtest_style_get_elo(results: list[float]) -> tuple[float, float, float]:
    """fishtest's stat_util.get_elo re-derived: variance of pair *points* over games."""
    results = [r if r else 1e-3 for r in results]
    n = sum(results)
    games = n * (len(results) - 1) / 2
    mu = sum(r * i / 2 for i, r in enumerate(results)) / games
    mu_points = (len(results) - 1) / 2 * mu
    var = sum(r * (i / 2 - mu_points) ** 2 for i, r in enumerate(results)) / games
    sd = math.sqrt(var / games)

    def elo(x: float) -> float:
        return -400 * math.log10(1 / x - 1)

    return elo(mu), (elo(mu + Z * sd) - elo(mu - Z * sd)) / 2, phi((mu - 0.5) / sd)


@pytest.mark.parametrize(
    "counts",
    [
        (461, 7604, 17562, 7920, 453),
        (12000, 30000, 51000, 30500, 12100),
        (0, 3, 40, 5, 0),
        (5, 0, 0, 0, 9),
    ],
    ids=["fishtest-like-34k", "wide-135k", "zeros-at-ends", "only-extremes"],
)
def test_large_counts_agree_with_the_fishtest_formulas(
    counts: tuple[int, int, int, int, int],
) -> None:
    elo, elo95, los = fishtest_style_get_elo([float(c) for c in counts])
    s = pentanomial_summary(Pentanomial(counts))
    assert s.logistic_elo.value == pytest.approx(elo, abs=1e-9)
    assert s.logistic_elo.interval.half_width == pytest.approx(elo95, abs=1e-9)
    assert s.los == pytest.approx(los, abs=1e-12)
    # trinomial figures: fishtest's get_elo on L, D, W follows the same code
    tri = Trinomial(1200, 3000, 1500)
    t_elo, t_elo95, t_los = fishtest_style_get_elo([1200.0, 3000.0, 1500.0])
    ts = trinomial_summary(tri)
    assert (ts.logistic_elo.value, ts.logistic_elo.interval.half_width, ts.los) == (
        pytest.approx(t_elo),
        pytest.approx(t_elo95),
        pytest.approx(t_los),
    )


def test_collect_pairs_by_deal_and_reports_unpaired_games() -> None:
    games = [
        GameScore(0, 1.0), GameScore(0, 0.5),  # 1.5
        GameScore(1, 0.0), GameScore(1, 1.0, status="forfeit"),  # 1
        GameScore(2, 1.0), GameScore(2, 1.0),  # 2
        GameScore(3, 0.5),  # unpaired: its partner was cut short
        GameScore(4, 0.0), GameScore(4, 0.0),  # 0
    ]  # fmt: skip
    result = collect(games)
    assert result.pentanomial == Pentanomial((1, 0, 1, 1, 1))
    assert result.unpaired == (GameScore(3, 0.5),)
    assert result.trinomial == Trinomial(losses=3, draws=2, wins=4)
    assert dict(result.statuses) == {"finished": 8, "forfeit": 1}


@pytest.mark.parametrize(
    ("games", "message"),
    [
        ([], "no games"),
        ([GameScore(1, 1.0)] * 3, "3 games"),
    ],
    ids=["empty", "three-games-one-deal"],
)
def test_collect_rejects(games: list[GameScore], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        collect(games)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Pentanomial((0, 0, 0, 0, 0)),
        lambda: Pentanomial((1, -1, 0, 0, 0)),
        lambda: Trinomial(0, 0, 0),
        lambda: GameScore(0, 0.7),
    ],
    ids=["empty-penta", "negative", "empty-tri", "bad-game-score"],
)
def test_bad_inputs_are_refused(make: object) -> None:
    with pytest.raises(ValueError):
        make()  # type: ignore[operator]


def test_pairing_reduces_variance_when_seats_cancel_luck() -> None:
    # 40 deals where the seat decides (each bot wins one game), 4 where A wins both,
    # 4 where B wins both: per game 48 wins of 96, but pairs are mostly 1-1.
    games = [GameScore(d, float(g == 0)) for d in range(40) for g in range(2)]
    games += [GameScore(100 + d, 1.0) for d in range(4) for _ in range(2)]
    games += [GameScore(200 + d, 0.0) for d in range(4) for _ in range(2)]
    result = collect(games)
    assert result.pentanomial == Pentanomial((4, 0, 40, 0, 4))
    assert result.paired_trinomial == Trinomial(48, 0, 48)
    # by hand: pair variance (8 * 0.25) / 48 over 48 pairs; game variance 0.25 over 96 games
    # (rel 1e-4: the zero counts are regularized to 1e-3, as fishtest does)
    by_hand = (8 * 0.25 / 48 / 48) / (0.25 / 96)
    assert by_hand == pytest.approx(1 / 3)
    assert result.variance_ratio == pytest.approx(by_hand, rel=1e-4)


def test_variance_ratio_needs_pairs() -> None:
    result = collect([GameScore(1, 1.0), GameScore(2, 0.0)])
    assert result.pentanomial is None and result.variance_ratio is None
    assert len(result.unpaired) == 2 and result.trinomial == Trinomial(1, 0, 1)


pentanomials = st.tuples(*[st.integers(0, 500)] * 5).filter(lambda c: sum(c) > 0)


@given(pentanomials)
def test_intervals_contain_their_estimates(counts: tuple[int, int, int, int, int]) -> None:
    s = pentanomial_summary(Pentanomial(counts))
    for est in (s.score, s.logistic_elo, s.normalized_elo):
        assert est.interval.low <= est.value <= est.interval.high


@given(pentanomials)
def test_swapping_the_bots_mirrors_every_figure(counts: tuple[int, int, int, int, int]) -> None:
    a = pentanomial_summary(Pentanomial(counts))
    b = pentanomial_summary(Pentanomial(counts).swapped())
    assert b.score.value == pytest.approx(1 - a.score.value, abs=1e-12)
    assert b.variance == pytest.approx(a.variance, rel=1e-9, abs=1e-15)
    assert b.logistic_elo.value == pytest.approx(-a.logistic_elo.value, abs=1e-6)
    assert b.normalized_elo.value == pytest.approx(-a.normalized_elo.value, abs=1e-6)
    assert b.los == pytest.approx(1 - a.los, abs=1e-9)


@given(
    st.tuples(*[st.integers(0, 40)] * 5).filter(lambda c: sum(c) > 0),
    st.tuples(*[st.integers(0, 60)] * 3).filter(lambda c: sum(c) > 0),
)
def test_score_intervals_stay_within_0_and_1(
    penta: tuple[int, int, int, int, int], tri: tuple[int, int, int]
) -> None:
    """Near a sweep the normal interval left [0, 1] (99.9% ± 4.2, score_low -0.08)."""
    for s in (pentanomial_summary(Pentanomial(penta)), trinomial_summary(Trinomial(*tri))):
        interval = s.score.interval
        assert 0.0 <= interval.low <= s.score.value <= interval.high <= 1.0


@pytest.mark.parametrize(
    ("counts", "low", "high"),
    [
        ((0, 0, 0, 0, 3), None, 1.0),  # a sweep: cut at 100%
        ((3, 0, 0, 0, 0), 0.0, None),  # swept: cut at 0%
        ((0, 1, 2, 1, 0), None, None),  # far from the bounds: mu +- z sd, as fishtest
    ],
    ids=["sweep", "swept", "even"],
)
def test_a_score_interval_is_cut_at_the_bounds_only(
    counts: tuple[int, int, int, int, int], low: float | None, high: float | None
) -> None:
    s = pentanomial_summary(Pentanomial(counts))
    mu, interval = s.score.value, s.score.interval
    sd = math.sqrt(s.variance / s.n) if low is None or high is None else 0.0
    assert interval.low == (low if low is not None else pytest.approx(mu - Z * sd, rel=1e-3))
    assert interval.high == (high if high is not None else pytest.approx(mu + Z * sd, rel=1e-3))
