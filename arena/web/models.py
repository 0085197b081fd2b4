"""What the pages show, as plain frozen data, and the one interface that supplies it.

The pages and JSON endpoints are written against ``WebSource``; the store
adapter (``arena.web.source``) is the only code that knows the store's
tables. Every model has ``to_json`` so that the JSON endpoints say exactly
what the HTML shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.referee.result_words import result_words
from arena.store.models import conservative_rating
from arena.tournament.view.committed import parameter_fields
from arena.web.plots import RatingPoint

Json = dict[str, object]


@dataclass(frozen=True)
class IntervalCells:
    """A row's score against the field with its 95% interval
    (arena.tournament.statistics.intervals), as the tables show it and as its JSON says it;
    ``NO_GAMES`` before any game."""

    score: str = "-"
    elo: str = "-"
    pairs: str = "0"
    detail: Json | None = None
    separated_from_next: bool = False

    def to_json(self) -> Json:
        return {
            "interval": self.detail,
            "interval_text": {"score": self.score, "elo": self.elo, "pairs": self.pairs},
            "separated_from_next": self.separated_from_next,
        }


NO_GAMES = IntervalCells()


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    bot: str
    version: str | None
    mu: float
    sigma: float
    games: int
    wins: int = 0
    draws: int = 0
    losses: int = 0
    timeouts: int = 0
    crashes: int = 0
    illegal_actions: int = 0
    interval: IntervalCells = NO_GAMES

    @property
    def conservative(self) -> float:
        """The ranking score: mu - 3 sigma."""
        return conservative_rating(self.mu, self.sigma)

    @property
    def failures(self) -> int:
        return self.timeouts + self.crashes + self.illegal_actions

    def failure_text(self) -> str:
        """Failures as a share of games, e.g. ``"2% (1 timeout, 1 crash)"``."""
        if not self.failures:
            return "none"
        share = 100 * self.failures / self.games if self.games else 0.0
        parts = [
            f"{count} {name}"
            for count, name in (
                (self.timeouts, "timeouts"),
                (self.crashes, "crashes"),
                (self.illegal_actions, "illegal"),
            )
            if count
        ]
        return f"{share:.0f}% ({', '.join(parts)})"

    def to_json(self) -> Json:
        return {
            "rank": self.rank,
            "bot": self.bot,
            "version": self.version,
            "mu": round(self.mu, 3),
            "sigma": round(self.sigma, 3),
            "conservative": round(self.conservative, 3),
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "timeouts": self.timeouts,
            "crashes": self.crashes,
            "illegal_actions": self.illegal_actions,
            **self.interval.to_json(),
            "failures": self.failure_text(),
        }


@dataclass(frozen=True)
class TournamentSummary:
    id: int
    name: str
    format: str
    status: str  # "created", "running", "interrupted" (no live runner), "finished"
    created_at: str
    bots: int
    games_played: int
    games_scheduled: int | None
    commitment: str | None = None  # the seed commitment, public from creation
    revealed_secret: str | None = None  # hex, once finished (docs/reference/VERIFY.md)
    audit_digest: str | None = None  # the audit bundle's, once finished (VERIFY.md)

    def to_json(self) -> Json:
        return {
            "commitment": self.commitment,
            "revealed_secret": self.revealed_secret,
            "audit_digest": self.audit_digest,
            "id": self.id,
            "name": self.name,
            "format": self.format,
            "status": self.status,
            "created_at": self.created_at,
            "bots": self.bots,
            "games_played": self.games_played,
            "games_scheduled": self.games_scheduled,
        }


@dataclass(frozen=True)
class GameSummary:
    id: int
    bots: tuple[str, str]  # by seat
    finished: bool
    winner_seat: int | None
    reason: str | None
    points: tuple[int, int] | None
    tournament_id: int | None = None
    tournament: str = ""
    match_id: int | None = None
    versions: tuple[str, str] = ("", "")
    statuses: tuple[str, str] = ("ok", "ok")  # arena.referee.BotStatus values by seat
    actions: int = 0
    time_ms: tuple[float, float] = (0.0, 0.0)
    played_at: str = ""

    @property
    def winner(self) -> str | None:
        return None if self.winner_seat is None else self.bots[self.winner_seat]

    def result_text(self) -> str:
        """The result in plain words ("a won: b had no bridge left on the board")."""
        if not self.finished:
            return "in progress"
        return result_words(self.bots, self.winner_seat, self.reason, self.statuses)

    def failures(self) -> list[str]:
        """``"bot: timeout"`` for each seat whose status is not ok."""
        return [
            f"{bot}: {status}" for bot, status in zip(self.bots, self.statuses, strict=True)
            if status != "ok"
        ]

    def to_json(self) -> Json:
        return {
            "id": self.id,
            "bots": list(self.bots),
            "versions": list(self.versions),
            "finished": self.finished,
            "winner_seat": self.winner_seat,
            "winner": self.winner,
            "reason": self.reason,
            "points": None if self.points is None else list(self.points),
            "statuses": list(self.statuses),
            "actions": self.actions,
            "time_ms": list(self.time_ms),
            "tournament_id": self.tournament_id,
            "tournament": self.tournament,
            "match_id": self.match_id,
            "played_at": self.played_at,
        }


@dataclass(frozen=True)
class StandingRow:
    rank: int
    bot: str
    score: float
    played: int
    wins: int
    draws: int
    losses: int
    byes: int = 0
    buchholz: float = 0.0
    sonneborn_berger: float = 0.0
    interval: IntervalCells = NO_GAMES

    def to_json(self) -> Json:
        return {
            "rank": self.rank,
            "bot": self.bot,
            "score": self.score,
            "played": self.played,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "byes": self.byes,
            "buchholz": self.buchholz,
            "sonneborn_berger": self.sonneborn_berger,
            **self.interval.to_json(),
        }


@dataclass(frozen=True)
class SprtView:
    """An SPRT test's state as its page shows it (``arena.tournament.policy.sprt_format``)."""

    hypotheses: str  # e.g. "H0: normalized Elo 0, H1: 40 (alpha 0.05, beta 0.05)"
    sentence: str  # the decision, or the LLR so far, in words
    verdict: str
    history: tuple[float, ...]  # the LLR after each pair of the complete prefix
    lower_bound: float
    upper_bound: float
    decided_at: int | None
    detail: Json  # SprtProgress.to_json()


