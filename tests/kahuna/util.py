"""Small helpers shared by the engine tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from arena.kahuna import (
    ISLANDS,
    LINES_OF,
    MAJORITY,
    Action,
    State,
    Variant,
    apply,
    deal_from_seed,
    legal_actions,
    new_game,
    parse_action,
    play_random_game,
    replay_steps,
    reshuffle_from_seed,
    start_round,
)
from arena.kahuna.rng import SplitMix64
from arena.testing.positions import build_position


def pos(**spec: Any) -> State:
    return build_position(spec)


def act(text: str) -> Action:
    return parse_action(text)


def run(state: State, *texts: str) -> State:
    for text in texts:
        state = apply(state, parse_action(text))
    return state


def legal_texts(state: State) -> list[str]:
    return sorted(action.text() for action in legal_actions(state))


def majority_control(state: State) -> dict[str, int]:
    """Control computed independently from the bridges (R5: a strict majority)."""
    result = {}
    bridges = state.bridges
    for island in ISLANDS:
        for seat in (0, 1):
            owned = sum(1 for line in LINES_OF[island] if bridges.get(line) == seat)
            if owned >= MAJORITY[island]:
                result[island] = seat
    return result


def playout(
    seed: int, variant: Variant = Variant()  # noqa: B008
) -> Iterator[tuple[State, Action | None, State]]:
    """Every step (before, action, after) of a seeded random game; action None = new round."""
    rng = SplitMix64(seed * 7919 + 17)
    state = new_game(deal_from_seed(seed), variant)
    while not state.is_finished:
        if state.needs_reshuffle:
            after = start_round(
                state, reshuffle_from_seed(seed, state.round + 1, state.reshuffle_cards)
            )
            yield state, None, after
        else:
            actions = legal_actions(state)
            action = actions[rng.below(len(actions))]
            after = apply(state, action)
            yield state, action, after
        state = after


def proven_cards_position() -> tuple[State, int]:
    """A position and the seat to move in it (seat 1) whose opponent's hand and face-down
    discards, 5 places, must hold 5 cards the history proves, of 18 unseen: almost no
    shuffle of the unseen cards puts them there."""
    record = play_random_game(27, Variant())
    [step] = [s for s in replay_steps(record) if s.action == 97]
    assert step.state.to_move == 1
    return step.state, 1
