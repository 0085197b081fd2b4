"""Confidence intervals for result tables: each bot against the field, each pair of bots.

Pure: no I/O. The score is over every game; its interval is
``arena.tournament.statistics.stats.score_interval`` over the full deal pairs, or none
("too few pairs") below ``MIN_PAIRS`` of them; this only groups a table's
games by who is scored and states the result in table form. A game is one
``TableGame``: its deal (any hashable key unique to the deal, e.g. the match id
and deal index), the players by seat and the winning seat.

Two neighbours on a table are *separated at 95%* when:

* they met: their head-to-head score interval excludes 50%;
* they never met: their intervals against the field do not overlap.

Everything else is "not separated": the table must not be read as saying
that one is stronger.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from arena.tournament.statistics.sprt import SprtParams, llr
from arena.tournament.statistics.stats import (
    MIN_PAIRS,
    NELO_PER_T,
    GameScore,
    PairedResults,
    Pentanomial,
    collect,
    logistic_elo,
    score_games_sigma,
    score_interval,
    score_los,
)

FINISHED = "finished"
PENTANOMIAL = "pentanomial"
TOO_FEW_PAIRS = "too_few_pairs"


@dataclass(frozen=True, slots=True)
class TableGame:
    """One game of a table: deal key, players by seat, winner seat (None: draw), statuses."""

    deal: Hashable
    players: tuple[str, str]
    winner_seat: int | None
    statuses: tuple[str, str] = ("ok", "ok")

    def score_of(self, player: str) -> float:
        if self.winner_seat is None:
            return 0.5
        return 1.0 if self.players[self.winner_seat] == player else 0.0

    @property
    def status(self) -> str:
        """``finished``, or the first seat's failure status (a forfeit counts as played)."""
        return next((s for s in self.statuses if s != "ok"), FINISHED)


@dataclass(frozen=True, slots=True)
class ScoreInterval:
    """A per-game score in [0, 1] over all ``games``, its 95% interval, and the logistic
    Elo of each.

    ``kind`` is ``pentanomial`` (the interval is over ``pairs`` full deal pairs,
    widened to hold the score; ``unpaired`` games, of pairs cut short or of an
    odd last game, are in the score but not in the interval) or ``too_few_pairs``
    (under ``MIN_PAIRS`` pairs: no interval, [0, 1] and an unbounded Elo, and no
    LOS: ``los`` is NaN).
    """

    kind: str
    games: int
    pairs: int
    unpaired: int
    score: float
    low: float
    high: float
    elo: float
    elo_low: float
    elo_high: float
    normalized_elo: float
    los: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0

    @property
    def too_few_pairs(self) -> bool:
        return self.kind == TOO_FEW_PAIRS

    def score_text(self) -> str:
        """``62.5% [54.1, 70.3]``: the score and its 95% interval, in percent, or
        ``66.7% (too few pairs)``."""
        if self.too_few_pairs:
            return f"{100 * self.score:.1f}% (too few pairs)"
        return f"{100 * self.score:.1f}% [{100 * self.low:.1f}, {100 * self.high:.1f}]"

    def elo_text(self) -> str:
        """``+89 [+30, +150]``: logistic Elo and its (asymmetric) interval, or the Elo alone
        with too few pairs."""
        if self.too_few_pairs:
            return _elo(self.elo)
        return f"{_elo(self.elo)} [{_elo(self.elo_low)}, {_elo(self.elo_high)}]"

    def los_text(self) -> str:
        return "-" if self.too_few_pairs else f"{100 * self.los:.1f}%"

    def pairs_text(self) -> str:
        """``5``, ``5 +1 unpaired``: full deal pairs, and games outside them."""
        extra = f" +{self.unpaired} unpaired" if self.unpaired else ""
        return f"{self.pairs}{extra}"

    def excludes_even(self) -> bool:
        return self.low > 0.5 or self.high < 0.5

    def to_json(self) -> dict[str, object]:
        """Plain JSON: an Elo that is infinite (an interval reaching a score of 0 or 1)
        is null, since JSON has no infinity and browsers refuse Python's ``Infinity``."""
        return {
            "kind": self.kind, "games": self.games, "pairs": self.pairs,
            "unpaired": self.unpaired, "score": round(self.score, 6),
            "score_low": round(self.low, 6), "score_high": round(self.high, 6),
            "elo": _finite(self.elo), "elo_low": _finite(self.elo_low),
            "elo_high": _finite(self.elo_high), "normalized_elo": _finite(self.normalized_elo),
            "los": None if math.isnan(self.los) else round(self.los, 6),
            "min_pairs": MIN_PAIRS,
        }  # fmt: skip


def _finite(value: float) -> float | None:
    return round(value, 3) if math.isfinite(value) else None


def _elo(value: float) -> str:
    return f"{value:+z.0f}"  # z: an Elo that rounds to zero is +0, never -0


