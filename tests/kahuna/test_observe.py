"""R9: each seat's observation holds exactly what that seat may know."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence

import pytest

from arena.kahuna import (
    ISLANDS,
    ActionType,
    State,
    Variant,
    discard,
    observation_to_json,
    observe,
)
from arena.kahuna.board import ISLAND_INDEX
from arena.kahuna.state import NO_CARD, Cons, cons_events, pack_hand

from .util import playout, pos, run


def _cons(items: Sequence[tuple[object, ...]]) -> Cons:
    cell: Cons = None
    for item in items:
        cell = (cell, *item)
    return cell


def twin(state: State, seat: int, rng: random.Random) -> State:
    """``state`` with everything ``seat`` may not know redrawn at random.

    The opponent's hidden hand cards (all but Tactical open cards), the draw
    pile and the opponent's face-down discards are pooled, shuffled and dealt
    back in the same sizes; the opponent's deck draws and face-down discards
    in the history are rewritten to match nothing in particular.
    """
    opp = 1 - seat
    hidden_hand = list((Counter(state.hands[opp]) - Counter(state.open_cards[opp])).elements())
    deck = list(state.deck)
    facedown = list(state.facedown_discards[opp])
    pool = hidden_hand + deck + facedown
    rng.shuffle(pool)
    new_hidden = pool[: len(hidden_hand)]
    new_deck = pool[len(hidden_hand) : len(hidden_hand) + len(deck)]
    new_facedown = pool[len(hidden_hand) + len(deck) :]
    other = state.copy()
    hand = [ISLAND_INDEX[c] for c in [*new_hidden, *state.open_cards[opp]]]
    packed = pack_hand(hand)
    other._hands = (state._hands[0], packed) if opp == 1 else (packed, state._hands[1])
    other._deck = tuple(ISLAND_INDEX[c] for c in new_deck)
    other._dpos = 0
    cells = _cons([(ISLAND_INDEX[c],) for c in new_facedown])
    other._facedown = (state._facedown[0], cells) if opp == 1 else (cells, state._facedown[1])
    events = []
    for event_seat, action, drawn in cons_events(state._history):
        if event_seat == opp and action.type is ActionType.DISCARD:
            action = discard(rng.choice(ISLANDS))
        if event_seat == opp and drawn != NO_CARD:
            drawn = rng.randrange(len(ISLANDS))
        events.append((event_seat, action, drawn))
    other._history = _cons(events)
    return other


@pytest.mark.parametrize("variant", [Variant(), Variant(tactical=True), Variant(True, True)],
                         ids=["basic", "tactical", "strategic+tactical"])
def test_observation_unchanged_by_what_the_seat_may_not_know_R9(variant: Variant) -> None:
    rng = random.Random(9)
    checked = 0
    for seed in range(12):
        for index, (_, _, state) in enumerate(playout(seed, variant)):
            if index % 7:
                continue
            for seat in (0, 1):
                seen = observe(state, seat)
                other = twin(state, seat, rng)
                assert observe(other, seat) == seen
                assert observation_to_json(observe(other, seat)) == observation_to_json(seen)
                checked += 1
    assert checked > 300


def test_the_twin_really_differs_for_the_opponent() -> None:
    """The leak test can fail: the opponent's own view of the twin does change."""
    rng = random.Random(4)
    changed = 0
    for _, _, state in playout(2):
        if observe(twin(state, 0, rng), 1) != observe(state, 1):
            changed += 1
    assert changed > 20


def test_opponent_hidden_parts_are_masked_R9() -> None:
    state = pos(hands=[["HUNA", "ALOA"], ["LALE"]], deck=["KAHU", "COCO"],
                faceup=["DUDA", None, None])
    state = run(state, "discard HUNA", "draw deck", "draw DUDA")
    mine, theirs = observe(state, 0), observe(state, 1)
    assert mine.hand == ("ALOA", "KAHU") and mine.own_facedown_discards == ("HUNA",)
    assert theirs.opponent_hand_size == 2 and theirs.opponent_facedown_count == 1
    assert [(e.type, e.card, e.drawn, e.hidden) for e in theirs.history[:2]] == [
        (ActionType.DISCARD, None, None, True),
        (ActionType.DRAW, None, None, True),
    ]
    assert [(e.card, e.drawn, e.hidden) for e in mine.history[:2]] == [
        ("HUNA", None, False), (None, "KAHU", False)]
    assert theirs.history[2].card == "DUDA" and theirs.faceup == ("COCO", None, None)
    assert "KAHU" not in json.dumps(observation_to_json(theirs)).replace('"KAHU-', "")


def test_tactical_open_cards_are_shown_to_both_R8_R9() -> None:
    state = pos(variant={"tactical": True}, faceup=["DUDA", None, None], deck=["KAHU"])
    state = run(state, "draw DUDA")
    assert observe(state, 1).open_cards == (("DUDA",), ())
    assert observe(state, 1).opponent_hand_size == 1


def test_observe_refuses_a_bad_seat() -> None:
    with pytest.raises(ValueError):
        observe(pos(), 2)
