"""The SDK's memo of values read from protobuf messages (kahuna_bot._memo)."""

from __future__ import annotations

import pytest
from kahuna_bot._gen import game_pb2
from kahuna_bot._memo import MessageMemo


def _counting() -> tuple[MessageMemo[game_pb2.Action, str], list[str]]:
    reads: list[str] = []

    def read(message: game_pb2.Action) -> str:
        if message.card == "BAD":
            raise ValueError("not an action")
        reads.append(message.card)
        return f"read {message.card}"

    return MessageMemo(read, limit=2), reads


def test_each_distinct_message_is_read_once_until_the_limit() -> None:
    memo, reads = _counting()
    for card in ("A", "B", "A", "B", "C", "C"):
        assert memo(game_pb2.Action(card=card)) == f"read {card}"
    assert reads == ["A", "B", "C", "C"]  # C came after the limit: read each time, not kept
    assert len(memo) == 2


def test_a_message_that_cannot_be_read_is_not_kept() -> None:
    memo, _ = _counting()
    for _ in range(2):
        with pytest.raises(ValueError, match="not an action"):
            memo(game_pb2.Action(card="BAD"))
    assert len(memo) == 0
