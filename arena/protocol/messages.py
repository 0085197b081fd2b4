"""The referee's messages to a bot (``kahuna.v1.PlayResponse``), built in one place.

The referee says what to send (plain values, its statuses by their string
value: ``arena.referee.BotStatus`` is a ``StrEnum``); this builds the
protobuf. ``wire`` holds the hot-path frames (requests, echoes) built from
bytes; these are the once-per-game and once-per-match messages.
"""

from __future__ import annotations

from arena.kahuna import Outcome, Variant
from arena.protocol.convert import outcome_to_pb, variant_to_pb
from arena.protocol.gen.kahuna.v1 import referee_pb2

STATUS_TO_PB: dict[str, referee_pb2.BotStatus.ValueType] = {
    "ok": referee_pb2.BOT_STATUS_OK,
    "timeout": referee_pb2.BOT_STATUS_TIMEOUT,
    "illegal_action": referee_pb2.BOT_STATUS_ILLEGAL_ACTION,
    "malformed_message": referee_pb2.BOT_STATUS_MALFORMED_MESSAGE,
    "protocol_violation": referee_pb2.BOT_STATUS_PROTOCOL_VIOLATION,
    "crash": referee_pb2.BOT_STATUS_CRASH,
    "disconnect": referee_pb2.BOT_STATUS_DISCONNECT,
}
"""A bot status (its string value) -> the wire's ``BotStatus``."""


def time_control_to_pb(action_ms: int, bank_ms: int) -> referee_pb2.TimeControl:
    return referee_pb2.TimeControl(action_ms=action_ms, bank_ms=bank_ms)


def welcome(
    *,
    protocol_version: int,
    match_id: str,
    games: int,
    bot_name: str,
    opponent_name: str,
    variant: Variant,
    time_control: referee_pb2.TimeControl,
) -> referee_pb2.PlayResponse:
    message = referee_pb2.Welcome(
        protocol_version=protocol_version, match_id=match_id, games=games, bot_name=bot_name,
        opponent_name=opponent_name, variant=variant_to_pb(variant), time_control=time_control,
    )  # fmt: skip
    return referee_pb2.PlayResponse(welcome=message)


def game_start(
    *,
    game_index: int,
    seat: int,
    variant: Variant,
    time_control: referee_pb2.TimeControl,
    opponent_name: str,
) -> referee_pb2.PlayResponse:
    message = referee_pb2.GameStart(
        game_index=game_index, seat=seat, variant=variant_to_pb(variant),
        time_control=time_control, opponent_name=opponent_name,
    )  # fmt: skip
    return referee_pb2.PlayResponse(game_start=message)


def game_over(
    *,
    game_index: int,
    reason: str,
    your_status: str,
    opponent_status: str,
    record_json: str,
    winner_seat: int | None,
    outcome: Outcome | None,
) -> referee_pb2.PlayResponse:
    """GameOver; ``winner_seat`` None: a draw (or no winner); ``outcome`` None: left out."""
    message = referee_pb2.GameOver(
        game_index=game_index, reason=reason, your_status=STATUS_TO_PB[your_status],
        opponent_status=STATUS_TO_PB[opponent_status], record_json=record_json,
    )  # fmt: skip
    if winner_seat is not None:
        message.winner_seat = winner_seat
    if outcome is not None:
        message.outcome.CopyFrom(outcome_to_pb(outcome))
    return referee_pb2.PlayResponse(game_over=message)


def match_over(*, your_score: float, opponent_score: float, games: int) -> referee_pb2.PlayResponse:
    message = referee_pb2.MatchOver(
        your_score=your_score, opponent_score=opponent_score, games=games
    )
    return referee_pb2.PlayResponse(match_over=message)


def goodbye_frame(status: str, reason: str) -> bytes:
    """A serialised Goodbye: the referee ends the bot's stream with ``status``."""
    goodbye = referee_pb2.Goodbye(status=STATUS_TO_PB[status], reason=reason)
    return referee_pb2.PlayResponse(goodbye=goodbye).SerializeToString()
