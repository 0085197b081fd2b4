"""The generalized SPRT on pair scores (the pentanomial GSPRT of fishtest).

Pure: no I/O. Given the pentanomial counts of bot A against bot B, the
log-likelihood ratio is

    LLR = N * sum_i phat_i * (log p1_i - log p0_i)

where ``phat`` is the empirical distribution of the pair score (scaled to
[0, 1]: 0, 1/4, 1/2, 3/4, 1), N the number of pairs and ``p0``/``p1`` the
maximum-likelihood distributions on the same five outcomes under the
constraint of hypothesis H0/H1:

* logistic model: the mean pair score equals ``L(elo) = 1 / (1 + 10^(-elo/400))``;
* normalized model: the t-value ``(mu - 1/2) / sigma`` of the pair score
  equals ``sqrt(2) * nelo / (800 / ln 10)`` (sigma per game is sqrt(2) times
  sigma per pair scaled to [0, 1]).

The test accepts H0 when LLR <= log(beta / (1 - alpha)) and H1 when
LLR >= log((1 - beta) / alpha); otherwise it continues. Zero counts are
replaced by 1e-3 first, as fishtest does (``arena.tournament.statistics.stats``).

The constrained MLE for a fixed mean ``s`` is ``p_i = phat_i / (1 + x (a_i - s))``
with x the root of ``sum phat_i (a_i - s) / (1 + x (a_i - s)) = 0`` (see
M. Van den Bergh, "support_MLE_multinomial"); for a fixed t-value the same
form with a_i - s replaced by the linearised constraint, iterated to a
fixed point ("normalized_elo_practical", section 4.1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from arena.tournament.statistics.stats import (
    NELO_PER_T,
    Pentanomial,
    logistic_score,
    mean_variance,
    score_distribution,
)

Pdf = list[tuple[float, float]]


class EloModel(StrEnum):
    LOGISTIC = "logistic"
    NORMALIZED = "normalized"


class Decision(StrEnum):
    H0 = "H0 accepted"
    H1 = "H1 accepted"
    CONTINUE = "continue"


ELO_LIMITS: dict[EloModel, float] = {EloModel.LOGISTIC: 1000.0, EloModel.NORMALIZED: 200.0}
"""The largest |elo0|, |elo1| of each model for which the LLR exists for any counts.

