"""Standings, tie-breaks and the crosstable of a tournament.

Points: a game won scores 1, a draw 1/2, a loss 0; a bye scores
``bye_points`` (the runner passes the number of games in a match, i.e. a bye
counts as a match won outright).

Tie-breaks, applied in this order after points:

1. **Buchholz**: the sum of the final points of every opponent met, once per
   match (a bye adds nothing).
2. **Sonneborn-Berger**: for every match, the fraction of that match's games
   the bot scored, times the opponent's final points.
3. Games won, then the bot's name (so the order is total and stable).

Points and tie-breaks are summed as exact fractions and shown as floats: a
match of 3 or 10 games scores thirds or tenths, whose float sums depend on
the order of the matches, and two bots tied on Sonneborn-Berger would be
ranked by rounding noise instead of by the next tie-break.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """One finished game as standings see it: its match, its bots by seat, and the winner
    (None for a draw)."""

    match_id: int
    bots: tuple[str, str]  # by seat
    winner: str | None


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int  # 1-based
    bot: str
    points: float
    games: int
    wins: int
    draws: int
    losses: int
    byes: int
    buchholz: float
    sonneborn_berger: float


@dataclass(frozen=True, slots=True)
class _MatchScore:
    opponent: str
    points: float
    games: int


def _game_points(game: GameOutcome, bot: str) -> float:
    if game.winner is None:
        return 0.5
    return 1.0 if game.winner == bot else 0.0


def _match_scores(games: Iterable[GameOutcome]) -> dict[str, list[_MatchScore]]:
    by_match: dict[int, list[GameOutcome]] = defaultdict(list)
    for game in games:
        by_match[game.match_id].append(game)
    scores: dict[str, list[_MatchScore]] = defaultdict(list)
    for match_games in by_match.values():
        bots = sorted(set(match_games[0].bots))
        for bot in bots:
            other = next((b for b in bots if b != bot), bot)
            points = sum(_game_points(g, bot) for g in match_games)
            scores[bot].append(_MatchScore(other, points, len(match_games)))
    return scores


def compute_standings(
    bots: Sequence[str],
    games: Iterable[GameOutcome],
    *,
    byes: Mapping[str, int] | None = None,
    bye_points: float = 0.0,
) -> tuple[Standing, ...]:
    """Rank ``bots`` by points, Buchholz, Sonneborn-Berger, wins, name."""
    games = list(games)
    bye_counts = dict(byes or {})
    matches = _match_scores(games)
    points = {
        bot: sum(m.points for m in matches.get(bot, [])) + bye_points * bye_counts.get(bot, 0)
        for bot in bots
    }
    counts: dict[str, list[int]] = {bot: [0, 0, 0] for bot in bots}  # wins, draws, losses
    for game in games:
        for bot in game.bots:
            if bot in counts:
                value = _game_points(game, bot)
                counts[bot][0 if value == 1.0 else 1 if value == 0.5 else 2] += 1
    exact = {bot: Fraction(value) for bot, value in points.items()}
    rows: list[Standing] = []
    keys: dict[str, tuple[Fraction, Fraction, Fraction, int, str]] = {}
    for bot in bots:
        played = matches.get(bot, [])
        wins, draws, losses = counts[bot]
        buchholz = sum((exact.get(m.opponent, Fraction(0)) for m in played), Fraction(0))
        sonneborn_berger = sum(
            (exact.get(m.opponent, Fraction(0)) * Fraction(m.points) / m.games for m in played),
            Fraction(0),
        )
        keys[bot] = (-exact[bot], -buchholz, -sonneborn_berger, -wins, bot)
        rows.append(
            Standing(
                rank=0,
                bot=bot,
                points=points[bot],
                games=wins + draws + losses,
                wins=wins,
                draws=draws,
                losses=losses,
                byes=bye_counts.get(bot, 0),
                buchholz=float(buchholz),
                sonneborn_berger=float(sonneborn_berger),
            )
        )
    rows.sort(key=lambda r: keys[r.bot])
    return tuple(replace(row, rank=i + 1) for i, row in enumerate(rows))


def crosstable(games: Iterable[GameOutcome]) -> dict[tuple[str, str], float]:
    """Points each bot scored against each opponent: ``{(bot, opponent): points}``."""
    table: dict[tuple[str, str], float] = defaultdict(float)
    for game in games:
        a, b = game.bots
        table[(a, b)] += _game_points(game, a)
        table[(b, a)] += _game_points(game, b)
    return dict(table)
