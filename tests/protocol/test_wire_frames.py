"""Hand-assembled frames parse to exactly what the generated API builds."""

from __future__ import annotations

import pytest

from arena.kahuna import Action, deal_from_seed, legal_actions, new_game
from arena.protocol.convert import action_to_pb, observation_to_pb
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.protocol.wire import action_bytes, action_request_frame, varint
from arena.testing.protocol import sort_by_text


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**32, 2**63 - 1])
def test_varint_matches_protobuf(value: int) -> None:
    reference = referee_pb2.ActionReply(request_id=value).SerializeToString()
    assert reference == (b"\x08" + varint(value) if value else b"")


@pytest.mark.parametrize("request_id", [1, 200, 2**40], ids=["small", "two-byte", "large"])
@pytest.mark.parametrize("bank_ms", [0, 30000], ids=["empty-bank", "bank"])
def test_action_request_frame_equals_the_generated_message(request_id: int, bank_ms: int) -> None:
    state = new_game(deal_from_seed(9))
    legal = sort_by_text(legal_actions(state))
    observation = observation_to_pb(state, 0, [], 0)
    frame = action_request_frame(
        request_id=request_id, game_index=3, observation=observation.SerializeToString(),
        legal=legal, action_deadline_ms=2000, time_bank_ms=bank_ms,
    )
    expected = referee_pb2.PlayResponse(
        action_request=referee_pb2.ActionRequest(
            request_id=request_id, game_index=3, observation=observation,
            legal_actions=[action_to_pb(action) for action in legal],
            action_deadline_ms=2000, time_bank_ms=bank_ms,
        )
    )
    assert referee_pb2.PlayResponse.FromString(frame) == expected
    assert frame == expected.SerializeToString()


def test_action_bytes_are_the_serialised_action() -> None:
    for action in legal_actions(new_game(deal_from_seed(2))):
        assert action_bytes(action) == action_to_pb(action).SerializeToString()


def test_sort_by_text() -> None:
    actions = list(legal_actions(new_game(deal_from_seed(4))))
    assert sort_by_text(reversed(actions)) == sorted(actions, key=Action.text)
