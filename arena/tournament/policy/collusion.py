"""The collusion report: pairs of bots whose results against each other depart from
what their results against everyone else predict.

Method (docs/guide/fair-play.md, "The collusion report"): every stored game counts
1 for a win, 1/2 for a draw. For each pair of bots with at least
``min_games`` games against each other, A's and B's Bradley-Terry strengths
are fitted by maximum likelihood (Hunter's MM iteration) to every game *but*
the pair's own, everyone else's held where the fit to every game put them
(one pair's games barely move them), each bot with one virtual draw against
a fixed anchor so that a bot that always wins keeps a finite strength. The
expected score of A against B is then ``g_A / (g_A + g_B)``. The pair's
observed score S over n games is tested against it with the likelihood-ratio
(G) statistic of a binomial model, ``G = 2 [L(S/n) - L(p)]`` with
``L(q) = S ln q + (n - S) ln(1 - q)``, whose p-value is the chi-square tail
with one degree of freedom. A pair whose p-value is under ``alpha`` is
flagged; the report lists it with its games.

What it cannot see: the expected score ignores the uncertainty of the fitted
strengths, so with few games against others (``other_games``) the p-value
is too small; draws make the binomial variance too large (a cautious test);
and collusion that throws only a few games of many stays under any level.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from arena.store import ResultRow, same_owner

MIN_GAMES = 8
ALPHA = 1e-3
_ITERATIONS = 2000
_TOLERANCE = 1e-8

Pair = tuple[str, str]  # (a, b) with a < b


@dataclass(frozen=True, slots=True)
class PairEvidence:
    """One pair's games against each other, and what the rest of the games predict."""

    bots: Pair  # the first is the bot the scores are of
    owners: tuple[str | None, str | None]
    game_ids: tuple[int, ...]
    observed: float  # the first bot's score against the second (win 1, draw 1/2)
    expected: float  # its expected score, from ratings fitted without these games
    other_games: tuple[int, int]  # each bot's games against everyone else
    g: float  # the likelihood-ratio statistic
    p_value: float
    flagged: bool

    @property
    def games(self) -> int:
        return len(self.game_ids)

    @property
    def same_owner(self) -> bool:
        return same_owner(self.owners)

    @property
    def favoured(self) -> str:
        """The bot that scored more than expected against the other."""
        return self.bots[0] if self.observed >= self.expected else self.bots[1]

    def to_json(self) -> dict[str, object]:
        return {
            "bots": list(self.bots), "owners": list(self.owners), "same_owner": self.same_owner,
            "games": self.games, "game_ids": list(self.game_ids),
            "observed_score": self.observed, "expected_score": round(self.expected, 4),
            "other_games": list(self.other_games), "g": round(self.g, 4),
            "p_value": self.p_value, "favoured": self.favoured, "flagged": self.flagged,
        }  # fmt: skip


@dataclass
class _Tally:
    score: float = 0.0  # of the pair's first bot
    games: int = 0
    ids: list[int] = field(default_factory=list)


def _tallies(results: Iterable[ResultRow]) -> tuple[dict[Pair, _Tally], dict[str, str | None]]:
    tallies: dict[Pair, _Tally] = defaultdict(_Tally)
    owners: dict[str, str | None] = {}
    for row in results:
        a, b = row.bots
        owners[a], owners[b] = row.owners
        if a == b:
            continue
        first_wins = 0.5 if row.winner_seat is None else float(row.winner_seat == 0)
        pair, score = ((a, b), first_wins) if a < b else ((b, a), 1.0 - first_wins)
        tally = tallies[pair]
        tally.score += score
        tally.games += 1
        tally.ids.append(row.game_id)
    return tallies, owners


