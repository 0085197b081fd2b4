"""arena.kahuna.spectate: a spectator sees only what both seats may know (R9).

The leak test: for many positions of random games, deal the cards each seat
cannot see anew (``arena.testing.worlds``, a completion of that seat's
observation) and require the spectator view, and its JSON, to be the same in
every such world. A view that showed any card hidden from either seat would
differ in some world; the control runs the same check on seat 0's
observation and finds the difference.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.kahuna import ActionType, State, Variant, observation_to_json, observe
from arena.kahuna.spectate import PublicEvent, spectate, spectator_to_json
from arena.testing.examples import examples
from arena.testing.worlds import other_worlds

from .util import playout, run
from .util import pos as position

VARIANTS = [Variant(), Variant(tactical=True), Variant(strategic=True, tactical=True)]
View = Callable[[State], object]


def positions(seed: int, variant: Variant, every: int = 3) -> Iterator[State]:
    for step, (before, _action, _after) in enumerate(playout(seed, variant)):
        if step % every == 0 and not before.needs_reshuffle and not before.is_finished:
            yield before


def first_leak(view: View, states: Iterator[State], rng: random.Random) -> str | None:
    """The first position where ``view`` differs between worlds a seat cannot tell apart."""
    return first_leak_of({"view": view}, states, rng)


def first_leak_of(
    views: dict[str, View], states: Iterator[State], rng: random.Random
) -> str | None:
    """``first_leak`` for several views at once, each held to the same worlds."""
    for state in states:
        shown = {name: view(state) for name, view in views.items()}
        texts = {name: json.dumps(v, sort_keys=True, default=repr) for name, v in shown.items()}
        for seat in (0, 1):
            for world in other_worlds(state, seat, rng, 3):
                for name, view in views.items():
                    other = view(world)
                    text = json.dumps(other, sort_keys=True, default=repr)
                    if other != shown[name] or text != texts[name]:
                        return f"seat {seat} cannot tell these apart, but the {name} differs"
    return None


def json_view(state: State) -> object:
    return json.loads(json.dumps(spectator_to_json(spectate(state))))


@pytest.mark.parametrize("variant", VARIANTS, ids=["basic", "tactical", "both"])
def test_the_spectator_view_is_the_same_in_every_world_either_seat_cannot_rule_out(
    variant: Variant,
) -> None:
    """Both the view (``spectate``) and its JSON as sent, on the same positions and the
    same worlds: one playout and one draw of worlds serve both."""
    rng = random.Random(16)
    views: dict[str, View] = {"view": spectate, "json": json_view}
    for seed in range(6):
        assert first_leak_of(views, positions(seed, variant), rng) is None


def test_control_a_seat_s_observation_fails_the_leak_test() -> None:
    """The check can fail: seat 0's own hand differs in the worlds seat 1 cannot rule out."""
    rng = random.Random(16)
    leak = first_leak(lambda s: observation_to_json(observe(s, 0)), positions(1, Variant()), rng)
    assert leak is not None and "seat 1" in leak


def test_the_other_worlds_really_differ_in_what_is_hidden() -> None:
    """Else the leak test would pass vacuously: the hidden places are dealt anew."""
    rng = random.Random(3)
    changed = total = 0
    for state in positions(2, Variant(), every=5):
        for seat in (0, 1):
            for world in other_worlds(state, seat, rng, 2):
                total += 1
                opponent = 1 - seat
                assert world.hands[seat] == state.hands[seat]
                assert observe(world, seat) == observe(state, seat)
                changed += (world.hands[opponent], world.deck) != (
                    state.hands[opponent], state.deck,
                )  # fmt: skip
    assert total > 20 and changed > total * 0.8


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 50_000), variant=st.sampled_from(VARIANTS))
def test_no_hidden_card_in_the_json_of_any_position(seed: int, variant: Variant) -> None:
    """Each card a seat holds is in the JSON only as often as the public columns show it."""
    rng = random.Random(seed)
    assert first_leak(json_view, positions(seed, variant, every=9), rng) is None


def test_face_down_discards_and_deck_draws_are_masked_face_up_draws_shown() -> None:
    state = position(
        hands=[["HUNA"], ["ALOA", "ELAI"]], faceup=["HUNA", "COCO", "LALE"], to_move=1,
        rest="played", deck=["BARI", "DUDA", "FAAA"],
    )  # fmt: skip
    state = run(state, "draw HUNA", "draw deck", "discard ELAI", "draw deck", "pass")
    events = spectate(state).history[-5:]
    assert events == (
        PublicEvent(1, ActionType.DRAW, "HUNA", None, None, False),
        PublicEvent(0, ActionType.DRAW, None, None, None, True),
        PublicEvent(1, ActionType.DISCARD, None, None, None, True),
        PublicEvent(1, ActionType.DRAW, None, None, None, True),
        PublicEvent(0, ActionType.PASS, None, None, None, False),
    )
    assert [e.text() for e in events] == [
        "draw HUNA", "draw deck", "discard (face down)", "draw deck", "pass",
    ]  # fmt: skip
    view = spectate(state)
    assert view.facedown_counts == (0, 1)
    assert view.hand_sizes == state.hand_sizes
