"""The SPRT test format's policy: first crossing prefix, batches, resume, error rates."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.testing.examples import examples
from arena.tournament.policy.config import TournamentError, build_sprt, sprt_params
from arena.tournament.policy.sprt_format import (
    INCONCLUSIVE,
    RUNNING,
    decide,
    pairs_to_plan,
    progress_of,
)
from arena.tournament.statistics.sprt import Decision, EloModel, SprtParams, llr, sprt_state
from arena.tournament.statistics.stats import Pentanomial

WIDE = SprtParams(0.0, 150.0, model=EloModel.LOGISTIC)  # decides within a few pairs


def _counts(scores: list[float]) -> Pentanomial:
    counts = [0] * 5
    for s in scores:
        counts[int(2 * s)] += 1
    return Pentanomial(tuple(counts))  # type: ignore[arg-type]


def test_decide_is_the_first_prefix_that_crosses() -> None:
    """Six WW pairs cross the upper bound; losses after that do not undo it."""
    scores = [2.0] * 12 + [0.0] * 30
    history, decided_at = decide(scores, WIDE)
    first = next(k for k in range(1, 43) if sprt_state(_counts(scores[:k]), WIDE).decision
                 is not Decision.CONTINUE)  # fmt: skip
    assert decided_at == first and history[first - 1].llr >= WIDE.upper_bound
    assert history[-1].llr < WIDE.upper_bound  # the full sequence alone would not pass
    assert [p.pairs for p in history] == list(range(1, 43))
    assert decide(scores, WIDE, stop=True)[0] == history[:first]


@pytest.mark.parametrize(
    ("scores", "verdict", "decided_at"),
    [
        ([2.0] * 20, "H1 accepted", 9),
        ([0.0] * 20, "H0 accepted", 6),
        ([1.0] * 3, RUNNING, None),
        ([1.0, 1.5, 1.0, 1.5], INCONCLUSIVE, None),
        ([2.0, None, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], RUNNING, None),
    ],
    ids=["pass", "fail", "running", "cap", "gap-stops-the-prefix"],
)
def test_progress(scores: list[float | None], verdict: str, decided_at: int | None) -> None:
    progress = progress_of(scores, WIDE, max_pairs=4 if verdict == INCONCLUSIVE else 100)
    assert (progress.verdict, progress.decided_at) == (verdict, decided_at)
    assert progress.complete == sum(s is not None for s in scores)
    prefix = list(itertools.takewhile(lambda s: s is not None, scores))
    assert progress.scores == tuple(prefix)
    assert progress.llr == (llr(_counts(prefix), WIDE) if prefix else 0.0)  # type: ignore[arg-type]
    assert progress.to_json()["verdict"] == verdict
    assert verdict.split()[0] in progress.sentence()


def test_a_test_without_pairs_reads_as_running() -> None:
    empty = progress_of([], WIDE, 10)
    assert empty.to_json()["pentanomial"] == [0] * 5 and empty.llr == 0.0
    assert (empty.verdict, empty.decided_at) == (RUNNING, None)


def test_plan_stops_at_the_decision_and_the_cap() -> None:
    assert pairs_to_plan(progress_of([], WIDE, 10), 4) == range(1, 5)
    undecided = [1.0, 1.5] * 5
    assert pairs_to_plan(progress_of(undecided[:8], WIDE, 10), 4) == range(9, 11)  # the cap
    assert pairs_to_plan(progress_of(undecided, WIDE, 10), 4) == range(0)
    assert pairs_to_plan(progress_of([2.0] * 9, WIDE, 100), 4) == range(0)  # decided
    assert pairs_to_plan(progress_of([], WIDE, 10), 0) == range(1, 2)  # at least one


@pytest.mark.slow  # long: a simulation or many generated cases
@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.large_base_example],
)
@given(
    outcomes=st.lists(st.sampled_from([1.0, 1.5, 2.0, 0.5, 0.0]), min_size=30, max_size=30),
    replays=st.lists(st.sampled_from([1.0, 1.5, 2.0, 0.5, 0.0]), min_size=30, max_size=30),
    batch=st.integers(1, 6),
    max_pairs=st.integers(1, 30),
    rnd=st.randoms(use_true_random=False),
)
def test_killed_and_resumed_runs_keep_the_decision(
    outcomes: list[float], replays: list[float], batch: int, max_pairs: int, rnd: random.Random
) -> None:
    """A model of the runner: batches of pairs finish in any order, the run is killed at
    random moments (pairs in flight are lost and replayed, possibly with another result),
    resumed. A decision, once seen, never changes; pairs are stored once each; nothing is
    scheduled after the decision but the batch in flight; an undecided test ends at the cap.
    """
    stored: dict[int, float] = {}  # pair number (1-based) -> score, stored once
    scheduled = 0
    seen: tuple[int, Decision] | None = None
    replayed: set[int] = set()
    while True:
        progress = progress_of([stored.get(k) for k in range(1, scheduled + 1)], WIDE, max_pairs)
        if progress.decided_at is not None:
            now = (progress.decided_at, progress.decision)
            assert seen is None or seen == now, "a decision changed"
            seen = now
        open_pairs = [k for k in range(1, scheduled + 1) if k not in stored]
        if not open_pairs:
            plan = pairs_to_plan(progress, batch)
            if not plan:
                break
            assert seen is None, "pairs scheduled after the test decided"
            scheduled = plan[-1]
            continue
        if rnd.random() < 0.15:  # kill -9: whatever is in flight is played again
            replayed.update(open_pairs)
            continue
        k = rnd.choice(open_pairs)
        stored[k] = replays[k - 1] if k in replayed else outcomes[k - 1]
    final = progress_of([stored[k] for k in range(1, scheduled + 1)], WIDE, max_pairs)
    assert sorted(stored) == list(range(1, scheduled + 1))
    if final.decided_at is None:
        assert scheduled == max_pairs and final.verdict == INCONCLUSIVE
    else:
        assert (final.decided_at, final.decision) == seen
        assert final.decided_at <= scheduled < final.decided_at + batch
        _, again = decide([stored[k] for k in range(1, scheduled + 1)], WIDE)
        assert again == final.decided_at  # the same decision from the same pairs


# --- operating characteristics of the format's rule, by simulation ------------------------

BASE = (0.05, 0.2, 0.5, 0.2, 0.05)


def _tilted(model: EloModel, elo: float) -> list[float]:
    """BASE exponentially tilted until its mean (logistic) or t-value (normalized) per
    pair is that of ``elo`` (bisection on the tilt)."""
    values = [i / 4 for i in range(5)]
    target = 1 / (1 + 10 ** (-elo / 400)) if model is EloModel.LOGISTIC else (
        math.sqrt(2) * elo / (800 / math.log(10)))  # fmt: skip

    def dist(theta: float) -> list[float]:
        w = [b * math.exp(theta * v) for b, v in zip(BASE, values, strict=True)]
        return [x / sum(w) for x in w]

    def stat(theta: float) -> float:
        p = dist(theta)
        mu = sum(q * v for q, v in zip(p, values, strict=True))
        if model is EloModel.LOGISTIC:
            return mu
        return (mu - 0.5) / math.sqrt(
            sum(q * (v - mu) ** 2 for q, v in zip(p, values, strict=True))
        )

    lo, hi = -20.0, 20.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if stat(mid) < target else (lo, mid)
    return dist((lo + hi) / 2)


def _simulate(params: SprtParams, elo: float, tests: int, seed: int) -> dict[str, int]:
    probs = _tilted(params.model, elo)
    rng = random.Random(seed)
    cap = 400
    verdicts = {"H0 accepted": 0, "H1 accepted": 0, INCONCLUSIVE: 0}
    for _ in range(tests):
        pairs = (rng.choices(range(5), weights=probs)[0] / 2 for _ in range(cap))
        history, decided_at = decide(pairs, params, stop=True)
        if decided_at is None:
            verdicts[INCONCLUSIVE] += 1
        else:
            verdicts["H1 accepted" if history[-1].llr > 0 else "H0 accepted"] += 1
    return verdicts


@pytest.mark.slow  # long: a simulation or many generated cases
@pytest.mark.parametrize(
    "params",
    [SprtParams(0.0, 80.0, model=EloModel.LOGISTIC),
     SprtParams(0.0, 150.0, alpha=0.1, beta=0.05, model=EloModel.NORMALIZED)],
    ids=["logistic", "normalized-alpha-0.1"],
)  # fmt: skip
def test_error_rates_of_the_first_crossing_rule(params: SprtParams) -> None:
    """Thousands of simulated tests (seeded): at elo0 the test passes at most alpha of the
    time, at elo1 it fails at most beta (plus 3 standard errors of sampling)."""
    tests = 2000
    at_h0 = _simulate(params, params.elo0, tests, seed=7)
    at_h1 = _simulate(params, params.elo1, tests, seed=8)
    assert at_h0["H1 accepted"] / tests <= params.alpha + 3 * math.sqrt(params.alpha / tests)
    assert at_h1["H0 accepted"] / tests <= params.beta + 3 * math.sqrt(params.beta / tests)
    # control: the same counts do tell the hypotheses apart (a test that never passes
    # or never fails would satisfy the two bounds above)
    assert at_h1["H1 accepted"] / tests > 0.85 and at_h0["H0 accepted"] / tests > 0.85
    # control: swap the truth and the false-pass bound is broken by far
    assert at_h1["H1 accepted"] / tests > params.alpha + 3 * math.sqrt(params.alpha / tests)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"elo0": 0.0}, "needs elo0 and elo1"),
        ({"elo0": 5.0, "elo1": 0.0}, "elo1 must be above elo0"),
        ({"elo0": 0.0, "elo1": 250.0}, "elo1 must lie within [-200, 200] (normalized"),
        ({"elo0": 0.0, "elo1": 250.0, "model": "logistic"}, None),
        ({"elo0": 0.0, "elo1": 1200.0, "model": "logistic"}, "elo1 must lie within [-1000"),
        ({"preset": "gain", "alpha": 0.6}, "alpha must lie strictly between 0 and 0.5"),
        ({"preset": "gain", "beta": 0.0}, "beta must lie strictly between"),
        ({"preset": "gain", "alpha": math.nan}, "alpha must be a finite number"),
        ({"preset": "nonreg", "max_pairs": 0}, "max_pairs must be a whole number"),
        ({"preset": "fast"}, "sprt must be one of nonreg, gain"),
        ({"preset": "gain", "model": "bayes"}, "model must be logistic or normalized"),
    ],
    ids=["one-bound", "reversed", "normalized-too-far", "logistic-250-is-fine",
         "logistic-too-far", "alpha", "beta", "nan", "max-pairs", "preset", "model"],
)  # fmt: skip
def test_bounds_are_checked_at_the_edge(kwargs: dict[str, object], field: str | None) -> None:
    if field is None:
        assert sprt_params(build_sprt(**kwargs)).elo1 == 250.0  # type: ignore[arg-type]
        return
    with pytest.raises(TournamentError) as raised:
        build_sprt(**kwargs)  # type: ignore[arg-type]
    assert field in str(raised.value)


def test_presets_and_overrides() -> None:
    gain = build_sprt(preset="gain")
    assert (gain.elo0, gain.elo1, gain.alpha, gain.beta, gain.model) == (
        0.0, 40.0, 0.05, 0.05, "normalized")  # fmt: skip
    nonreg = build_sprt(preset="nonreg", beta=0.1, max_pairs=50)
    assert (nonreg.elo0, nonreg.elo1, nonreg.beta, nonreg.max_pairs) == (-35.0, 5.0, 0.1, 50)
