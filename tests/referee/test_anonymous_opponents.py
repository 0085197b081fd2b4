"""A match with anonymous opponents (the ladder's) tells no bot who it plays.

The bot here crashes on any Welcome or GameStart naming its opponent other than
``ANONYMOUS_OPPONENT``: a mule that throws its games to a friend needs that name.
"""

from __future__ import annotations

import pytest

from arena.referee import MatchConfig, run_match
from arena.referee.types import ANONYMOUS_OPPONENT, BotStatus

from .conftest import MakeBot


@pytest.mark.slow
@pytest.mark.parametrize("anonymous", [True, False])
def test_a_bot_is_told_its_opponents_name_only_outside_anonymous_matches(
    make_bot: MakeBot, anonymous: bool
) -> None:
    assert ANONYMOUS_OPPONENT == "opponent"
    mule = make_bot("crash_if_opponent_named", name="mule")
    ace = make_bot("random", name="ace")
    report = run_match(MatchConfig(games=2, anonymous_opponents=anonymous), mule, ace)
    statuses = [game.statuses.get("mule", BotStatus.OK) for game in report.games]
    if anonymous:
        assert statuses == [BotStatus.OK, BotStatus.OK]
    else:  # the control: the name reaches the bot, which acts on it
        assert BotStatus.CRASH in statuses
