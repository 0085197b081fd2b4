"""Each request the referee builds is byte for byte the generated API's message."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.kahuna import (
    Action,
    HandicapBridge,
    State,
    Variant,
    deal_from_seed,
    legal_actions,
    new_game,
    reshuffle_from_seed,
    start_round,
)
from arena.protocol.convert import action_to_pb, observation_to_pb
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee.game import RefereeState
from arena.testing.examples import examples

FLAGS = (False, True)
VARIANTS = [Variant(strategic, tactical) for strategic in FLAGS for tactical in FLAGS]
HANDICAPS: list[tuple[HandicapBridge, ...]] = [
    (),
    (HandicapBridge(0, "ALOA-BARI"),),
    (HandicapBridge(1, "DUDA-ELAI"), HandicapBridge(1, "COCO-FAAA")),
]


def _check_playout(seed: int, variant: Variant, handicap: tuple[HandicapBridge, ...]) -> int:
    """Play one random game through RefereeState; every frame must equal the generated one."""
    chooser = random.Random(seed)
    turns = RefereeState(new_game(deal_from_seed(seed), variant, handicap))
    sent = [0, 0]
    request_id = 0
    while not turns.state.is_finished:
        state = turns.state
        if state.needs_reshuffle:
            order = reshuffle_from_seed(seed, state.round + 1, state.reshuffle_cards)
            turns.start_round(start_round(state, order))
            continue
        seat = turns.to_move
        request_id += chooser.choice((1, 1, 200, 2**20))
        bank_ms = chooser.choice((0, 1, 30_000, 2**32 - 1))
        frame, legal = turns.request_for_mover(
            request_id=request_id, game_index=seed % 7, action_deadline_ms=2000,
            time_bank_ms=bank_ms,
        )  # fmt: skip
        history = state.history
        expected = referee_pb2.PlayResponse(
            action_request=referee_pb2.ActionRequest(
                request_id=request_id,
                game_index=seed % 7,
                observation=observation_to_pb(state, seat, history[sent[seat] :], sent[seat]),
                legal_actions=[action_to_pb(action) for action in _sorted_legal(state)],
                action_deadline_ms=2000,
                time_bank_ms=bank_ms,
            )
        )
        assert frame == expected.SerializeToString()
        assert sorted(legal.values(), key=Action.text) == _sorted_legal(state)
        sent[seat] = len(history)
        turns.apply(chooser.choice(sorted(legal.values(), key=Action.text)), seat)
    return request_id


def _sorted_legal(state: State) -> list[Action]:
    return sorted(legal_actions(state), key=Action.text)


@pytest.mark.parametrize("handicap", HANDICAPS, ids=["none", "one", "two"])
@pytest.mark.parametrize("variant", VARIANTS, ids=str)
def test_requests_equal_the_generated_messages(
    variant: Variant, handicap: tuple[HandicapBridge, ...]
) -> None:
    for seed in range(6):
        assert _check_playout(seed, variant, handicap) > 0


@settings(max_examples=examples(15), deadline=None)
@given(seed=st.integers(0, 2**32), variant=st.sampled_from(VARIANTS))
def test_requests_equal_the_generated_messages_on_random_deals(seed: int, variant: Variant) -> None:
    _check_playout(seed, variant, ())
