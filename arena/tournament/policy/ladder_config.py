"""The ladder's settings: defaults, ranges, and their stored form.

``LadderSettings`` is what `arena serve --ladder` is given (flags) and what
the store keeps (``arena.store.ladder``): the games of a match and their
time control (the stored ``TournamentConfig``), and the scheduler's policy
(``arena.tournament.pairing.ladder_schedule.SchedulePolicy``) with the number of
matches in play. ``merge`` is the one place flags meet stored settings: a
flag given replaces the stored value, a flag left out keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

from arena.store import RECENT_KEPT
from arena.store.models import TournamentConfig
from arena.tournament.pairing.ladder_schedule import (
    MAX_REPEAT,
    PLACEMENT_IN_PLAY,
    PLACEMENT_MATCHES,
    SchedulePolicy,
)
from arena.tournament.policy.config import TournamentError, build_config

DEFAULT_NAME = "ladder"
PLACEMENT_RANGE = (0, 100)
PLACEMENT_IN_PLAY_RANGE = (1, 16)
REPEAT_RANGE = (1, RECENT_KEPT)  # the store keeps this many latest opponents
CONCURRENCY_RANGE = (1, 1024)
ENTRANTS_PER_USER = 1
ENTRANTS_PER_USER_RANGE = (0, 1000)  # 0: no limit


@dataclass(frozen=True, slots=True)
class LadderSettings:
    placement_matches: int = PLACEMENT_MATCHES
    placement_in_play: int = PLACEMENT_IN_PLAY
    max_repeat: int = MAX_REPEAT
    concurrency: int | None = None  # matches in play; None: one per usable CPU
    # each user's latest-submitted bots on the ladder at once (the admin's: all); 0: no limit
    entrants_per_user: int = ENTRANTS_PER_USER

    @property
    def policy(self) -> SchedulePolicy:
        return SchedulePolicy(
            placement_matches=self.placement_matches,
            placement_in_play=self.placement_in_play,
            max_repeat=self.max_repeat,
        )

    def to_json(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> LadderSettings:
        known = {f.name for f in fields(cls)}
        return check_settings(cls(**{k: v for k, v in data.items() if k in known}))  # type: ignore[arg-type]


def _whole(name: str, value: object, bounds: tuple[int, int]) -> None:
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TournamentError(f"{name} must be a whole number from {low} to {high}, got {value!r}")


def check_settings(settings: LadderSettings) -> LadderSettings:
    """``settings`` if every field is in range; TournamentError naming the first that is not."""
    _whole("placement_matches", settings.placement_matches, PLACEMENT_RANGE)
    _whole("placement_in_play", settings.placement_in_play, PLACEMENT_IN_PLAY_RANGE)
    _whole("max_repeat", settings.max_repeat, REPEAT_RANGE)
    _whole("entrants_per_user", settings.entrants_per_user, ENTRANTS_PER_USER_RANGE)
    if settings.concurrency is not None:
        _whole("concurrency", settings.concurrency, CONCURRENCY_RANGE)
    return settings


def check_games(config: TournamentConfig) -> TournamentConfig:
    """A ladder plays paired deals: an even number of games per match."""
    if config.games_per_match % 2:
        raise TournamentError(
            f"games_per_match must be even on a ladder (each deal from both seats),"
            f" got {config.games_per_match}"
        )
    return config


def merge(
    stored: tuple[TournamentConfig, LadderSettings] | None, given: Mapping[str, object | None]
) -> tuple[TournamentConfig, LadderSettings]:
    """The settings to run with: ``stored`` (or the defaults) with every given value replaced.

    ``given`` holds TournamentConfig fields (games_per_match, seed, action_ms,
    bank_ms) and LadderSettings fields; None means "not given".
    """
    config, settings = stored or (TournamentConfig(), LadderSettings())
    chosen = {k: v for k, v in given.items() if v is not None}
    game_keys = ("games_per_match", "seed", "action_ms", "bank_ms")
    config = build_config(
        games_per_match=_pick(chosen, "games_per_match", config.games_per_match),
        seed=_pick(chosen, "seed", config.seed),
        action_ms=_pick(chosen, "action_ms", config.time_control.action_ms),
        bank_ms=_pick(chosen, "bank_ms", config.time_control.bank_ms),
        strategic=config.variant.strategic,
        tactical=config.variant.tactical,
    )
    rest = {k: v for k, v in chosen.items() if k not in game_keys}
    return check_games(config), check_settings(replace(settings, **rest))  # type: ignore[arg-type]


def _pick(chosen: Mapping[str, object], key: str, default: int) -> int:
    value = chosen.get(key, default)
    assert isinstance(value, int)
    return value
