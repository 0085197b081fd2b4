"""Long matches, run on purpose: `python3 -m pytest -m soak tests/referee`."""

from __future__ import annotations

import json

import pytest

from arena.kahuna import parse_record, replay
from arena.referee import BotStatus, MatchConfig, TimeControl, run_match

from .conftest import MakeBot, assert_no_process_left


@pytest.mark.soak
@pytest.mark.timeout(900)
def test_a_long_match_stays_clean(make_bot: MakeBot) -> None:
    bot_a, bot_b = make_bot("random", name="a"), make_bot("random", name="b")
    config = MatchConfig(games=200, seed=99, time_control=TimeControl(3000, 30000))
    report = run_match(config, bot_a, bot_b)
    assert len(report.games) == 200
    assert sum(report.score.values()) == 200
    for game in report.games:
        assert set(game.statuses.values()) == {BotStatus.OK}
        checked = replay(parse_record(json.dumps(game.record)))
        assert checked.error is None and checked.state.is_finished
    assert_no_process_left(bot_a, bot_b)
