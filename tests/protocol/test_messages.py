"""arena.protocol.messages: the referee's messages to bots, as bots parse them."""

from __future__ import annotations

import pytest

from arena.kahuna import Outcome, Termination, Variant
from arena.protocol import messages
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee.types import BotStatus


@pytest.mark.parametrize("status", list(BotStatus), ids=str)
def test_every_status_has_its_wire_value(status: BotStatus) -> None:
    wire = messages.STATUS_TO_PB[status]
    assert referee_pb2.BotStatus.Name(wire) == f"BOT_STATUS_{status.value.upper()}"


def test_statuses_are_exactly_the_referees() -> None:
    assert set(messages.STATUS_TO_PB) == {status.value for status in BotStatus}


def test_goodbye_frame_parses_back() -> None:
    frame = messages.goodbye_frame(BotStatus.TIMEOUT, "no action within 5 ms")
    parsed = referee_pb2.PlayResponse.FromString(frame)
    assert parsed.WhichOneof("kind") == "goodbye"
    assert parsed.goodbye.status == referee_pb2.BOT_STATUS_TIMEOUT
    assert parsed.goodbye.reason == "no action within 5 ms"


@pytest.mark.parametrize(("winner_seat", "has_winner"), [(1, True), (None, False)],
                         ids=["won", "draw"])  # fmt: skip
def test_game_over_sets_the_winner_only_when_there_is_one(
    winner_seat: int | None, has_winner: bool
) -> None:
    message = messages.game_over(
        game_index=3, reason="points", your_status=BotStatus.OK,
        opponent_status=BotStatus.CRASH, record_json="{}", winner_seat=winner_seat, outcome=None,
    ).game_over  # fmt: skip
    assert message.HasField("winner_seat") is has_winner
    assert not message.HasField("outcome")
    assert (message.your_status, message.opponent_status) == (
        referee_pb2.BOT_STATUS_OK, referee_pb2.BOT_STATUS_CRASH,
    )  # fmt: skip


def test_welcome_and_game_start_carry_variant_and_clock() -> None:
    clock = messages.time_control_to_pb(1500, 9000)
    welcome = messages.welcome(
        protocol_version=1, match_id="m", games=4, bot_name="a", opponent_name="b",
        variant=Variant(strategic=True), time_control=clock,
    ).welcome  # fmt: skip
    start = messages.game_start(
        game_index=2, seat=1, variant=Variant(tactical=True), time_control=clock,
        opponent_name="b",
    ).game_start  # fmt: skip
    assert (welcome.games, welcome.variant.strategic, welcome.time_control.bank_ms) == (
        4, True, 9000,
    )  # fmt: skip
    assert (start.seat, start.variant.tactical, start.time_control.action_ms) == (1, True, 1500)


def test_match_over() -> None:
    message = messages.match_over(your_score=1.5, opponent_score=0.5, games=2).match_over
    assert (message.your_score, message.opponent_score, message.games) == (1.5, 0.5, 2)


def test_game_over_carries_the_outcome_when_given() -> None:
    outcome = Outcome(winner=0, termination=next(iter(Termination)), points=(7, 3))
    message = messages.game_over(
        game_index=0, reason="points", your_status=BotStatus.OK, opponent_status=BotStatus.OK,
        record_json="{}", winner_seat=0, outcome=outcome,
    ).game_over  # fmt: skip
    assert message.HasField("outcome")
    assert tuple(message.outcome.points) == (7, 3)
