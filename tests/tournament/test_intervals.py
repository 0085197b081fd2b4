"""Confidence intervals of result tables against values worked out from the definitions."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.tournament.statistics.intervals import (
    TableGame,
    TableIntervals,
    field_intervals,
    head_to_head,
    interval_of,
    llr_history,
    pair_scores,
)
from arena.tournament.statistics.sprt import GAIN, llr
from arena.tournament.statistics.stats import GameScore, PairedResults, Pentanomial, collect

Z = 1.959963984540054
PAIR_SCORES = (0, 0.25, 0.5, 0.75, 1)
"""A deal pair's score for the pentanomial outcomes LL, LD, DD or WL, WD, WW."""


def _elo(score: float) -> float:
    return -400 * math.log10(1 / score - 1)


def _pair(deal: int, a_points: float) -> list[TableGame]:
    """Deal ``deal`` played twice (A in seat 0, then seat 1), A scoring ``a_points`` over both."""
    first, second = {0.0: (1, 0), 0.5: (1, None), 1.0: (0, 1), 1.5: (0, None), 2.0: (0, 1)}[
        a_points
    ]
    # game 1: A in seat 0; game 2: A in seat 1
    if a_points == 2.0:
        return [TableGame(deal, ("A", "B"), 0), TableGame(deal, ("B", "A"), 1)]
    if a_points == 1.0:
        return [TableGame(deal, ("A", "B"), 0), TableGame(deal, ("B", "A"), 0)]
    if a_points == 0.0:
        return [TableGame(deal, ("A", "B"), 1), TableGame(deal, ("B", "A"), 0)]
    games = [TableGame(deal, ("A", "B"), first), TableGame(deal, ("B", "A"), second)]
    return games


KAPPA = Z * Z / 4  # pseudo-pairs WW and LL each: Agresti-Coull's z^2/2 won and lost games


def _shown(counts: tuple[float, ...], score: float) -> tuple[float, float]:
    """The interval the module's docstring defines, worked out here from it."""
    n = sum(counts)
    augmented = [counts[0] + KAPPA, *counts[1:4], counts[4] + KAPPA]
    total = sum(augmented)
    mean = sum(c * v for c, v in zip(augmented, PAIR_SCORES, strict=True)) / total
    var = sum(c * (v - mean) ** 2 for c, v in zip(augmented, PAIR_SCORES, strict=True)) / total
    half = Z * math.sqrt(var / n)
    return max(0.0, min(mean - half, score)), min(1.0, max(mean + half, score))


# (games, kind, pairs, unpaired, score, (low, high)): from the definitions
CASES = [
    pytest.param(
        [g for d, p in enumerate((0.0, 0.5, 1.0, 1.5, 2.0)) for g in _pair(d, p)],
        "pentanomial",
        5,
        0,
        0.5,
        _shown((1, 1, 1, 1, 1), 0.5),
        id="one-pair-of-each",
    ),
    pytest.param(
        [TableGame(0, ("A", "B"), 0), TableGame(1, ("A", "B"), None), TableGame(2, ("B", "A"), 0)],
        "too_few_pairs",
        0,
        3,
        0.5,
        (0.0, 1.0),
        id="three-unpaired-games",
    ),
    pytest.param(  # pair scores 0, 0.5, 1, 1.5, 2 counted 1, 2, 3, 4, 5 times (15 pairs)
        [
            g
            for d, p in enumerate([0.0] + [0.5] * 2 + [1.0] * 3 + [1.5] * 4 + [2.0] * 5)
            for g in _pair(d, p)
        ],
        "pentanomial",
        15,
        0,
        40 / 60,
        _shown((1, 2, 3, 4, 5), 40 / 60),
        id="a-stronger-large-counts",
    ),
]