def interval_of(results: PairedResults) -> ScoreInterval:
    """The table form of ``results``: the score of every game, its interval over the full
    deal pairs (``too_few_pairs`` below ``MIN_PAIRS``)."""
    tri = results.trinomial
    score = (tri.wins + tri.draws / 2) / tri.games
    penta = results.pentanomial
    interval = None if penta is None else score_interval(penta, score)
    los = None if penta is None else score_los(penta)
    sigma = results.game_summary.games_sigma if penta is None else score_games_sigma(penta)
    return ScoreInterval(
        kind=TOO_FEW_PAIRS if interval is None else PENTANOMIAL,
        games=tri.games,
        pairs=0 if penta is None else penta.pairs,
        unpaired=len(results.unpaired),
        score=score,
        low=0.0 if interval is None else interval.low,
        high=1.0 if interval is None else interval.high,
        elo=logistic_elo(score),
        elo_low=logistic_elo(0.0 if interval is None else interval.low),
        elo_high=logistic_elo(1.0 if interval is None else interval.high),
        normalized_elo=(score - 0.5) / sigma * NELO_PER_T,
        los=math.nan if los is None else los,
    )


def _scores(games: Iterable[TableGame], player: str) -> PairedResults | None:
    deals: dict[Hashable, int] = {}
    scores = [
        GameScore(deals.setdefault(g.deal, len(deals)), g.score_of(player), g.status)
        for g in games
        if player in g.players and g.players[0] != g.players[1]
    ]
    return collect(scores) if scores else None


def field_intervals(
    games: Sequence[TableGame], players: Iterable[str]
) -> dict[str, ScoreInterval | None]:
    """Each player's score against everyone it met (None: no game yet)."""
    out: dict[str, ScoreInterval | None] = {}
    for player in players:
        results = _scores(games, player)
        out[player] = None if results is None else interval_of(results)
    return out


def head_to_head(games: Sequence[TableGame]) -> dict[tuple[str, str], ScoreInterval]:
    """``{(player, opponent): player's score against opponent}`` for every pair that met."""
    by_pair: dict[frozenset[str], list[TableGame]] = {}
    for game in games:
        if game.players[0] != game.players[1]:
            by_pair.setdefault(frozenset(game.players), []).append(game)
    out: dict[tuple[str, str], ScoreInterval] = {}
    for pair, pair_games in by_pair.items():
        a, b = sorted(pair)
        for player, opponent in ((a, b), (b, a)):
            results = _scores(pair_games, player)
            assert results is not None
            out[(player, opponent)] = interval_of(results)
    return out


def separated(
    upper: str,
    lower: str,
    field: dict[str, ScoreInterval | None],
    h2h: dict[tuple[str, str], ScoreInterval],
) -> bool:
    """Whether ``upper`` and ``lower`` are separated at 95% (the module's rule)."""
    met = h2h.get((upper, lower))
    if met is not None:
        return met.excludes_even()
    a, b = field.get(upper), field.get(lower)
    if a is None or b is None:
        return False
    return a.low > b.high or b.low > a.high


def separation_notes(
    order: Sequence[str],
    field: dict[str, ScoreInterval | None],
    h2h: dict[tuple[str, str], ScoreInterval],
) -> list[str]:
    """One sentence per pair of neighbours in ``order`` that is not separated at 95%."""
    notes = []
    for upper, lower in itertools.pairwise(order):
        if field.get(upper) is None and field.get(lower) is None:
            continue
        if not separated(upper, lower, field, h2h):
            how = "head to head" if (upper, lower) in h2h else "against the field"
            notes.append(
                f"{upper} and {lower} are not separated at 95% ({how}): their order may be luck"
            )
    return notes


@dataclass(frozen=True, slots=True)
class LlrPoint:
    """The LLR after ``pairs`` full deal pairs."""

    pairs: int
    llr: float


def llr_history(pair_scores: Sequence[float], params: SprtParams) -> list[LlrPoint]:
    """The LLR after each pair, given bot A's pair scores (0, 0.5, 1, 1.5, 2) in order."""
    counts = [0, 0, 0, 0, 0]
    points = []
    for index, score in enumerate(pair_scores):
        slot = round(2 * score)
        if not 0 <= slot <= 4 or slot != 2 * score:
            raise ValueError(f"a pair score is 0, 0.5, 1, 1.5 or 2, got {score!r}")
        counts[slot] += 1
        penta = Pentanomial((counts[0], counts[1], counts[2], counts[3], counts[4]))
        points.append(LlrPoint(index + 1, llr(penta, params)))
    return points


def pair_scores(games: Sequence[TableGame], player: str) -> list[float]:
    """``player``'s score over each full deal pair, in the order the pairs completed."""
    open_deals: dict[Hashable, float] = {}
    out: list[float] = []
    for game in games:
        if player not in game.players:
            continue
        if game.deal in open_deals:
            out.append(open_deals.pop(game.deal) + game.score_of(player))
        else:
            open_deals[game.deal] = game.score_of(player)
    return out


@dataclass(frozen=True)
class TableIntervals:
    """A table's intervals: each player against the field, each pair that met."""

    field: dict[str, ScoreInterval | None]
    h2h: dict[tuple[str, str], ScoreInterval]

    @classmethod
    def of(cls, games: Sequence[TableGame], players: Iterable[str]) -> TableIntervals:
        return cls(field_intervals(games, players), head_to_head(games))

    def notes(self, order: Sequence[str]) -> list[str]:
        return separation_notes(order, self.field, self.h2h)

    def separated_from_next(self, order: Sequence[str]) -> list[bool]:
        """For each player in ``order``: separated at 95% from the next one (last: False)."""
        return [
            separated(a, b, self.field, self.h2h) for a, b in itertools.pairwise(order)
        ] + [False][: len(order) > 0]
