"""The greedy evaluation on engine states (``greedy.view``, ``greedy_masks``) and
python_ismcts's greedy playout.

``view`` must show the evaluation what the seat to move sees and nothing else,
so that a playout's greedy choice is the one the python_greedy bot makes from
its own observation; ``greedy_masks`` (the playout's fast copy on bitmasks)
must score every action as ``greedy`` does, to the float; the playout must
stop where its docstring says.
"""

from __future__ import annotations

import itertools
import random

import pytest
from ismcts import GREEDY_TURNS, greedy_playout
from kahuna_bot import greedy, greedy_masks

from arena.kahuna import State, Variant, apply, legal_actions, observe
from tests.kahuna.util import playout, pos

VIEW_CASES = [
    pytest.param(
        pos(to_move=0, hands=[["ALOA", "BARI"], ["COCO", "DUDA", "ELAI"]]),
        0, ("ALOA", "BARI"), id="seat-0-to-move-sees-its-hand",
    ),
    pytest.param(
        pos(to_move=1, hands=[["ALOA", "BARI"], ["COCO", "DUDA", "ELAI"]]),
        1, ("COCO", "DUDA", "ELAI"), id="seat-1-to-move-sees-its-hand",
    ),
    pytest.param(
        pos(round=2, to_move=1, points=[1, 0], hands=[["HUNA"], []],
            bridges={"ALOA-BARI": 0, "KAHU-LALE": 1}),
        1, (), id="an-empty-hand-in-round-2",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("state", "seat", "hand"), VIEW_CASES)
def test_view_is_the_position_of_the_seat_to_move(
    state: State, seat: int, hand: tuple[str, ...]
) -> None:
    seen = greedy.view(state)
    assert (seen.seat, seen.hand) == (seat, hand)
    obs = observe(state, seat)
    assert (seen.round, dict(seen.bridges), seen.faceup, seen.deck_size) == (
        obs.round, dict(obs.bridges), obs.faceup, obs.deck_size,
    )  # fmt: skip


def test_view_of_a_finished_game_is_refused() -> None:
    *_, (_, _, finished) = playout(2)
    assert finished.is_finished
    with pytest.raises(ValueError, match="no seat to move"):
        greedy.view(finished)


@pytest.mark.parametrize("seed", range(4))
def test_view_chooses_what_the_greedy_bot_chooses_from_its_observation(seed: int) -> None:
    """At every decision of a random game, the greedy choice on the engine state's
    view equals the choice on the seat's own observation (what python_greedy plays)."""
    decisions = 0
    for state, action, _ in playout(seed):
        if action is None:
            continue
        legal = legal_actions(state)
        assert greedy.choose(greedy.view(state), legal) == greedy.choose(
            observe(state, state.to_move or 0), legal
        )
        decisions += 1
    assert decisions > 20


VARIANTS = [
    pytest.param(Variant(), id="basic"),
    pytest.param(Variant(tactical=True), id="tactical"),
    pytest.param(Variant(strategic=True, tactical=True), id="strategic-tactical"),
]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("seed", range(3))
def test_the_bitmask_evaluation_scores_and_chooses_as_greedy_does(
    seed: int, variant: Variant
) -> None:
    """Every legal action of every decision of a random game: the same score (exactly:
    the same expressions in the same order, so ties break alike) and the same choice."""
    for state, action, _ in playout(seed, variant):
        if action is None:
            continue
        legal = legal_actions(state)
        view = greedy.view(state)
        for option in legal:
            assert greedy_masks.score_action(state, option) == greedy.score_action(view, option)
        assert greedy_masks.choose(state, legal) == greedy.choose(view, legal)


@pytest.mark.parametrize("seed", range(2))
def test_the_bitmask_position_value_is_greedys(seed: int) -> None:
    for state, _, _ in playout(seed):
        masks = state.bridge_masks
        for seat in (0, 1):
            fast = greedy_masks.position_value(masks[seat], masks[1 - seat], 0)
            assert fast == greedy.position_value(state.bridges, seat, ())


def _decisions(seed: int, every: int = 7) -> list[State]:
    steps = enumerate(playout(seed))
    return [state for i, (state, action, _) in steps if action and i % every == 0]


@pytest.mark.parametrize("seed", range(3))
def test_without_noise_the_greedy_playout_plays_greedy_choices(seed: int) -> None:
    """epsilon 0: every action of the playout is ``greedy.choose`` on the mover's view,
    replayed from the start state (its history holds the actions in order)."""
    for start in _decisions(seed):
        end = greedy_playout(start, random.Random(0), turns=3, epsilon=0.0)
        played = [event.action for event in end.history[len(start.history) :]]
        assert played
        state = start
        for action in played:
            assert action == greedy.choose(greedy.view(state), legal_actions(state))
            state = apply(state, action)


@pytest.mark.parametrize("turns", [1, GREEDY_TURNS, 4])
@pytest.mark.parametrize("epsilon", [0.0, 0.5])
def test_the_greedy_playout_stops_after_its_turns_or_at_the_round_end(
    turns: int, epsilon: float
) -> None:
    """It plays on while the seat that started the playout (turn 1) and then, in
    alternation, the other seat move, for ``turns`` turns; it stops earlier only at
    the end of the round or of the game."""
    for start in _decisions(1) + _decisions(5):
        end = greedy_playout(start, random.Random(3), turns=turns, epsilon=epsilon)
        events = end.history[len(start.history) :]
        changes = sum(1 for a, b in itertools.pairwise(events) if a.seat != b.seat)
        assert changes <= turns - 1
        if not (end.is_finished or end.needs_reshuffle):
            assert changes == turns - 1
            assert end.to_move != events[-1].seat  # the last turn was played to its end