@pytest.mark.parametrize(("games", "kind", "pairs", "unpaired", "score", "bounds"), CASES)
def test_field_interval_is_the_definitions(
    games: list[TableGame], kind: str, pairs: int, unpaired: int, score: float,
    bounds: tuple[float, float],
) -> None:  # fmt: skip
    interval = field_intervals(games, ["A"])["A"]
    assert interval is not None
    assert (interval.kind, interval.pairs, interval.unpaired) == (kind, pairs, unpaired)
    assert interval.score == pytest.approx(score, abs=1e-12)
    assert (interval.low, interval.high) == pytest.approx(bounds, rel=1e-9)
    assert interval.elo == pytest.approx(_elo(score), rel=1e-9, abs=1e-9)
    if kind == "pentanomial":
        assert interval.elo_low == pytest.approx(_elo(bounds[0]), rel=1e-9)
        assert interval.elo_high == pytest.approx(_elo(bounds[1]), rel=1e-9)
    else:
        assert (interval.elo_low, interval.elo_high) == (-math.inf, math.inf)
        assert math.isnan(interval.los)
    other = field_intervals(games, ["B"])["B"]
    assert other is not None and other.score == pytest.approx(1 - score)


def test_a_cut_short_pair_is_in_the_score_and_named_beside_the_interval() -> None:
    games = [g for d, p in enumerate((0.0, 0.5, 1.0, 1.5, 2.0)) for g in _pair(d, p)]
    games.append(TableGame(9, ("A", "B"), 0))
    interval = field_intervals(games, ["A"])["A"]
    assert interval is not None
    assert (interval.pairs, interval.unpaired, interval.games) == (5, 1, 11)
    assert interval.score == pytest.approx(6 / 11)  # every game: the table's points agree
    assert interval.low <= interval.score <= interval.high
    assert interval.pairs_text() == "5 +1 unpaired"


@pytest.mark.parametrize(
    ("counts", "contains"),
    [
        ((0, 0, 5, 0, 0), (0.3, 0.7)),  # five drawn pairs: wide, not a point at 0.5
        ((0, 0, 0, 0, 5), (0.6, 1.0)),  # five won pairs: a clean sweep is no certainty
        ((5, 0, 0, 0, 0), (0.0, 0.4)),
        ((0, 0, 10, 0, 0), (0.4, 0.6)),  # ten pairs, all alike: still wide
        ((0, 0, 0, 0, 50), (0.95, 1.0)),
    ],
    ids=["5-draws", "5-sweeps", "5-swept", "10-alike", "50-sweeps"],
)
def test_pairs_all_alike_get_an_honest_interval(
    counts: tuple[int, int, int, int, int], contains: tuple[float, float]
) -> None:
    interval = interval_of(collect_pentanomial(counts))
    assert interval.kind == "pentanomial"
    assert interval.low <= contains[0] and contains[1] <= interval.high, interval


@pytest.mark.parametrize("pairs", [1, 2, 4])
def test_below_the_minimum_of_pairs_there_is_no_interval(pairs: int) -> None:
    interval = interval_of(collect_pentanomial((0, 0, 0, 0, pairs)))  # an 8-0 sweep at 4
    assert interval.kind == "too_few_pairs" and interval.too_few_pairs
    assert (interval.low, interval.high) == (0.0, 1.0)
    assert interval.score_text() == "100.0% (too few pairs)"
    assert interval.elo_text() == "+inf" and interval.los_text() == "-"
    assert not interval.excludes_even()
    assert json.loads(json.dumps(interval.to_json(), allow_nan=False))["los"] is None


@given(st.lists(st.integers(0, 12), min_size=5, max_size=5).filter(lambda c: sum(c) >= 5))
def test_every_interval_holds_its_score_and_never_collapses(counts: list[int]) -> None:
    interval = interval_of(collect_pentanomial((counts[0], counts[1], counts[2], counts[3],
                                                counts[4])))  # fmt: skip
    assert 0.0 <= interval.low <= interval.score <= interval.high <= 1.0
    assert interval.high - interval.low > 0.1  # at most 60 pairs here