class _Field:
    """Every pair's games as Bradley-Terry's MM iteration reads them, with one pair left
    out at a time (``fit(without=...)``) and the last fit as the next one's start."""

    def __init__(self, tallies: Mapping[Pair, _Tally]) -> None:
        self.bots = sorted({bot for pair in tallies for bot in pair})
        index = {bot: i for i, bot in enumerate(self.bots)}
        self.index = index
        self.wins = [0.5] * len(self.bots)  # the prior: half a win against the anchor
        self.games: list[dict[int, int]] = [{} for _ in self.bots]
        self.score: dict[tuple[int, int], float] = {}
        for (a, b), tally in tallies.items():
            if not tally.games:
                continue
            i, j = index[a], index[b]
            self.wins[i] += tally.score
            self.wins[j] += tally.games - tally.score
            self.games[i][j] = self.games[i].get(j, 0) + tally.games
            self.games[j][i] = self.games[j].get(i, 0) + tally.games
            self.score[i, j] = tally.score
        self.strength = [1.0] * len(self.bots)

    def fit(self, without: Pair | None = None) -> dict[str, float]:
        """Strengths fitted to every game; with ``without`` (after a fit to every game), the
        pair's two strengths refitted to every game but the pair's own, everyone else's
        held where the fit to every game put them (one pair's games barely move them)."""
        wins = list(self.wins)
        left: tuple[int, int, int] | None = None
        moving: Sequence[int] = range(len(self.bots))
        if without is not None:
            i, j = self.index[without[0]], self.index[without[1]]
            n = self.games[i].pop(j)
            self.games[j].pop(i)
            wins[i] -= self.score[i, j]
            wins[j] -= n - self.score[i, j]
            left, moving = (i, j, n), (i, j)
        try:
            strength = list(self.strength)
            for _ in range(_ITERATIONS):
                moved = 0.0
                for i in moving:
                    g = strength[i]
                    denominator = 1.0 / (g + 1.0)  # the anchor's virtual game
                    for j, n in self.games[i].items():
                        denominator += n / (g + strength[j])
                    new = wins[i] / denominator
                    moved = max(moved, abs(new - g) / g)
                    strength[i] = new
                if moved < _TOLERANCE:
                    break
        finally:
            if left is not None:
                i, j, n = left
                self.games[i][j] = n
                self.games[j][i] = n
        if without is None:
            self.strength = strength
        return dict(zip(self.bots, strength, strict=True))


def fit_strengths(tallies: Mapping[Pair, _Tally]) -> dict[str, float]:
    """Bradley-Terry strengths (MM), each bot with one virtual draw against the anchor."""
    return _Field(tallies).fit()


def likelihood_ratio(score: float, games: int, p: float) -> tuple[float, float]:
    """The G statistic of ``score`` in ``games`` against expected share ``p``, and its
    p-value (chi-square, one degree of freedom)."""
    p = min(max(p, 1e-12), 1 - 1e-12)

    def log_likelihood(q: float) -> float:
        total = 0.0
        if score > 0:
            total += score * math.log(q)
        if games - score > 0:
            total += (games - score) * math.log(1 - q)
        return total

    g = max(0.0, 2 * (log_likelihood(min(max(score / games, 1e-300), 1 - 1e-16))
                      - log_likelihood(p)))  # fmt: skip
    return g, math.erfc(math.sqrt(g / 2))


def collusion_report(
    results: Sequence[ResultRow], *, min_games: int = MIN_GAMES, alpha: float = ALPHA
) -> list[PairEvidence]:
    """Every pair with at least ``min_games`` games against each other, most suspicious
    (smallest p-value) first; ``flagged`` when the p-value is under ``alpha``."""
    if min_games < 1:
        raise ValueError(f"min_games must be at least 1, got {min_games}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    tallies, owners = _tallies(results)
    played: dict[str, int] = defaultdict(int)
    for (a, b), tally in tallies.items():
        played[a] += tally.games
        played[b] += tally.games
    field_ = _Field(tallies)
    field_.fit()  # every game: where each fit without one pair starts
    report = []
    for pair, tally in sorted(tallies.items()):
        if tally.games < min_games:
            continue
        strength = field_.fit(without=pair)
        a, b = pair
        expected_share = strength.get(a, 1.0) / (strength.get(a, 1.0) + strength.get(b, 1.0))
        g, p_value = likelihood_ratio(tally.score, tally.games, expected_share)
        report.append(PairEvidence(
            bots=pair, owners=(owners.get(a), owners.get(b)), game_ids=tuple(tally.ids),
            observed=tally.score, expected=expected_share * tally.games,
            other_games=(played[a] - tally.games, played[b] - tally.games), g=g,
            p_value=p_value, flagged=p_value < alpha,
        ))  # fmt: skip
    return sorted(report, key=lambda e: (e.p_value, e.bots))


def report_lines(report: Sequence[PairEvidence], *, everything: bool = False) -> list[str]:
    """The report for people: flagged pairs (every pair with ``everything``) with their
    evidence; a line saying so when there is none."""
    shown = [e for e in report if everything or e.flagged]
    if not shown:
        return [f"no suspicious pair among {len(report)} pairs with enough games"]
    lines = []
    for e in shown:
        owners = " (one owner)" if e.same_owner else ""
        mark = "FLAGGED " if e.flagged else ""
        lines.append(
            f"{mark}{e.bots[0]} vs {e.bots[1]}{owners}: {e.games} games, {e.bots[0]} scored"
            f" {e.observed:g} where {e.expected:.1f} was expected (games against others:"
            f" {e.other_games[0]}, {e.other_games[1]}); G = {e.g:.1f}, p = {e.p_value:.2g};"
            f" favours {e.favoured}"
        )
        lines.append("  games: " + " ".join(str(i) for i in e.game_ids))
    return lines
