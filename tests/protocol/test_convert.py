"""Game objects <-> kahuna.v1 messages: round trips, refusals, and R9 equivalence."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.kahuna import (
    PASS_ACTION,
    Action,
    MalformedActionError,
    State,
    Variant,
    apply,
    deal_from_seed,
    discard,
    draw,
    legal_actions,
    new_game,
    observe,
    place,
    remove,
    reshuffle_from_seed,
    start_round,
)
from arena.kahuna.rng import choice_stream
from arena.protocol.convert import (
    action_from_pb,
    action_to_pb,
    actions_to_pb,
    observation_to_pb,
)
from arena.protocol.gen.kahuna.v1 import game_pb2
from arena.protocol.wire import observation_bytes
from arena.testing.examples import examples
from arena.testing.protocol import observation_from_pb

ACTIONS = [
    place("HUNA", "ELAI-HUNA"),
    remove("HUNA", "ELAI", "ELAI-HUNA"),
    remove("ELAI", "ELAI", "ELAI-HUNA"),
    discard("LALE"),
    draw(),
    draw("COCO"),
    PASS_ACTION,
]


@pytest.mark.parametrize("action", ACTIONS, ids=[action.text() for action in ACTIONS])
def test_action_round_trip(action: Action) -> None:
    wire = action_to_pb(action).SerializeToString()
    assert action_from_pb(game_pb2.Action.FromString(wire)) == action


LENIENT = [
    ("lower case", game_pb2.Action(type=game_pb2.ACTION_TYPE_PLACE, card="huna", line="huna-elai"),
     place("HUNA", "ELAI-HUNA")),
    ("remove cards unsorted", game_pb2.Action(
        type=game_pb2.ACTION_TYPE_REMOVE, cards=["HUNA", "ELAI"], line="ELAI-HUNA"),
     remove("ELAI", "HUNA", "ELAI-HUNA")),
]


@pytest.mark.parametrize(("message", "expected"), [case[1:] for case in LENIENT],
                         ids=[case[0] for case in LENIENT])
def test_lenient_input_is_canonicalised(message: game_pb2.Action, expected: Action) -> None:
    assert action_from_pb(message) == expected


MALFORMED = [
    ("unspecified type", game_pb2.Action(), "not an action type"),
    ("unknown type", game_pb2.Action(type=99), "not an action type"),  # type: ignore[arg-type]
    ("unknown island", game_pb2.Action(type=game_pb2.ACTION_TYPE_DISCARD, card="ATLANTIS"),
     "ATLANTIS"),
    ("place without line", game_pb2.Action(type=game_pb2.ACTION_TYPE_PLACE, card="HUNA"),
     "needs a line"),
    ("place without card", game_pb2.Action(type=game_pb2.ACTION_TYPE_PLACE, line="ELAI-HUNA"),
     "needs a card"),
    ("remove with one card", game_pb2.Action(
        type=game_pb2.ACTION_TYPE_REMOVE, cards=["HUNA"], line="ELAI-HUNA"), "exactly 2"),
    ("pass with a card", game_pb2.Action(type=game_pb2.ACTION_TYPE_PASS, card="HUNA"),
     "takes no card"),
    ("draw with a line", game_pb2.Action(type=game_pb2.ACTION_TYPE_DRAW, line="ELAI-HUNA"),
     "takes no line"),
    ("not a line", game_pb2.Action(type=game_pb2.ACTION_TYPE_PLACE, card="ALOA", line="ALOA-LALE"),
     "ALOA-LALE"),
    ("huge name", game_pb2.Action(type=game_pb2.ACTION_TYPE_DISCARD, card="A" * 5000),
     "5000 characters"),
]


@pytest.mark.parametrize(("message", "needle"), [case[1:] for case in MALFORMED],
                         ids=[case[0] for case in MALFORMED])
def test_malformed_actions_are_refused_by_name(message: game_pb2.Action, needle: str) -> None:
    with pytest.raises(MalformedActionError, match=needle):
        action_from_pb(message)


def _playout(seed: int, variant: Variant) -> list[State]:
    """Every state where a seat must act, in a seeded random game."""
    deal_seed = seed
    state = new_game(deal_from_seed(deal_seed), variant)
    chooser = choice_stream(seed)
    states = []
    while not state.is_finished:
        if state.needs_reshuffle:
            order = reshuffle_from_seed(deal_seed, state.round + 1, state.reshuffle_cards)
            state = start_round(state, order)
            continue
        states.append(state)
        options = legal_actions(state)
        state = apply(state, options[chooser.below(len(options))])
    states.append(state)
    return states


@settings(max_examples=examples(12), deadline=None)
@given(seed=st.integers(0, 2**32), strategic=st.booleans(), tactical=st.booleans())
def test_incremental_observations_decode_to_the_engines(
    seed: int, strategic: bool, tactical: bool
) -> None:
    """R9: per seat, the decoded messages (history concatenated) equal observe()."""
    states = _playout(seed, Variant(strategic=strategic, tactical=tactical))
    final = states[-1]
    events = final.history
    known: list[list[object]] = [[], []]
    for state in states:
        for seat in (0, 1):
            start = len(known[seat])
            new_events = events[start : state.history_length]
            message = observation_to_pb(state, seat, new_events, start)
            fast = observation_bytes(state, seat, new_events, start)
            assert fast == message.SerializeToString()  # the hot path's encoder, byte for byte
            wire = game_pb2.Observation.FromString(fast)
            decoded = observation_from_pb(wire, known[seat])  # type: ignore[arg-type]
            assert decoded == observe(state, seat)
            known[seat] = list(decoded.history)


def test_legal_actions_are_sent_sorted_by_text() -> None:
    state = new_game(deal_from_seed(5))
    sent = [action_from_pb(message) for message in actions_to_pb(legal_actions(state))]
    assert [action.text() for action in sent] == sorted(a.text() for a in legal_actions(state))


def test_history_start_must_match_what_is_known() -> None:
    state = new_game(deal_from_seed(5))
    message = observation_to_pb(state, 0, [], 3)
    with pytest.raises(ValueError, match="history_start 3"):
        observation_from_pb(message, [])