def test_a_player_with_no_game_has_no_interval() -> None:
    assert field_intervals([TableGame(0, ("A", "B"), 0)], ["C"]) == {"C": None}


def _met(deals: int, a_points: float, a: str, b: str, start: int) -> list[TableGame]:
    games = []
    for d in range(start, start + deals):
        for g in _pair(d, a_points):
            games.append(TableGame(g.deal, tuple(a if p == "A" else b for p in g.players),  # type: ignore[arg-type]
                                   g.winner_seat))  # fmt: skip
    return games


def test_neighbours_that_met_are_separated_by_their_head_to_head() -> None:
    # X beats Y in every pair but one: the head-to-head interval excludes 50%.
    games = _met(9, 2.0, "X", "Y", 0) + _met(1, 1.0, "X", "Y", 9)
    table = TableIntervals.of(games, ["X", "Y"])
    h2h = table.h2h[("X", "Y")]
    assert h2h.low > 0.5 and table.h2h[("Y", "X")].high < 0.5
    assert table.notes(["X", "Y"]) == []
    assert table.separated_from_next(["X", "Y"]) == [True, False]


def test_close_neighbours_are_said_to_be_not_separated() -> None:
    games = [g for d, p in enumerate((0.5, 1.5, 1.0, 1.0, 2.0, 0.0)) for g in _pair(d, p)]
    table = TableIntervals.of(games, ["A", "B"])
    assert table.notes(["A", "B"]) == [
        "A and B are not separated at 95% (head to head): their order may be luck"
    ]
    assert table.separated_from_next(["A", "B"]) == [False, False]


def test_neighbours_that_never_met_compare_their_field_intervals() -> None:
    # P crushes Q; R and S split evenly: P and R never met, their field intervals
    # (P near 100%, R at 50%) do not overlap, nor do S's and Q's; R and S met and
    # are not separated.
    games = _met(10, 2.0, "P", "Q", 0) + _met(10, 1.0, "R", "S", 100)
    table = TableIntervals.of(games, ["P", "R", "S", "Q"])
    assert table.separated_from_next(["P", "R", "S", "Q"]) == [True, False, True, False]
    assert table.notes(["P", "R", "S", "Q"]) == [
        "R and S are not separated at 95% (head to head): their order may be luck"
    ]
    assert table.notes(["R", "P", "Q", "S"]) == []  # every neighbour pair apart


def test_head_to_head_is_each_side_of_each_pair() -> None:
    games = _met(3, 1.5, "X", "Y", 0)
    h2h = head_to_head(games)
    assert set(h2h) == {("X", "Y"), ("Y", "X")}
    assert h2h[("X", "Y")].score == pytest.approx(0.75, abs=1e-12)
    assert h2h[("Y", "X")].score == pytest.approx(0.25, abs=1e-12)


def test_llr_history_ends_at_the_llr_of_all_pairs() -> None:
    scores = [2.0, 1.0, 1.5, 0.5, 2.0, 1.0, 0.0, 2.0]
    history = llr_history(scores, GAIN)
    assert [p.pairs for p in history] == list(range(1, 9))
    assert history[-1].llr == pytest.approx(llr(Pentanomial((1, 1, 2, 1, 3)), GAIN), abs=1e-12)
    assert history[0].llr == pytest.approx(llr(Pentanomial((0, 0, 0, 0, 1)), GAIN), abs=1e-12)
    with pytest.raises(ValueError, match="a pair score is"):
        llr_history([0.7], GAIN)


def test_pair_scores_follow_pairs_as_they_complete() -> None:
    games = _pair(0, 2.0)[:1] + _pair(1, 0.5) + _pair(0, 2.0)[1:]
    assert pair_scores(games, "A") == [0.5, 2.0]
    assert pair_scores(games, "B") == [1.5, 0.0]


