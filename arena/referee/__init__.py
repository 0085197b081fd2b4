"""Runs a match: bot connections, clocks, failure statuses, records (docs/reference/PROTOCOL.md).

One turn, top to bottom:

1. ``play.GameDriver`` sends the seat to move its ActionRequest and starts that
   seat's ``game.Clock``; the bot's ``judge.ReplyWindow`` now awaits a reply.
2. ``endpoint.BotEndpoint`` reads the reply (transport only: anything that is
   not the protocol is refused and reported there) as an ``Arrival``.
3. ``judge.judge`` (or ``judge.judge_echo``, the same verdict from the bytes
   alone) turns it into a ``Verdict``: pure, it changes nothing.
4. ``GameDriver.settle``, the one decision, does what the verdict says: an
   action is charged to the clock and applied (``rules.apply_legal``: the legal
   map proved it), and the next request goes out; a failure forfeits the game.

``turn_loop.TurnLoop`` plays each game as one task in the endpoints' loop
thread: it awaits each reply against the clock's deadline and runs steps 3 and
4 for it, in order, and for deadlines that pass and processes that end too
(``turn_loop``'s docstring, and docs/design/ARCHITECTURE.md, "One turn, through
the modules").
"""

from arena.referee.botdir import BotConfigError, content_hash, load_bot, unbuilt
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
    "unbuilt",
]
