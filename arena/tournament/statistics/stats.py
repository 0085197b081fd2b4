"""Paired-deal statistics for two bots: pentanomial and trinomial figures, Elo, LOS.

Pure: no I/O. Games 2k and 2k+1 of a match share a deal (each bot plays each
seat once), so the natural unit is the *pair*: bot A's points over the two
games of a deal, one of 0, 0.5, 1, 1.5 or 2. The pentanomial counts those
five outcomes in that order:

    index 0: LL         pair score 0
    index 1: LD, DL     pair score 0.5
    index 2: DD, WL, LW pair score 1
    index 3: WD, DW     pair score 1.5
    index 4: WW         pair score 2

Definitions follow fishtest (``server/fishtest/stats``) and fastchess:

* score ``mu``: bot A's mean points per game, in [0, 1];
* pentanomial variance: of the pair score scaled to [0, 1] (points / 2),
  so the variance of ``mu`` is ``var_pair / pairs``; trinomial (unpaired)
  variance: of the single game score, ``var_game / games``;
* fishtest's 95% interval of ``mu``: ``mu +- z * sqrt(var / n)``, z =
  Phi^-1(0.975), clamped to [0, 1]. It is kept in ``Summary`` as fishtest
  has it, but nothing shown to people uses it: for few pairs, or pairs all
  alike, the sample variance is near 0 and it claims a certainty the games
  do not have (five drawn pairs: [0.490, 0.510]). What is shown is
  ``score_interval`` (below);
* logistic Elo ``-400 log10(1/mu - 1)``, its interval the image of the
  score interval; normalized Elo ``(mu - 0.5) / sigma_game * 800 / ln 10``
  with ``sigma_game = sqrt(2 * var_pair)`` (pentanomial) or
  ``sqrt(var_game)`` (trinomial), its interval the same linear image;
* likelihood of superiority ``Phi((mu - 0.5) / sqrt(var / n))``.

As fishtest does, a zero count is replaced by 1e-3 before these figures
(and the LLR) are computed, so that a clean sweep still has a finite
variance and Elo; with all counts non-zero the figures are exact.

``score_interval`` is the interval shown everywhere (tables, `arena match`,
`arena stats`): none below ``MIN_PAIRS`` deal pairs ("too few pairs"); above,
the Agresti-Coull construction (Agresti and Coull 1998, "Approximate is better
than 'exact' for interval estimation of binomial proportions", The American
Statistician 52(2)) carried over to deal pairs: AC adds z^2/2 won and z^2/2
lost games; here they come as z^2/4 pairs WW and z^2/4 pairs LL added to the
counts. The interval is the augmented mean +- z times the augmented pair
variance over the n observed pairs, clamped to [0, 1] and widened to hold the
observed score. The pseudo-pairs keep the variance away from 0 when every
pair is alike (no losses, all draws), where the plain normal interval
collapses; dividing by the observed pairs (not n + z^2/2) keeps the coverage
up for two-valued pentanomials (LL and WL pairs only). Its coverage by simulation,
over a grid of win and draw rates and of how far the seat or the deal decides a
pair, is printed by benchmarks/interval_coverage.py (figures in benchmarks/RESULTS.md).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

PAIR_SCORES: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0)
GAME_SCORES: tuple[float, ...] = (0.0, 0.5, 1.0)
REGULARIZER = 1e-3
Z95 = NormalDist().inv_cdf(0.975)
MIN_PAIRS = 5  # below it, no interval: "too few pairs"
PSEUDO_PAIRS = Z95 * Z95 / 4  # WW and LL each: Agresti-Coull's z^2/2 won and lost games
NELO_PER_T = 800 / math.log(10)  # normalized Elo per unit of t-value per game


def phi(x: float) -> float:
    """Standard normal cumulative distribution function."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def logistic_elo(score: float) -> float:
    """Logistic Elo difference of a per-game score in (0, 1)."""
    if not 0.0 < score < 1.0:
        return math.inf if score >= 1.0 else -math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def logistic_score(elo: float) -> float:
    """Expected per-game score of a logistic Elo difference."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def _check_counts(counts: Sequence[int], size: int, what: str) -> None:
    if len(counts) != size:
        raise ValueError(f"{what} needs {size} counts, got {len(counts)}")
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in counts):
        raise ValueError(f"{what} counts must be non-negative integers: {tuple(counts)}")
    if sum(counts) == 0:
        raise ValueError(f"{what} counts are all zero")


@dataclass(frozen=True)
class Pentanomial:
    """Counts of bot A's pair scores 0, 0.5, 1, 1.5, 2 (LL, LD, DD/WL, WD, WW)."""

    counts: tuple[int, int, int, int, int]

    def __post_init__(self) -> None:
        _check_counts(self.counts, 5, "a pentanomial")

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def swapped(self) -> Pentanomial:
        """The same pairs seen from bot B."""
        c = self.counts
        return Pentanomial((c[4], c[3], c[2], c[1], c[0]))

    def regularized(self) -> tuple[float, ...]:
        return tuple(float(c) if c else REGULARIZER for c in self.counts)


