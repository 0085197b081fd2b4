"""The declarative match configuration and what a match reports.

One ``MatchConfig`` says everything about how a match is played; a
``MatchReport`` is everything it produced. Both are plain frozen data.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from arena.kahuna import HandicapBridge, Variant
from arena.referee.handicap import check_handicap
from arena.referee.seeds import check_secret, new_secret
from arena.sandbox import SandboxLimits

HELLO_TIMEOUT_MS = 10_000
"""How long a freshly launched bot has to send its Hello."""


class BotStatus(enum.StrEnum):
    """How a bot behaved in a game (docs/reference/PROTOCOL.md, "Statuses")."""

    OK = "ok"
    TIMEOUT = "timeout"
    ILLEGAL_ACTION = "illegal_action"
    MALFORMED_MESSAGE = "malformed_message"
    PROTOCOL_VIOLATION = "protocol_violation"
    CRASH = "crash"
    DISCONNECT = "disconnect"


ANONYMOUS_OPPONENT = "opponent"
"""The opponent's name a bot is told in a match with anonymous opponents."""
ACTION_MS_RANGE = (1, 3_600_000)
"""The per-action limits a time control may have, in ms (inclusive)."""
BANK_MS_RANGE = (0, 36_000_000)
"""The time banks a time control may have, in ms (inclusive)."""


@dataclass(frozen=True)
class TimeControl:
    """A per-action limit plus a per-game bank for time beyond it."""

    action_ms: int = 2000
    bank_ms: int = 30000

    def __post_init__(self) -> None:
        if isinstance(self.action_ms, bool) or not isinstance(self.action_ms, int):
            raise ValueError(f"action_ms must be a whole number of ms, got {self.action_ms!r}")
        if isinstance(self.bank_ms, bool) or not isinstance(self.bank_ms, int):
            raise ValueError(f"bank_ms must be a whole number of ms, got {self.bank_ms!r}")
        for name, value, (low, high) in (
            ("action_ms", self.action_ms, ACTION_MS_RANGE),
            ("bank_ms", self.bank_ms, BANK_MS_RANGE),
        ):
            if not low <= value <= high:
                raise ValueError(f"{name} must be between {low} and {high}, got {value}")


@dataclass(frozen=True)
class BotSpec:
    """A bot directory as loaded from its bot.toml (see ``load_bot``)."""

    name: str
    version: str
    directory: Path
    command: tuple[str, ...]
    runtime: str
    description: str = ""
    author: str = ""
    class_archives: Path | None = None
    """Java bots: the shelf of this version's class-data archives (arena/sandbox/javacds.py),
    given to its launches when one fits this JDK; None: none is looked for."""


