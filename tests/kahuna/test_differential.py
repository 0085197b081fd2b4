"""The engine against a naive second reading of the rules (tests/kahuna/reference.py):
the same summary and the same legal list after every action, legal or not."""

from __future__ import annotations

import pytest

from arena.kahuna import (
    IllegalActionError,
    Variant,
    apply,
    deal_from_seed,
    legal_actions,
    new_game,
    reshuffle_from_seed,
    start_round,
    state_summary,
)
from arena.kahuna.actions import _INTERN
from arena.kahuna.rng import SplitMix64

from . import reference

CANDIDATES = sorted(_INTERN.values(), key=lambda a: a.text())


def compare_game(seed: int, variant: Variant, adversarial: bool) -> int:
    rng = SplitMix64(seed ^ 0x5EED)
    state = new_game(deal_from_seed(seed), variant)
    ref = reference.new(list(deal_from_seed(seed)), variant.strategic, variant.tactical)
    steps = 0
    while not state.is_finished:
        if state.needs_reshuffle:
            order = reshuffle_from_seed(seed, state.round + 1, state.reshuffle_cards)
            state, ref = start_round(state, order), reference.next_round(ref, list(order))
        ref_legal = reference.legal(ref)
        assert {a.text() for a in legal_actions(state)} == ref_legal
        assert state_summary(state) == reference.summary(ref)
        if state.is_finished:
            break
        if adversarial and rng.below(3) == 0:  # try anything; both must agree it is illegal
            action = CANDIDATES[rng.below(len(CANDIDATES))]
            if action.text() not in ref_legal:
                with pytest.raises(IllegalActionError):
                    apply(state, action)
                continue
        else:
            actions = legal_actions(state)
            action = actions[rng.below(len(actions))]
        state, ref = apply(state, action), reference.play(ref, action.text())
        steps += 1
    assert state_summary(state) == reference.summary(ref)
    return steps


@pytest.mark.parametrize("variant", [Variant(), Variant(strategic=True), Variant(tactical=True)],
                         ids=["basic", "strategic", "tactical"])
def test_engine_agrees_with_reference(variant: Variant) -> None:
    for seed in range(12):
        compare_game(seed, variant, adversarial=seed % 2 == 1)


@pytest.mark.soak
@pytest.mark.parametrize("variant", [Variant(), Variant(True, False), Variant(False, True),
                                     Variant(True, True)],
                         ids=["basic", "strategic", "tactical", "both"])
def test_engine_agrees_with_reference_soak(variant: Variant) -> None:
    for seed in range(1000, 1500):
        compare_game(seed, variant, adversarial=seed % 2 == 1)
