"""No message a sandboxed bot receives carries the match secret, a deal seed or the match seed.

Every message the referee puts on the wire to either bot over whole matches
(paired and unpaired) is walked field by field (``leaks``), the GameOver
record's JSON included; the checker itself is shown to catch each kind of
leak it looks for, so a pass means something.
"""

from __future__ import annotations

import json

import pytest

from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee import MatchConfig, TimeControl, run_match
from arena.referee.seeds import deal_seed

from .conftest import MakeBot
from .leaks import Forbidden, leaks

SECRET = bytes(range(7, 39))
MATCH_SEED = 1_234_567_891
FORBIDDEN = Forbidden.of_match(SECRET, MATCH_SEED, games=8)
DEAL_0 = deal_seed(SECRET, 0)


def _game_over(record: dict[str, object]) -> referee_pb2.PlayResponse:
    return referee_pb2.PlayResponse(game_over=referee_pb2.GameOver(record_json=json.dumps(record)))


CAUGHT = [
    ("old-match-seed-key", _game_over({"match": {"match_seed": 3}})),
    ("deal-seed-value", _game_over({"match": {"x": [1, {"y": DEAL_0}]}})),
    ("deal-seed-as-text", _game_over({"note": f"seed was {DEAL_0}"})),
    ("match-seed-value", _game_over({"match": {"id": MATCH_SEED}})),
    ("secret-hex-in-a-field", referee_pb2.PlayResponse(
        welcome=referee_pb2.Welcome(match_id=SECRET.hex()))),
    ("deal-seed-in-a-nested-int", referee_pb2.PlayResponse(
        action_request=referee_pb2.ActionRequest(request_id=DEAL_0))),
    ("deal-seed-hex-in-a-name", referee_pb2.PlayResponse(
        game_start=referee_pb2.GameStart(opponent_name=f"bot-{DEAL_0:x}"))),
]  # fmt: skip


@pytest.mark.parametrize("message", [c[1] for c in CAUGHT], ids=[c[0] for c in CAUGHT])
def test_the_checker_catches_each_kind_of_leak(message: referee_pb2.PlayResponse) -> None:
    assert leaks(message, FORBIDDEN)


def test_the_checker_passes_a_clean_record() -> None:
    assert leaks(_game_over({"match": {"deal_index": 3, "paired": True}}), FORBIDDEN) == []


@pytest.mark.slow
@pytest.mark.parametrize("paired", [True, False], ids=["paired", "unpaired"])
def test_no_message_to_a_sandboxed_bot_carries_a_secret(make_bot: MakeBot, paired: bool) -> None:
    bot_a, bot_b = make_bot("random", name="a"), make_bot("random", name="b")
    wire: list[tuple[int, bytes]] = []
    config = MatchConfig(
        games=4, seed=MATCH_SEED, secret=SECRET, paired=paired,
        time_control=TimeControl(2000, 2000),
    )  # fmt: skip
    report = run_match(config, bot_a, bot_b, wire_tap=lambda slot, raw: wire.append((slot, raw)))
    assert [game.reason != "forfeit" for game in report.games] == [True] * 4
    kinds = set()
    for slot, raw in wire:
        message = referee_pb2.PlayResponse.FromString(raw)
        kinds.add(message.WhichOneof("kind"))
        assert leaks(message, FORBIDDEN) == [], f"to bot {slot}"
    assert {"welcome", "game_start", "action_request", "game_over", "match_over"} <= kinds
    records = [game.record for game in report.games]
    deals = [json.dumps(record["deal"]) for record in records]
    assert (deals[0] == deals[1], deals[2] == deals[3]) == (paired, paired)
    assert [record["match"]["paired"] for record in records] == [paired] * 4  # type: ignore[index]
