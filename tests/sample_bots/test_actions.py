"""kahuna_bot.actions: text notation and the protobuf form, against the arena's own."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kahuna_bot import (
    ISLANDS,
    LINES,
    PASS,
    Action,
    ActionType,
    action_from_proto,
    action_to_proto,
    discard,
    draw,
    parse_action,
    place,
    remove,
)
from kahuna_bot._gen import game_pb2

from arena import kahuna
from arena.protocol import convert

CANONICAL_CASES = [
    pytest.param("place HUNA ELAI-HUNA", "place HUNA ELAI-HUNA", id="place"),
    pytest.param("PLACE huna huna-elai", "place HUNA ELAI-HUNA", id="place-lenient"),
    pytest.param("remove HUNA+ELAI HUNA-ELAI", "remove ELAI+HUNA ELAI-HUNA", id="remove-sorted"),
    pytest.param("remove elai+elai elai-huna", "remove ELAI+ELAI ELAI-HUNA", id="remove-same"),
    pytest.param("discard lale", "discard LALE", id="discard"),
    pytest.param("draw deck", "draw deck", id="draw-deck"),
    pytest.param("Draw DECK", "draw deck", id="draw-deck-case"),
    pytest.param("draw coco", "draw COCO", id="draw-faceup"),
    pytest.param("  pass ", "pass", id="pass"),
]


@pytest.mark.parametrize(("text", "canonical"), CANONICAL_CASES)
def test_parse_action_reads_leniently_and_prints_canonically(text: str, canonical: str) -> None:
    action = parse_action(text)
    assert str(action) == canonical
    assert str(action) == kahuna.parse_action(text).text()


BAD_TEXT_CASES = [
    pytest.param("", "empty", id="empty"),
    pytest.param("jump HUNA", "unknown action", id="unknown-verb"),
    pytest.param("place HUNA", "place takes 2", id="missing-line"),
    pytest.param("place XXXX ELAI-HUNA", "unknown island", id="unknown-island"),
    pytest.param("place HUNA ALOA-LALE", "no line joins", id="no-such-line"),
    pytest.param("place HUNA ELAIHUNA", "two islands joined", id="line-shape"),
    pytest.param("remove ELAI ELAI-HUNA", "two cards joined", id="remove-one-card"),
    pytest.param("pass now", "pass takes 0", id="pass-argument"),
]


@pytest.mark.parametrize(("text", "message"), BAD_TEXT_CASES)
def test_parse_action_names_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_action(text)


def _actions_seen_in_random_games(games: int) -> set[kahuna.Action]:
    seen: set[kahuna.Action] = set()
    for seed in range(games):
        rng = random.Random(seed)
        state = kahuna.new_game(kahuna.deal_from_seed(seed))
        while not state.is_finished:
            if state.needs_reshuffle:
                order = kahuna.reshuffle_from_seed(seed, state.round + 1, state.reshuffle_cards)
                state = kahuna.start_round(state, order)
                continue
            legal = kahuna.legal_actions(state)
            seen.update(legal)
            state = kahuna.apply(state, rng.choice(legal))
    return seen


def test_every_action_round_trips_through_the_arena_messages() -> None:
    actions = _actions_seen_in_random_games(6)
    kinds = {action.type.value for action in actions}
    assert kinds == {"place", "remove", "discard", "draw", "pass"}
    for arena_action in actions:
        ours = action_from_proto(convert.action_to_pb(arena_action))
        assert str(ours) == arena_action.text()
        assert convert.action_from_pb(action_to_proto(ours)) == arena_action


PROTO_ERROR_CASES = [
    pytest.param(game_pb2.Action(), "unknown action type", id="unspecified"),
    pytest.param(
        game_pb2.Action(type=game_pb2.ACTION_TYPE_REMOVE, cards=["ELAI"], line="ELAI-HUNA"),
        "two cards",
        id="remove-one-card",
    ),
    pytest.param(
        game_pb2.Action(type=game_pb2.ACTION_TYPE_PLACE, card="NOPE", line="ELAI-HUNA"),
        "unknown island",
        id="bad-island",
    ),
]


@pytest.mark.parametrize(("message", "error"), PROTO_ERROR_CASES)
def test_action_from_proto_refuses_what_is_not_an_action(
    message: game_pb2.Action, error: str
) -> None:
    with pytest.raises(ValueError, match=error):
        action_from_proto(message)


def test_only_draw_and_pass_end_the_turn() -> None:
    examples = [
        place("HUNA", "ELAI-HUNA"), remove("ELAI", "HUNA", "ELAI-HUNA"), discard("HUNA"),
        draw(), draw("HUNA"), PASS,
    ]  # fmt: skip
    assert {action.type for action in examples} == set(ActionType)
    ending = {action.type for action in examples if action.ends_turn}
    assert ending == {ActionType.DRAW, ActionType.PASS}


_islands = st.sampled_from(ISLANDS)
_lines = st.sampled_from(LINES)
ACTIONS = st.one_of(
    st.builds(place, _islands, _lines),
    st.builds(remove, _islands, _islands, _lines),
    st.builds(discard, _islands),
    st.builds(draw, st.none() | _islands),
    st.just(PASS),
)


def _lenient(text: str) -> str:
    """The same action spelled loosely: lower case, a line's islands swapped."""
    words = text.lower().split()
    if words[0] in ("place", "remove"):
        first, second = words[-1].split("-")
        words[-1] = f"{second}-{first}"
    if words[0] == "remove":
        first, second = words[1].split("+")
        words[1] = f"{second}+{first}"
    return "  ".join(words)


@given(ACTIONS)
def test_text_and_proto_round_trip(action: Action) -> None:
    assert parse_action(str(action)) == action
    assert parse_action(_lenient(str(action))) == action
    assert action_from_proto(action_to_proto(action)) == action
