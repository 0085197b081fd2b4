"""Hand-assembled frames parse to exactly what the generated API builds."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arena.protocol.wire as wire
from arena.kahuna import ISLANDS, Action, apply, deal_from_seed, legal_actions, new_game
from arena.protocol.convert import action_to_pb, observation_to_pb
from arena.protocol.gen.kahuna.v1 import game_pb2, referee_pb2
from arena.protocol.wire import action_bytes, action_request_frame, legal_set, varint
from arena.testing.examples import examples
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


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 2**32), moves=st.integers(0, 40), shuffle=st.randoms())
def test_a_legal_set_is_the_actions_sorted_by_text_in_any_order(
    seed: int, moves: int, shuffle: random.Random
) -> None:
    state = new_game(deal_from_seed(seed))
    chooser = random.Random(seed)
    for _ in range(moves):
        if not legal_actions(state):
            break
        state = apply(state, chooser.choice(legal_actions(state)))
    actions = list(legal_actions(state))
    shuffle.shuffle(actions)
    legal = legal_set(actions)
    expected = sort_by_text(actions)
    assert list(legal.sorted) == expected
    request = referee_pb2.ActionRequest(legal_actions=[action_to_pb(a) for a in expected])
    assert legal.fields == request.SerializeToString()
    assert dict(legal.by_bytes) == {action_bytes(action): action for action in actions}


@settings(max_examples=examples(40), deadline=None)
@given(
    piles=st.lists(st.lists(st.sampled_from(ISLANDS), max_size=30), min_size=1, max_size=4),
    limit=st.integers(1, 8),
)
def test_a_growing_pile_encodes_as_the_generated_field(piles: list[list[str]], limit: int) -> None:
    """Each pile is encoded card by card, as it grows (the field known one card
    shorter), in a cache that is cleared whenever it holds ``limit`` piles."""
    encoded = wire._Strings(14)  # Observation.played_cards
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(wire, "_CACHE_MAX_ENTRIES", limit)
        for pile in piles:
            for size in range(len(pile) + 1):
                cards = tuple(pile[:size])
                expected = game_pb2.Observation(played_cards=cards).SerializeToString()
                assert encoded[cards] == expected
                assert len(encoded) <= limit
