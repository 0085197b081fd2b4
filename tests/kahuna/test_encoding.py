"""The fixed action encoding and the seat observation vector (arena.kahuna.encoding)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.kahuna import Variant, observe
from arena.kahuna.encoding import (
    ACTION_COUNT,
    ACTIONS,
    FEATURES,
    OBSERVATION_HIGH,
    OBSERVATION_SIZE,
    action_index,
    action_mask,
    encode_observation,
)
from arena.kahuna.legal import legal_actions
from arena.testing.examples import examples
from tests.kahuna.util import playout

VARIANTS = [Variant(), Variant(strategic=True), Variant(tactical=True), Variant(True, True)]


def test_every_action_has_one_index() -> None:
    assert ACTION_COUNT == len(ACTIONS) == len({a.code for a in ACTIONS}) == 161
    assert [action_index(a) for a in ACTIONS] == list(range(ACTION_COUNT))


def test_the_vector_has_the_documented_slots() -> None:
    assert OBSERVATION_SIZE == sum(size for _, size, _ in FEATURES) == len(OBSERVATION_HIGH)
    assert len({name for name, _, _ in FEATURES}) == len(FEATURES)


@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 2**32), variant=st.sampled_from(VARIANTS))
def test_every_legal_action_of_a_game_is_encoded_and_every_vector_in_bounds(
    seed: int, variant: Variant
) -> None:
    for state, action, _ in playout(seed, variant):
        if action is None:
            continue
        legal = legal_actions(state)
        mask = action_mask(legal)
        assert sum(mask) == len(legal)
        assert {ACTIONS[i] for i, flag in enumerate(mask) if flag} == set(legal)
        for seat in (0, 1):
            vector = encode_observation(observe(state, seat))
            assert len(vector) == OBSERVATION_SIZE
            assert all(0 <= v <= high for v, high in zip(vector, OBSERVATION_HIGH, strict=True))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_vector_is_built_from_the_seat_observation_only(seed: int) -> None:
    """The vector without the history equals the one with it, and holds the seat's hand."""
    for state, action, _ in playout(seed):
        if action is None:
            continue
        for seat in (0, 1):
            full = encode_observation(observe(state, seat))
            assert full == encode_observation(observe(state, seat, history=False))
            start = sum(size for name, size, _ in FEATURES[: _slot("hand_count_of_island")])
            hand = full[start : start + 12]
            assert sum(hand) == len(state.hands[seat])


def _slot(name: str) -> int:
    return [n for n, _, _ in FEATURES].index(name)
