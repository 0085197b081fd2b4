"""What the store's queries return: plain frozen, typed rows.

Failure counters: ``timeouts`` counts games a version lost on time;
``crashes`` counts crash and disconnect; ``illegal_actions`` counts illegal
action, malformed message and protocol violation (arena.referee.BotStatus).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class BotVersionRow:
    bot: str
    version: str  # content hash
    created_at: str
    mu: float
    sigma: float
    games: int
    wins: int
    draws: int
    losses: int
    timeouts: int
    crashes: int
    illegal_actions: int
    owner: str | None = None

    @property
    def conservative(self) -> float:
        """mu - 3 sigma: the leaderboard's order."""
        return self.mu - 3 * self.sigma

    def rate(self, count: int) -> float:
        """``count`` as a fraction of games played (0.0 before any game)."""
        return count / self.games if self.games else 0.0


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    rank: int  # 1-based, by mu - 3 sigma
    entry: BotVersionRow


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A version's rating right after one game."""

    version: str
    game_id: int
    mu: float
    sigma: float
    finished_at: str


@dataclass(frozen=True, slots=True)
class BotSummary:
    name: str
    owner: str | None
    created_at: str
    version_count: int
    latest: BotVersionRow


@dataclass(frozen=True, slots=True)
class BotDetail:
    name: str
    owner: str | None
    created_at: str
    versions: tuple[BotVersionRow, ...]  # oldest first
    history: tuple[RatingPoint, ...]  # oldest first, all versions


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """How a tournament is played (stored as JSON with the tournament)."""

    games_per_match: int = 2
    rounds: int | None = None  # Swiss only; None: ceil(log2(bots)) + 1
    seed: int = 0
    action_ms: int = 2000
    bank_ms: int = 30000
    strategic: bool = False
    tactical: bool = False


@dataclass(frozen=True, slots=True)
class TournamentRow:
    id: int
    name: str
    format: str  # "round_robin" | "swiss"
    status: str  # "created" | "running" | "interrupted" (derived: no live runner) | "finished"
    config: TournamentConfig
    created_at: str
    finished_at: str | None
    entrants: tuple[str, ...]  # bot names, seed order
    games_played: int
    games_scheduled: int  # games of the matches paired so far


@dataclass(frozen=True, slots=True)
class MatchRow:
    id: int
    tournament_id: int
    round: int
    first: str  # bot name (seat 0 in game 0)
    second: str
    first_version: str
    second_version: str
    games: int
    seed: int
    finished_at: str | None
    games_played: tuple[int, ...] = field(default=())  # stored game indices


@dataclass(frozen=True, slots=True)
class GameRow:
    id: int
    tournament_id: int
    tournament: str
    match_id: int
    round: int
    game_index: int
    bots: tuple[str, str]  # by seat
    versions: tuple[str, str]
    winner_seat: int | None
    reason: str
    statuses: tuple[str, str]  # by seat (BotStatus values)
    actions: int
    time_ms: tuple[float, float]
    finished_at: str

    @property
    def winner(self) -> str | None:
        return None if self.winner_seat is None else self.bots[self.winner_seat]


@dataclass(frozen=True, slots=True)
class BotFailure:
    """A stored game a bot failed in, with the end of its stderr (owner and admin only)."""

    game_id: int
    version: str
    seat: int
    status: str  # a BotStatus value
    stderr: str
    finished_at: str


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a bearer token belongs to."""

    user: str
    role: str  # "admin" | "user"

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


JsonRecord = Mapping[str, object]


@dataclass(frozen=True, slots=True)
class SeatOfferRow:
    """A seat of a match waiting for (or taken by) a remote bot (arena.store.remote)."""

    id: int
    bot: str
    version: str
    owner: str | None
    match_id: int | None  # the tournament match; None outside tournaments
    referee_match: str  # the referee's match id (Welcome.match_id)
    slot: int  # 0: the match's first bot, 1: its second
    socket_path: str  # the seat's private referee socket in the match worker
    created_at: str
    expires_at_ms: int  # Unix epoch ms: a Hello after it is refused
    state: str  # "open" | "taken" | "closed"


@dataclass(frozen=True, slots=True)
class LiveGameRow:
    """A game being played, as the runner publishes it (arena.store.live)."""

    id: int
    match_id: int
    game_index: int
    tournament_id: int
    head: JsonRecord  # the record's head: format, variant, handicap, deal, bots ...
    started_at: str
    actions: int  # live entries so far


@dataclass(frozen=True, slots=True)
class LiveEntry:
    seq: int  # 0-based position in the live game
    entry: JsonRecord  # an action (docs/RECORD.md JSON with "seat") or another event
    added_at: str
