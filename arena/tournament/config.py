"""Tournament policy: which configurations can be played, Swiss round limits, match seeds.

One source for every default and range: the time control's are the
referee's (``arena.referee.types``: ``TimeControl``, ``ACTION_MS_RANGE``,
``BANK_MS_RANGE``), the rest are here. ``build_config`` is the one place a
``TournamentConfig`` is made from loose values (CLI flags, an API request):
a value left out (None) takes its default, a value out of range is refused
naming the field.
"""

from __future__ import annotations

import re

from arena.kahuna import Variant
from arena.referee.types import ACTION_MS_RANGE, BANK_MS_RANGE, TimeControl
from arena.store.models import TournamentConfig, TournamentFormat

GAMES_PER_MATCH_RANGE = (1, 100)
SEED_RANGE = (0, 2**31 - 1)
ROUNDS_RANGE = (1, 1000)
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,59}")
FORMATS = tuple(TournamentFormat)


class TournamentError(ValueError):
    """A tournament that cannot be created or played as asked; the message names the field."""


def _check_whole(field: str, value: object, bounds: tuple[int, int]) -> int:
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TournamentError(f"{field} must be a whole number from {low} to {high}, got {value!r}")
    return value


def build_config(
    *,
    games_per_match: int | None = None,
    rounds: int | None = None,
    seed: int | None = None,
    action_ms: int | None = None,
    bank_ms: int | None = None,
    strategic: bool = False,
    tactical: bool = False,
) -> TournamentConfig:
    """A checked ``TournamentConfig``; None takes the default (rounds: ceil(log2 n) + 1)."""
    config = TournamentConfig(
        games_per_match=_check_whole(
            "games_per_match",
            TournamentConfig.games_per_match if games_per_match is None else games_per_match,
            GAMES_PER_MATCH_RANGE,
        ),
        rounds=None if rounds is None else _check_whole("rounds", rounds, ROUNDS_RANGE),
        seed=_check_whole("seed", TournamentConfig.seed if seed is None else seed, SEED_RANGE),
        time_control=TimeControl(
            action_ms=_check_whole(
                "action_ms",
                TimeControl.action_ms if action_ms is None else action_ms,
                ACTION_MS_RANGE,
            ),
            bank_ms=_check_whole(
                "bank_ms", TimeControl.bank_ms if bank_ms is None else bank_ms, BANK_MS_RANGE
            ),
        ),
        variant=Variant(strategic=strategic, tactical=tactical),
    )
    return config


def validate_config(config: TournamentConfig) -> None:
    """Refuse a configuration that cannot be played, naming the field (TournamentError)."""
    _check_whole("games_per_match", config.games_per_match, GAMES_PER_MATCH_RANGE)
    _check_whole("seed", config.seed, SEED_RANGE)
    _check_whole("action_ms", config.time_control.action_ms, ACTION_MS_RANGE)
    _check_whole("bank_ms", config.time_control.bank_ms, BANK_MS_RANGE)
    if config.rounds is not None:
        _check_whole("rounds", config.rounds, ROUNDS_RANGE)


def parse_format(value: str) -> TournamentFormat:
    """The format named ``value`` (TournamentError listing the formats)."""
    try:
        return TournamentFormat(value)
    except ValueError:
        raise TournamentError(
            f"format must be one of {', '.join(FORMATS)}, got {value!r}"
        ) from None


def max_swiss_rounds(bots: int) -> int:
    """The most Swiss rounds ``bots`` bots can play, each pair meeting at most once."""
    return max(1, bots - 1 if bots % 2 == 0 else bots)


def match_seed(tournament_seed: int, round_no: int, first_id: int, second_id: int) -> int:
    """The deal seed of a match: fixed by who meets whom, so a resume replays it exactly."""
    low, high = sorted((first_id, second_id))
    return (tournament_seed * 1_000_003 + round_no * 10_007 + low * 101 + high) % 2**31