@pytest.mark.parametrize("a_points", [2, 0, 1])
def test_an_interval_is_strict_json_even_when_its_elo_is_infinite(a_points: float) -> None:
    """A sweep's interval reaches a score of 1 (or 0): its Elo bound is infinite, which
    JSON cannot say; to_json gives null there, so browsers and strict parsers accept it."""
    games = [g for deal in range(5) for g in _pair(deal, a_points)]
    interval = TableIntervals.of(games, ("A", "B")).field["A"]
    assert interval is not None
    text = json.dumps(interval.to_json(), allow_nan=False)  # raises on inf or nan
    assert json.loads(text)["kind"] == "pentanomial"
    if a_points == 2:
        assert not math.isfinite(interval.elo_high) and json.loads(text)["elo_high"] is None


@pytest.mark.parametrize(
    ("elo", "elo_low", "elo_high", "text"),
    [
        (-0.3, -560.2, 560.4, "+0 [-560, +560]"),  # an even score: +0, never "-0"
        (-0.0, -1.0, 1.0, "+0 [-1, +1]"),
        (89.4, 30.0, math.inf, "+89 [+30, +inf]"),  # control
        (-12.6, -math.inf, 3.0, "-13 [-inf, +3]"),  # control
    ],
)
def test_elo_text_never_shows_minus_zero(
    elo: float, elo_low: float, elo_high: float, text: str
) -> None:
    from arena.tournament.statistics.intervals import ScoreInterval

    interval = ScoreInterval("pentanomial", 6, 3, 0, 0.5, 0.2, 0.8, elo, elo_low, elo_high,
                             0.0, 0.5)  # fmt: skip
    assert interval.elo_text() == text


@pytest.mark.parametrize(
    ("counts", "text"),
    [
        ((0, 0, 0, 1, 9), "97.5% ["),  # near a sweep: cut at 100%
        ((9, 1, 0, 0, 0), "2.5% [0.0, "),  # near swept: cut at 0%
        ((1, 2, 4, 2, 1), "50.0% ["),
    ],
    ids=["sweep", "swept", "even"],
)
def test_score_text_never_reads_beyond_0_or_100_percent(
    counts: tuple[int, int, int, int, int], text: str
) -> None:
    interval = interval_of(collect_pentanomial(counts))
    assert interval.score_text().startswith(text), interval.score_text()
    assert 0.0 <= interval.low <= interval.high <= 1.0
    assert interval.to_json()["score_low"] == round(interval.low, 6)
    assert interval.score_text().endswith(f", {100 * interval.high:.1f}]")


def collect_pentanomial(counts: tuple[int, int, int, int, int]) -> PairedResults:
    """Paired results with these pentanomial counts (a deal's two game scores per outcome)."""
    games = ((0.0, 0.0), (0.0, 0.5), (0.5, 0.5), (0.5, 1.0), (1.0, 1.0))
    deals = [games[i] for i, count in enumerate(counts) for _ in range(count)]
    return collect(
        GameScore(deal, score, "finished") for deal, pair in enumerate(deals) for score in pair
    )


def test_the_api_documents_the_kinds_of_interval_it_sends() -> None:
    # ScoreInterval.kind as the proto (and docs/reference/api.md, made from it) states it:
    # every kind interval_of gives, and no other.
    proto = (Path(__file__).parents[2] / "proto/kahuna/v1/arena_service.proto").read_text()
    message = proto.split("message ScoreInterval {", 1)[1].split("}", 1)[0]
    comment = message.split("string kind = 1;", 1)[0]
    documented = set(re.findall(r'"([a-z_]+)"', comment))
    unpaired = collect([GameScore(deal, 1.0) for deal in range(12)])
    paired = collect([GameScore(deal // 2, 1.0) for deal in range(12)])
    sent = {interval_of(unpaired).kind, interval_of(paired).kind}
    assert documented == sent
