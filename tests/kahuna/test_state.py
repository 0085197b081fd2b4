"""The state's piles and rows as names: the memo by cons cell gives what the cells hold."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arena.kahuna.state as state_module
from arena.kahuna import (
    ISLANDS,
    LINES,
    State,
    Variant,
    apply,
    deal_from_seed,
    legal_actions,
    new_game,
    reshuffle_from_seed,
    start_round,
)
from arena.kahuna.state import NO_CARD, cons_cards, cons_names
from arena.testing.examples import examples


def _names(cell: state_module.Cons) -> tuple[str, ...]:
    return tuple(ISLANDS[card] for card in cons_cards(cell))


def _states(seed: int, variant: Variant) -> list[State]:
    chooser = random.Random(seed)
    state = new_game(deal_from_seed(seed), variant)
    states = [state]
    while not state.is_finished:
        if state.needs_reshuffle:
            state = start_round(
                state, reshuffle_from_seed(seed, state.round + 1, state.reshuffle_cards)
            )
        else:
            state = apply(state, chooser.choice(legal_actions(state)))
        states.append(state)
    return states


def _check(state: State) -> None:
    assert state.played_cards == _names(state._played)
    assert state.facedown_discards == (_names(state._facedown[0]), _names(state._facedown[1]))
    assert state.faceup == tuple(None if c == NO_CARD else ISLANDS[c] for c in state._faceup)


@settings(max_examples=examples(10), deadline=None)
@given(seed=st.integers(0, 2**32), strategic=st.booleans(), tactical=st.booleans())
def test_piles_and_rows_are_the_cells_names(seed: int, strategic: bool, tactical: bool) -> None:
    states = _states(seed, Variant(strategic=strategic, tactical=tactical))
    for state in states:
        _check(state)
    for state in reversed(states):  # older cells after newer ones: found, or built whole
        _check(state)


def test_the_memo_is_bounded_and_right_after_it_is_cleared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(state_module, "_CARD_NAMES_MAX_ENTRIES", 5)
    state_module._CARD_NAMES.clear()
    for state in _states(11, Variant()):
        _check(state)
        assert len(state_module._CARD_NAMES) <= 5


def test_an_empty_pile_has_no_names() -> None:
    assert cons_names(None) == ()


@settings(max_examples=examples(200), deadline=None)
@given(first=st.integers(0, 2 ** len(LINES) - 1), second=st.integers(0, 2 ** len(LINES) - 1))
def test_bridges_are_named_in_board_order(first: int, second: int) -> None:
    masks = (first, second & ~first)
    expected = [
        (LINES[line], seat)
        for line in range(len(LINES))
        for seat in (0, 1)
        if masks[seat] >> line & 1
    ]
    assert list(state_module._bridges_of(masks).items()) == expected