@dataclass(frozen=True)
class TournamentDetail:
    summary: TournamentSummary
    standings: tuple[StandingRow, ...]
    # crosstable[(row_bot, column_bot)] = (row's score, games played) in their games
    crosstable: Mapping[tuple[str, str], tuple[float, int]]
    games: tuple[GameSummary, ...]
    separation_notes: tuple[str, ...] = ()
    """Neighbours in the standings that the games do not separate at 95%."""
    sprt: SprtView | None = None  # format sprt only
    unrated_games: tuple[GameSummary, ...] = ()
    """Games between two bots of one owner: played and counted here, never rated."""
    parameters: str | None = None
    """The exact text its commitment binds (``arena.tournament.view.committed``), public
    from creation; None for a ladder or a tournament without a commitment."""

    def parameter_fields(self) -> list[tuple[str, str]]:
        """``parameters`` field by field, as the page shows them."""
        return [] if self.parameters is None else parameter_fields(
            self.parameters, self.summary.commitment)

    def crosstable_bots(self) -> list[str]:
        return [row.bot for row in self.standings]

    def cell(self, row_bot: str, column_bot: str) -> str:
        if row_bot == column_bot:
            return ""
        found = self.crosstable.get((row_bot, column_bot))
        if found is None:
            return "·"
        score, played = found
        return f"{score:g}/{played}"

    def to_json(self) -> Json:
        bots = self.crosstable_bots()
        return {
            "tournament": {**self.summary.to_json(), "parameters": self.parameters},
            "standings": [row.to_json() for row in self.standings],
            "crosstable": {
                "bots": bots,
                "cells": [
                    [
                        None
                        if (a, b) not in self.crosstable
                        else {"score": self.crosstable[a, b][0], "games": self.crosstable[a, b][1]}
                        for b in bots
                    ]
                    for a in bots
                ],
            },
            "games": [game.to_json() for game in self.games],
            "unrated_games": [game.to_json() for game in self.unrated_games],
            "separation_notes": list(self.separation_notes),
            "sprt": None if self.sprt is None else self.sprt.detail,
        }


@dataclass(frozen=True)
class BotVersion:
    """One version of a bot with its own rating (ratings never mix versions)."""

    rating: LeaderboardRow  # rank 0: not on the leaderboard
    created_at: str
    history: tuple[RatingPoint, ...]  # after each rated game, oldest first

    @property
    def version(self) -> str:
        return self.rating.version or ""

    def to_json(self) -> Json:
        return {
            "version": self.version,
            "created_at": self.created_at,
            "rating": self.rating.to_json(),
            "rating_history": [
                {"mu": p.mu, "sigma": p.sigma, "label": p.label} for p in self.history
            ],
        }


@dataclass(frozen=True)
class HeadToHead:
    """Two bots' games against each other, counted from the first's side."""

    bot: str
    opponent: str
    wins: int
    draws: int
    losses: int
    games: tuple[GameSummary, ...]  # the latest, newest first

    @property
    def played(self) -> int:
        return self.wins + self.draws + self.losses

    def to_json(self) -> Json:
        return {
            "bot": self.bot, "opponent": self.opponent, "wins": self.wins,
            "draws": self.draws, "losses": self.losses,
            "games": [g.to_json() for g in self.games],
        }  # fmt: skip


@dataclass(frozen=True)
class BotDetail:
    name: str
    owner: str | None
    created_at: str
    versions: tuple[BotVersion, ...]  # newest first
    recent_games: tuple[GameSummary, ...]

    @property
    def latest(self) -> BotVersion | None:
        return self.versions[0] if self.versions else None

    def to_json(self) -> Json:
        return {
            "name": self.name,
            "owner": self.owner,
            "created_at": self.created_at,
            "versions": [v.to_json() for v in self.versions],
            "recent_games": [g.to_json() for g in self.recent_games],
        }


@dataclass(frozen=True)
class GameDetail:
    summary: GameSummary
    record_json: str  # kahuna-record/1 text, revealed only for finished games
    # Why the full record is not public yet (a game of its deal is still to be
    # played: arena.store.record_withheld); None: it is. While set, the pages give
    # out only what a spectator sees (the "public" frames).
    withheld: str | None = None


class WebSource(Protocol):
    """Read-only queries behind every page. ``None`` means "no such thing"."""

    def leaderboard(self) -> Sequence[LeaderboardRow]: ...

    def tournaments(self) -> Sequence[TournamentSummary]: ...

    def tournament(self, tournament_id: int) -> TournamentDetail | None: ...

    def bot(self, name: str) -> BotDetail | None: ...

    def game(self, game_id: int) -> GameDetail | None: ...

    def recent_games(self, limit: int) -> Sequence[GameSummary]: ...

    def bot_names(self) -> Sequence[str]: ...

    def head_to_head(self, bot: str, opponent: str, limit: int) -> HeadToHead | None: ...
