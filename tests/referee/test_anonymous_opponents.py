"""A match with anonymous opponents (the ladder's) tells no bot who it plays.

The bot here crashes on any Welcome or GameStart naming its opponent other than
``ANONYMOUS_OPPONENT``: a mule that throws its games to a friend needs that name. Nor
does any game's record sent to a bot (``GameOver.record_json``) name it.
"""

from __future__ import annotations

import json

import pytest

from arena.protocol.gen.kahuna.v1 import referee_pb2
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


@pytest.mark.slow
@pytest.mark.parametrize("anonymous", [True, False])
def test_no_record_a_bot_is_sent_names_its_anonymous_opponent(
    make_bot: MakeBot, anonymous: bool
) -> None:
    """A ladder match of four games plays halves (0, 2) and (1, 3): game 0's record reaches
    both bots before game 2, their second game against each other. It names neither bot's
    opponent, nor its version, when opponents are anonymous; each bot's own name stays."""
    mule, ace = make_bot("random", name="mule"), make_bot("random", name="ace")
    wire: list[tuple[int, bytes]] = []
    config = MatchConfig(games=4, anonymous_opponents=anonymous, game_indices=(0, 2))
    report = run_match(config, mule, ace, wire_tap=lambda slot, raw: wire.append((slot, raw)))
    assert [game.statuses.get("mule", BotStatus.OK) for game in report.games] == [BotStatus.OK] * 2
    records: dict[int, list[str]] = {0: [], 1: []}
    for slot, raw in wire:
        message = referee_pb2.PlayResponse.FromString(raw)
        if message.WhichOneof("kind") == "game_over":
            records[slot].append(message.game_over.record_json)
    assert all(records[0]) and len(records[0]) == len(records[1]) == 2
    for slot, (own, other) in enumerate(((mule, ace), (ace, mule))):
        for text in records[slot]:
            bots = {bot["name"]: bot["version"] for bot in json.loads(text)["match"]["bots"]}
            assert bots[own.name] == own.version
            if anonymous:
                assert f'"{other.name}"' not in text and other.version not in text
                assert bots[ANONYMOUS_OPPONENT] == ""
            else:  # the control: a tournament's record names both
                assert bots[other.name] == other.version
