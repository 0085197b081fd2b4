"""The scenario table of `arena bot check`: each situation is really reached, with the
bot's seat to move, and what it is sent there is what the real referee would send."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from arena.conformance.scenarios import SCENARIOS, Playout, Scenario, opened
from arena.kahuna import ActionType, State, legal_actions, observe
from arena.protocol.convert import observation_to_pb
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee.game import RefereeState

BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}


def _types(state: State) -> set[ActionType]:
    return {action.type for action in legal_actions(state)}


def _reshuffled(playout: Playout, seat: int) -> bool:
    return playout.just_reshuffled and playout.state.round == 2 and bool(playout.reshuffles)


def _forced_draw(playout: Playout, seat: int) -> bool:
    types = _types(playout.state)
    return (
        playout.state.opponent_passed and ActionType.DRAW in types and ActionType.PASS not in types
    )


def _five_may_pass(playout: Playout, seat: int) -> bool:
    types = _types(playout.state)
    five = playout.state.hand_sizes[seat] == 5
    return five and ActionType.DRAW not in types and ActionType.PASS in types


def _five_must_play(playout: Playout, seat: int) -> bool:
    types = _types(playout.state)
    return (
        playout.state.hand_sizes[seat] == 5 and not types & {ActionType.DRAW, ActionType.PASS}
        and bool(types & {ActionType.PLACE, ActionType.DISCARD, ActionType.REMOVE})
    )  # fmt: skip


def _final_turn(number: int) -> Callable[[Playout, int], bool]:
    def holds(playout: Playout, seat: int) -> bool:
        state = playout.state
        endings = _types(state) & {ActionType.DRAW, ActionType.PASS}
        empty = state.deck_size == 0 and state.faceup == (None, None, None)
        only_pass = endings == {ActionType.PASS}
        return state.final_turns and playout.final_turn == number and only_pass and empty

    return holds


def _open_cards(playout: Playout, seat: int) -> bool:
    hands = playout.state.open_cards
    return playout.state.variant.tactical and bool(hands[0]) and bool(hands[1])


def _first_move(playout: Playout, seat: int) -> bool:
    return playout.state.history_length == 0


SITUATIONS: dict[str, Callable[[Playout, int], bool]] = {
    "reshuffle": _reshuffled,
    "forced_draw": _forced_draw,
    "hand_of_five": _five_may_pass,
    "hand_of_five_after_pass": _five_must_play,
    "final_turn_first": _final_turn(1),
    "final_turn_second": _final_turn(2),
    "tactical_open_card": _open_cards,
}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_each_scenario_opens_in_its_situation_with_the_bot_to_move(scenario: Scenario) -> None:
    playout = opened(scenario)
    holds = SITUATIONS.get(scenario.name, _first_move)
    assert holds(playout, scenario.seat), scenario.name
    assert playout.state.variant == scenario.variant
    assert playout.state.handicap == scenario.handicap
    if scenario.situation is not None:
        assert playout.state.to_move == scenario.seat


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.situation is not None],
                         ids=[s.name for s in SCENARIOS if s.situation is not None])  # fmt: skip
def test_the_first_request_carries_the_whole_history_of_the_opening(scenario: Scenario) -> None:
    playout = opened(scenario)
    turns = RefereeState(playout.state)
    turns.events = list(playout.state.history)
    frame, _ = turns.request_for_mover(
        request_id=1, game_index=0, action_deadline_ms=2000, time_bank_ms=30000
    )
    request = referee_pb2.PlayResponse.FromString(frame).action_request
    seen = observe(playout.state, scenario.seat).history
    assert request.observation.history_start == 0
    assert len(request.observation.history) == len(seen) == playout.state.history_length > 0
    whole = observation_to_pb(playout.state, scenario.seat, playout.state.history, 0)
    assert request.observation == whole  # the full observation, history from move one


def test_every_situation_the_table_promises_is_checked_here() -> None:
    assert {s.name for s in SCENARIOS if s.situation is not None} == set(SITUATIONS)
    assert len(BY_NAME) == len(SCENARIOS)


def test_each_variant_is_one_connection_and_every_variant_is_played() -> None:
    runs = [variant for variant, _ in itertools.groupby(SCENARIOS, key=lambda s: s.connection)]
    assert len(runs) == len(set(runs)) == 4
    seats = {s.seat for s in SCENARIOS}
    assert seats == {0, 1}
    assert {b.seat for s in SCENARIOS for b in s.handicap} == {0, 1}