@dataclass(frozen=True)
class MatchConfig:
    """Everything that decides how a match is played."""

    games: int = 2
    seed: int = 0
    """A label (the stored match's seed); no deal depends on it."""
    secret: bytes | None = field(default_factory=new_secret, repr=False)
    """The match's seed material (``arena.referee.seeds.match_seed_material``): keys every
    deal and reshuffle of this match alone; never sent to a bot. None only with
    ``deal_seeds``: a Ray node is given its match's deal seeds, not the material."""
    paired: bool = True
    """Games 2k and 2k+1 share a deal; False: a fresh deal in every game."""
    variant: Variant = field(default_factory=Variant)
    time_control: TimeControl = field(default_factory=TimeControl)
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    max_restarts: int = 2
    unsafe: bool = False
    hello_timeout_ms: int = HELLO_TIMEOUT_MS
    handicap: tuple[HandicapBridge, ...] = ()
    """R2h: 1-3 bridges of one seat (the seat, not a bot: seats swap every game)."""
    ponder: bool = False
    """Let the bot that is not to move run. Off (the default), the sandboxed bot
    that is not to move is frozen (its cgroup) until it gets a request, so that
    what it does cannot cost its opponent time; pondering is only fair where each
    bot has its own CPUs. Remote and unsandboxed bots are never frozen."""
    anonymous_opponents: bool = False
    """Tell each bot its opponent's name as ``ANONYMOUS_OPPONENT`` only (Welcome,
    GameStart): a bot cannot tell a friend from a stranger, so it cannot throw
    games to one (docs/PROTOCOL.md, "What a bot is told about its opponent")."""
    game_indices: tuple[int, ...] | None = None
    """Play only these games of the match (increasing, each in 0..games-1), e.g. the
    games a resumed match has not stored yet; None plays them all. A game keeps the
    seats and deal of its index whatever else is played."""
    deal_seeds: tuple[tuple[int, int], ...] | None = field(default=None, repr=False)
    """(deal index, deal seed) of every deal the games to play need, instead of the
    secret; None: each deal's seed is derived from ``secret``."""

    def __post_init__(self) -> None:
        if isinstance(self.games, bool) or not isinstance(self.games, int) or self.games < 1:
            raise ValueError(f"games must be a whole number >= 1, got {self.games!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a whole number >= 0, got {self.seed!r}")
        if self.deal_seeds is None or self.secret is not None:
            check_secret(self.secret)
        if self.max_restarts < 0:
            raise ValueError(f"max_restarts must be >= 0, got {self.max_restarts}")
        if self.hello_timeout_ms < 1:
            raise ValueError(f"hello_timeout_ms must be >= 1, got {self.hello_timeout_ms}")
        if self.handicap != ():
            check_handicap(self.handicap)
        if self.game_indices is not None:
            _check_game_indices(self.game_indices, self.games)
        if self.deal_seeds is not None:
            _check_deal_seeds(self.deal_seeds, {self.deal_index(i) for i in self.indices_to_play})

    def deal_index(self, game_index: int) -> int:
        """The deal a game plays: shared by games 2k and 2k+1 when paired."""
        return game_index // 2 if self.paired else game_index

    @property
    def indices_to_play(self) -> tuple[int, ...]:
        """The game indices this match plays, in order."""
        if self.game_indices is None:
            return tuple(range(self.games))
        return self.game_indices


def _check_deal_seeds(seeds: object, needed: set[int]) -> None:
    if not isinstance(seeds, tuple) or not all(
        isinstance(pair, tuple) and len(pair) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in pair)
        for pair in seeds
    ):
        raise ValueError("deal_seeds must be a tuple of (deal index, seed) pairs of whole numbers")
    missing = needed - {deal for deal, _seed in seeds}
    if missing:
        raise ValueError(f"deal_seeds lacks the seed of deal(s) {sorted(missing)}")


def _check_game_indices(indices: object, games: int) -> None:
    if not isinstance(indices, tuple) or not indices:
        raise ValueError(f"game_indices must be a non-empty tuple, got {indices!r}")
    for index in indices:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < games:
            raise ValueError(f"game index {index!r} is not in 0..{games - 1}")
    if any(later <= earlier for earlier, later in itertools.pairwise(indices)):
        raise ValueError(f"game_indices must be increasing without repeats, got {indices}")


@dataclass(frozen=True)
class GameReport:
    """One game of a match, by bot name (names are unique within a match)."""

    index: int
    bots_by_seat: tuple[str, str]
    winner: str | None
    reason: str
    statuses: Mapping[str, BotStatus]
    actions: int
    time_ms: Mapping[str, float]
    record: dict[str, object]
    stderr: Mapping[str, str] = field(default_factory=dict)
    """Bot name -> the end of its stderr when it crashed, disconnected or timed out.

    Private to the bot's owner (and the admin): never in ``record``, which
    the opponent receives and the public sees.
    """
    startup_ms: Mapping[str, float] = field(default_factory=dict)
    """Bot name -> the time its launches took to say Hello (or to fail) since the game
    before, as the referee measured it: the first game of a half carries the half's
    launch, a game after a crash the relaunch. The ladder charges it to the bot
    (``arena.store.usage.game_charges``); a bot that was not launched is absent."""


@dataclass(frozen=True)
class MatchReport:
    """Every game of a match and the score (1 per win, 0.5 per draw)."""

    games: tuple[GameReport, ...]
    score: Mapping[str, float]
