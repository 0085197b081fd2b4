"""Runs a match: bot connections, clocks, failure statuses, records (docs/PROTOCOL.md)."""

from arena.referee.botdir import BotConfigError, content_hash, load_bot
from arena.referee.match import display_names, run_match
from arena.referee.types import (
    BotSpec,
    BotStatus,
    GameReport,
    MatchConfig,
    MatchReport,
    TimeControl,
)

__all__ = [
    "BotConfigError",
    "BotSpec",
    "BotStatus",
    "GameReport",
    "MatchConfig",
    "MatchReport",
    "TimeControl",
    "content_hash",
    "display_names",
    "load_bot",
    "run_match",
]