Normalized: the t-value MLE (``mle_t_value``) starts from the uniform distribution,
where a t-value above about 0.94 per pair (231.7 normalized Elo) has no solution of
the tilt, so ``llr`` would raise for some counts in the middle of a test. 200 keeps a
margin; a property test runs ``llr`` over counts of every shape at the limits.
"""


@dataclass(frozen=True)
class SprtParams:
    """H0: Elo = elo0 against H1: Elo = elo1, with error rates alpha and beta.

    alpha is the chance of accepting H1 when Elo = elo0 (a false pass),
    beta the chance of accepting H0 when Elo = elo1 (a false fail).
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: EloModel = EloModel.NORMALIZED

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be finite")
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 must be below elo1, got [{self.elo0}, {self.elo1}]")
        if not (0.0 < self.alpha < 1.0 and 0.0 < self.beta < 1.0):
            raise ValueError("alpha and beta must lie strictly between 0 and 1")
        if self.alpha + self.beta >= 1.0:
            raise ValueError("alpha + beta must be below 1")
        limit = ELO_LIMITS[self.model]
        if max(abs(self.elo0), abs(self.elo1)) > limit:
            raise ValueError(
                f"elo0 and elo1 must lie within [-{limit:g}, {limit:g}] ({self.model} Elo)"
            )

    @property
    def lower_bound(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper_bound(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)


# The presets are fishtest's bounds scaled by 20, so that a test between Kahuna bots
# decides in a few hundred deal pairs (fishtest's own need tens of thousands of
# games: Stockfish's changes are worth a few Elo, a Kahuna bot's often tens).
# Normalized Elo is in units of the game's own noise (the per-game standard
# deviation): in a game without draws, unpaired, 1 nElo is about 1 logistic Elo
# near an even score; paired deals make the noise smaller, so the same nElo is
# fewer logistic Elo.
#
# Non-regression: "the change does not lose strength". H0 is a loss of 35 nElo,
# H1 a gain of 5 (fishtest's [-1.75, 0.25] x 20): a pass says the candidate is at
# worst slightly weaker, with at most 5% chance that one 35 nElo weaker passes.
NON_REGRESSION = SprtParams(elo0=-35.0, elo1=5.0)
# Gain: "the change is an improvement". H0 is no gain, H1 a gain of 40 nElo
# (fishtest's [0, 2] x 20): a pass says the candidate is stronger, with at most 5%
# chance that an equal candidate passes and 5% that one 40 nElo stronger fails.
GAIN = SprtParams(elo0=0.0, elo1=40.0)
PRESETS: dict[str, SprtParams] = {"nonreg": NON_REGRESSION, "gain": GAIN}


def _root(f_and_slope: Secular, low: float, high: float) -> float:
    """The root of a decreasing function on (low, high): Newton kept inside a bracket."""
    x = 0.0 if low < 0.0 < high else (low + high) / 2.0
    for _ in range(200):
        value, slope = f_and_slope(x)
        if value == 0.0:
            return x
        if value > 0.0:
            low = x
        else:
            high = x
        step = x - value / slope if slope < 0.0 else (low + high) / 2.0
        nxt = step if low < step < high else (low + high) / 2.0
        if abs(nxt - x) <= 1e-15 * max(1.0, abs(x)):
            return nxt
        x = nxt
    return x


class Secular:
    """f(x) = sum p_i b_i / (1 + x b_i) and its derivative, decreasing in x."""

    def __init__(self, pdf: Sequence[tuple[float, float]]) -> None:
        self.pdf = pdf

    def __call__(self, x: float) -> tuple[float, float]:
        value = slope = 0.0
        for b, p in self.pdf:
            d = 1.0 + x * b
            value += p * b / d
            slope -= p * b * b / (d * d)
        return value, slope


def _tilt(pdfhat: Sequence[tuple[float, float]], shifts: Sequence[float]) -> Pdf:
    """MLE of the form p_i = phat_i / (1 + x b_i) with sum p_i b_i = 0."""
    low_b, high_b = min(shifts), max(shifts)
    if not low_b < 0.0 < high_b:
        raise ValueError("the hypothesised value lies outside what the outcomes allow")
    secular = Secular([(b, p) for b, (_, p) in zip(shifts, pdfhat, strict=True)])
    margin = 1e-12
    x = _root(secular, -1.0 / high_b + margin, -1.0 / low_b - margin)
    return [(a, p / (1.0 + x * b)) for (a, p), b in zip(pdfhat, shifts, strict=True)]


def mle_mean(pdfhat: Sequence[tuple[float, float]], s: float) -> Pdf:
    """Most likely distribution on phat's outcomes whose mean is s."""
    return _tilt(pdfhat, [a - s for a, _ in pdfhat])


def mle_t_value(pdfhat: Sequence[tuple[float, float]], t: float, ref: float = 0.5) -> Pdf:
    """Most likely distribution on phat's outcomes with (mu - ref) / sigma = t."""
    pdf: Pdf = [(a, 1.0 / len(pdfhat)) for a, _ in pdfhat]
    for _ in range(200):
        mu, var = mean_variance(pdf)
        sigma = math.sqrt(var)
        shifts = [a - ref - t * sigma * (1.0 + ((mu - a) / sigma) ** 2) / 2.0 for a, _ in pdfhat]
        new = _tilt(pdfhat, shifts)
        change = max(abs(p - q) for (_, p), (_, q) in zip(pdf, new, strict=True))
        pdf = new
        if change < 1e-14:
            break
    return pdf


def hypothesis_value(params: SprtParams, elo: float) -> float:
    """The constrained statistic of an Elo: mean pair score, or t-value per pair."""
    if params.model is EloModel.LOGISTIC:
        return logistic_score(elo)
    return math.sqrt(2.0) * elo / NELO_PER_T


def llr(penta: Pentanomial, params: SprtParams) -> float:
    """The generalized log-likelihood ratio of H1 over H0 for these pairs."""
    total, pdfhat = score_distribution(penta.regularized())
    if params.model is EloModel.LOGISTIC:
        pdf0, pdf1 = (
            mle_mean(pdfhat, hypothesis_value(params, e)) for e in (params.elo0, params.elo1)
        )
    else:
        pdf0, pdf1 = (
            mle_t_value(pdfhat, hypothesis_value(params, e)) for e in (params.elo0, params.elo1)
        )
    return total * sum(
        p * (math.log(q1) - math.log(q0))
        for (_, p), (_, q0), (_, q1) in zip(pdfhat, pdf0, pdf1, strict=True)
    )


@dataclass(frozen=True)
class SprtState:
    llr: float
    lower_bound: float
    upper_bound: float
    decision: Decision


def sprt_state(penta: Pentanomial, params: SprtParams) -> SprtState:
    value = llr(penta, params)
    if value >= params.upper_bound:
        decision = Decision.H1
    elif value <= params.lower_bound:
        decision = Decision.H0
    else:
        decision = Decision.CONTINUE
    return SprtState(value, params.lower_bound, params.upper_bound, decision)