@dataclass(frozen=True)
class Trinomial:
    """Per-game counts of bot A's losses, draws and wins (pairing ignored)."""

    losses: int
    draws: int
    wins: int

    def __post_init__(self) -> None:
        _check_counts((self.losses, self.draws, self.wins), 3, "a trinomial")

    @property
    def games(self) -> int:
        return self.losses + self.draws + self.wins

    def swapped(self) -> Trinomial:
        return Trinomial(self.wins, self.draws, self.losses)

    def regularized(self) -> tuple[float, ...]:
        return tuple(float(c) if c else REGULARIZER for c in (self.losses, self.draws, self.wins))


def score_distribution(counts: Sequence[float]) -> tuple[float, list[tuple[float, float]]]:
    """(total, [(value in [0, 1], probability)]) of 3 or 5 outcome counts."""
    total = sum(counts)
    last = len(counts) - 1
    return total, [(i / last, c / total) for i, c in enumerate(counts)]


def mean_variance(pdf: Sequence[tuple[float, float]]) -> tuple[float, float]:
    mean = sum(p * a for a, p in pdf)
    return mean, sum(p * (a - mean) ** 2 for a, p in pdf)


@dataclass(frozen=True)
class Interval:
    low: float
    high: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its 95% interval."""

    value: float
    interval: Interval

    def __str__(self) -> str:
        return f"{self.value:.2f} +- {self.interval.half_width:.2f}"


@dataclass(frozen=True)
class Summary:
    """Score, Elo (both models) and LOS of bot A from one kind of counts.

    ``n`` is the number of independent units (pairs, or games for a
    trinomial); ``variance`` is of one unit's score scaled to [0, 1];
    ``games_sigma`` the standard deviation per game used by normalized Elo.
    """

    kind: str
    n: int
    games: int
    score: Estimate
    variance: float
    games_sigma: float
    logistic_elo: Estimate
    normalized_elo: Estimate
    los: float


def _summary(kind: str, n: int, games: int, counts: Sequence[float]) -> Summary:
    total, pdf = score_distribution(counts)
    mu, var = mean_variance(pdf)
    sigma_mean = math.sqrt(var / total)
    score = Estimate(
        mu, Interval(max(0.0, mu - Z95 * sigma_mean), min(1.0, mu + Z95 * sigma_mean))
    )
    games_sigma = math.sqrt(2.0 * var) if len(counts) == 5 else math.sqrt(var)

    def nelo(s: float) -> float:
        return (s - 0.5) / games_sigma * NELO_PER_T

    low, high = score.interval.low, score.interval.high
    return Summary(
        kind=kind,
        n=n,
        games=games,
        score=score,
        variance=var,
        games_sigma=games_sigma,
        logistic_elo=Estimate(logistic_elo(mu), Interval(logistic_elo(low), logistic_elo(high))),
        normalized_elo=Estimate(nelo(mu), Interval(nelo(low), nelo(high))),
        los=phi((mu - 0.5) / sigma_mean),
    )


def pentanomial_summary(penta: Pentanomial) -> Summary:
    return _summary("pentanomial", penta.pairs, 2 * penta.pairs, penta.regularized())


def trinomial_summary(tri: Trinomial) -> Summary:
    return _summary("trinomial", tri.games, tri.games, tri.regularized())


def score_interval(penta: Pentanomial, score: float | None = None) -> Interval | None:
    """The 95% interval of the per-game score over ``penta``'s deal pairs, shown to people
    (the module's docstring); None below ``MIN_PAIRS`` pairs. ``score`` (default: the
    pairs' own mean) is the point it must hold: the interval is widened to it."""
    if penta.pairs < MIN_PAIRS:
        return None
    mean, sd = _augmented(penta)
    point = pair_mean(penta) if score is None else score
    low, high = mean - Z95 * sd, mean + Z95 * sd
    return Interval(max(0.0, min(low, point)), min(1.0, max(high, point)))


def score_los(penta: Pentanomial) -> float | None:
    """The likelihood of superiority that goes with ``score_interval`` (None below
    ``MIN_PAIRS`` pairs): Phi((augmented mean - 1/2) / its standard error)."""
    if penta.pairs < MIN_PAIRS:
        return None
    mean, sd = _augmented(penta)
    return phi((mean - 0.5) / sd)


def score_games_sigma(penta: Pentanomial) -> float:
    """The per-game standard deviation that goes with ``score_interval`` (normalized Elo's
    unit): ``sqrt(2 var)`` of the pairs with the pseudo-pairs added, never 0."""
    _, var = _augmented_mean_variance(penta)
    return math.sqrt(2.0 * var)


def _augmented(penta: Pentanomial) -> tuple[float, float]:
    """(mean, standard error of the mean) of the pairs with the pseudo-pairs added."""
    mean, var = _augmented_mean_variance(penta)
    return mean, math.sqrt(var / penta.pairs)


def _augmented_mean_variance(penta: Pentanomial) -> tuple[float, float]:
    counts = list(map(float, penta.counts))
    counts[0] += PSEUDO_PAIRS
    counts[4] += PSEUDO_PAIRS
    _, pdf = score_distribution(counts)
    return mean_variance(pdf)


def pair_mean(penta: Pentanomial) -> float:
    """The mean per-game score over the pairs, without any regularization."""
    return sum(c * i / 4 for i, c in enumerate(penta.counts)) / penta.pairs


@dataclass(frozen=True)
class GameScore:
    """One finished game between bots A and B: its deal and A's points.

    ``score_a`` is 1 for a win of A, 0.5 for a draw and 0 for a loss. A
    forfeited game counts as played; its status is kept beside the score.
    """

    deal: int
    score_a: float
    status: str = "finished"

    def __post_init__(self) -> None:
        if self.score_a not in GAME_SCORES:
            raise ValueError(f"a game score is 0, 0.5 or 1, got {self.score_a!r}")


@dataclass(frozen=True)
class PairedResults:
    """Games grouped by deal: full pairs in the pentanomial, the rest listed.

    ``trinomial`` counts every game (paired or not); ``paired_trinomial``
    only the games of full pairs; ``statuses`` how many games ended how.
    """

    pentanomial: Pentanomial | None
    trinomial: Trinomial
    unpaired: tuple[GameScore, ...]
    paired_trinomial: Trinomial | None
    statuses: tuple[tuple[str, int], ...]

    @property
    def pair_summary(self) -> Summary | None:
        return None if self.pentanomial is None else pentanomial_summary(self.pentanomial)

    @property
    def game_summary(self) -> Summary:
        return trinomial_summary(self.trinomial)

    @property
    def variance_ratio(self) -> float | None:
        """Variance of the mean score, paired over unpaired (below 1: pairing helps).

        Both are taken over the games of full pairs only (``paired_trinomial``),
        so the ratio compares the same games analysed two ways.
        """
        if self.pentanomial is None or self.paired_trinomial is None:
            return None
        pairs = pentanomial_summary(self.pentanomial)
        games = trinomial_summary(self.paired_trinomial)
        return (pairs.variance / pairs.n) / (games.variance / games.n)


def collect(games: Iterable[GameScore]) -> PairedResults:
    """Group games by deal; a deal with one game is unpaired, more than two is an error."""
    by_deal: dict[int, list[GameScore]] = defaultdict(list)
    for game in games:
        by_deal[game.deal].append(game)
    if not by_deal:
        raise ValueError("no games")
    counts = [0, 0, 0, 0, 0]
    wdl = [0, 0, 0]
    paired_wdl = [0, 0, 0]
    unpaired: list[GameScore] = []
    statuses: dict[str, int] = defaultdict(int)
    for deal in sorted(by_deal):
        group = by_deal[deal]
        if len(group) > 2:
            raise ValueError(f"deal {deal} has {len(group)} games; a deal is played twice")
        for game in group:
            wdl[int(game.score_a * 2)] += 1
            statuses[game.status] += 1
        if len(group) == 1:
            unpaired.append(group[0])
        else:
            counts[round(2 * (group[0].score_a + group[1].score_a))] += 1
            for game in group:
                paired_wdl[int(game.score_a * 2)] += 1
    penta = (
        Pentanomial((counts[0], counts[1], counts[2], counts[3], counts[4]))
        if sum(counts)
        else None
    )
    return PairedResults(
        pentanomial=penta,
        trinomial=Trinomial(wdl[0], wdl[1], wdl[2]),
        unpaired=tuple(unpaired),
        paired_trinomial=Trinomial(*paired_wdl) if penta else None,
        statuses=tuple(sorted(statuses.items())),
    )
