"""What the store's queries return: plain frozen, typed rows.

The rating scale (``INITIAL_MU``, ``conservative_rating``, ...) is ``arena.rating_scale``'s,
named here too for the store's readers.

Failure counters: ``timeouts`` counts games a version lost on time;
``crashes`` counts crash and disconnect; ``illegal_actions`` counts illegal
action, malformed message and protocol violation (arena.referee.BotStatus).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from arena.kahuna import Variant
from arena.rating_scale import CONSERVATIVE_SIGMAS as CONSERVATIVE_SIGMAS
from arena.rating_scale import INITIAL_MU as INITIAL_MU
from arena.rating_scale import INITIAL_SIGMA as INITIAL_SIGMA
from arena.rating_scale import conservative_rating as conservative_rating
from arena.referee.types import TimeControl


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
        return conservative_rating(self.mu, self.sigma)

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


class TournamentFormat(enum.StrEnum):
    """How a tournament pairs its bots (the values the schema stores)."""

    ROUND_ROBIN = "round_robin"
    SWISS = "swiss"
    LADDER = "ladder"  # arena serve --ladder (arena.store.ladder); never created as a tournament
    SPRT = "sprt"  # a sequential test of a candidate against a baseline, one deal pair per match
    GAUNTLET = "gauntlet"  # the first entrant plays each of the others


class TournamentStatus(enum.StrEnum):
    """Where a tournament is; ``INTERRUPTED`` is never stored (see ``arena.store.tournaments``)."""

    CREATED = "created"
    RUNNING = "running"
    INTERRUPTED = "interrupted"  # stored as running, but no runner holds its lease
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class SprtConfig:
    """The hypotheses of an SPRT test (format ``sprt``), as stored; checked by
    ``arena.tournament.policy.config``, read as ``arena.tournament.statistics.sprt.SprtParams``."""

    elo0: float
    elo1: float
    alpha: float
    beta: float
    model: str  # "logistic" | "normalized"
    max_pairs: int  # the cap: at it, an undecided test ends inconclusive

    def to_json(self) -> dict[str, object]:
        return {
            "elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
            "model": self.model, "max_pairs": self.max_pairs,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> SprtConfig:
        def real(key: str) -> float:
            value = data[key]
            assert isinstance(value, int | float), f"stored sprt config: {key} is {value!r}"
            return float(value)

        model, max_pairs = data["model"], data["max_pairs"]
        assert isinstance(model, str) and isinstance(max_pairs, int), f"stored sprt: {data!r}"
        return cls(real("elo0"), real("elo1"), real("alpha"), real("beta"), model, max_pairs)


@dataclass(frozen=True)  # no slots: the class attributes are the defaults (one source)
class TournamentConfig:
    """How a tournament is played (stored as flat JSON with the tournament).

    The defaults are the referee's (``TimeControl``, ``Variant``); the limits of
    each field are ``arena.tournament.policy.config``'s.
    """

    games_per_match: int = 2
    rounds: int | None = None  # Swiss only; None: ceil(log2(bots)) + 1
    seed: int = 0
    time_control: TimeControl = field(default_factory=TimeControl)
    variant: Variant = field(default_factory=Variant)
    sprt: SprtConfig | None = None  # format sprt only
    # The entrants whose matches deal afresh every game (the rest pair deals: games 2k and
    # 2k+1 share deal k), fixed when the tournament is created and so committed with it
    # (``deals_paired``); None: a tournament created before the rule was committed, whose
    # matches the runner pairs by its bots' runtimes and its own flag.
    fresh_deals: tuple[str, ...] | None = None

    def deals_paired(self, first: str, second: str) -> bool | None:
        """Whether the match of bots ``first`` and ``second`` pairs its deals under the
        committed rule: unless one of them deals afresh; None when no rule is committed."""
        if self.fresh_deals is None:
            return None
        return first not in self.fresh_deals and second not in self.fresh_deals

    def to_json(self) -> dict[str, object]:
        """The stored form (flat, times in ms, as since schema v1; ``sprt`` and
        ``fresh_deals`` only when set, so an older tournament's stored form, and its
        commitment, are unchanged)."""
        out: dict[str, object] = {
            "games_per_match": self.games_per_match, "rounds": self.rounds, "seed": self.seed,
            "action_ms": self.time_control.action_ms, "bank_ms": self.time_control.bank_ms,
            "strategic": self.variant.strategic, "tactical": self.variant.tactical,
        }  # fmt: skip
        if self.sprt is not None:
            out["sprt"] = self.sprt.to_json()
        if self.fresh_deals is not None:
            out["fresh_deals"] = list(self.fresh_deals)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> TournamentConfig:
        def number(key: str, default: int) -> int:
            value = data.get(key, default)
            assert isinstance(value, int), f"stored tournament config: {key} is {value!r}"
            return value

        rounds = data.get("rounds")
        assert rounds is None or isinstance(rounds, int), f"stored rounds is {rounds!r}"
        sprt = data.get("sprt")
        assert sprt is None or isinstance(sprt, dict), f"stored sprt is {sprt!r}"
        fresh = data.get("fresh_deals")
        assert fresh is None or (isinstance(fresh, list) and all(
            isinstance(name, str) for name in fresh)), f"stored fresh_deals is {fresh!r}"
        return cls(
            games_per_match=number("games_per_match", cls.games_per_match),
            rounds=rounds,
            seed=number("seed", cls.seed),
            time_control=TimeControl(
                action_ms=number("action_ms", TimeControl.action_ms),
                bank_ms=number("bank_ms", TimeControl.bank_ms),
            ),
            variant=Variant(
                strategic=bool(data.get("strategic", False)),
                tactical=bool(data.get("tactical", False)),
            ),
            sprt=None if sprt is None else SprtConfig.from_json(sprt),
            fresh_deals=None if fresh is None else tuple(fresh),
        )


@dataclass(frozen=True, slots=True)
class TournamentRow:
    id: int
    name: str
    format: TournamentFormat
    status: TournamentStatus  # INTERRUPTED derived: stored as running, no live runner
    config: TournamentConfig
    created_at: str
    finished_at: str | None
    entrants: tuple[str, ...]  # bot names, seed order
    games_played: int
    games_scheduled: int  # games of the matches paired so far
    commitment: str | None = None  # SHA-256 commitment to the deal secret (None: before v7)
    # why it is interrupted (None unless status is INTERRUPTED); see record_interruption
    interrupted_reason: str | None = None


@dataclass(frozen=True, slots=True)
class PlannedMatch:
    """A match to store: who meets whom (``first`` in seat 0 of game 0), how many games, seed."""

    first: str
    second: str
    games: int
    seed: int


@dataclass(frozen=True, slots=True)
class PlannedRound:
    """A round to store whole: its matches and the bot that sits it out, if any."""

    number: int
    matches: tuple[PlannedMatch, ...]
    bye: str | None = None


@dataclass(frozen=True, slots=True)
class StoredOutcome:
    """A stored game's result, as standings need it."""

    match_id: int
    bots: tuple[str, str]  # by seat
    winner: str | None  # None: a draw


@dataclass(frozen=True, slots=True)
class SeatFailures:
    """What one seat's status adds to its version's failure counters (0 or 1 each)."""

    timeouts: int = 0
    crashes: int = 0
    illegal_actions: int = 0


MuSigma = tuple[float, float]
RateGame = Callable[[MuSigma, MuSigma, int | None], tuple[MuSigma, MuSigma]]
"""(seat 0 before, seat 1 before, winner seat or None) -> (seat 0 after, seat 1 after)."""


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

    def may_act_for(self, owner: str | None) -> bool:
        """Whether this principal may act for a bot owned by ``owner`` (its files, stderr)."""
        return self.is_admin or owner == self.user


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
    entry: JsonRecord  # an action (docs/reference/RECORD.md JSON with "seat") or another event
    added_at: str
