"""arena.kahuna.view: one rule for what each audience is shown, one builder per audience.

The leak test puts each audience's view of many positions in the one shape every
renderer reads (``table``) and requires it to be the same in every world that
audience cannot rule out (``arena.testing.worlds``); the control finds the full
view differing there.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

import pytest

from arena.kahuna import Event, State, Variant, draw, observe, place
from arena.kahuna.actions import PASS_ACTION, Action, discard, remove
from arena.kahuna.spectate import public_event, spectate
from arena.kahuna.view import (
    FULL,
    OBSERVATION_FIELDS,
    SPECTATOR,
    Audience,
    Observation,
    TableView,
    event_text,
    observe_since,
    position,
    seat_view,
    seen_event,
    shown,
    table,
)
from arena.testing.worlds import other_worlds

from .util import playout

VARIANTS = [Variant(), Variant(tactical=True), Variant(strategic=True, tactical=True)]
AUDIENCES: list[Audience] = [0, 1, SPECTATOR, FULL]

# (action by seat 0, the audiences shown its card)
SHOWN: dict[str, tuple[Action, set[Audience]]] = {
    "place": (place("ALOA", "ALOA-HUNA"), {0, 1, SPECTATOR, FULL}),
    "remove": (remove("ALOA", "HUNA", "ALOA-HUNA"), {0, 1, SPECTATOR, FULL}),
    "discard (face down)": (discard("ALOA"), {0, FULL}),
    "draw from the deck": (draw(), {0, FULL}),
    "draw face up": (draw("ALOA"), {0, 1, SPECTATOR, FULL}),
    "pass": (PASS_ACTION, {0, 1, SPECTATOR, FULL}),
}


@pytest.mark.parametrize("name", sorted(SHOWN))
def test_each_audience_is_shown_exactly_what_r9_allows(name: str) -> None:
    action, allowed = SHOWN[name]
    event = Event(0, action, "ELAI" if action == draw() else None)
    for audience in AUDIENCES:
        assert shown(event, audience) is (audience in allowed), audience
        seen = seen_event(event, audience)
        if audience in allowed:
            assert (seen.card, seen.cards, seen.line, seen.drawn, seen.hidden) == (
                action.card, action.cards, action.line, event.drawn, False
            )  # fmt: skip
            assert event_text(seen.type, seen.card, seen.cards, seen.line) == action.text()
        else:
            assert (seen.card, seen.cards, seen.line, seen.drawn) == (None, None, None, None)
            assert seen.hidden and "ALOA" not in event_text(seen.type, None, None, None)
    public = public_event(event)
    assert (public.card, public.hidden) == (seen_event(event, SPECTATOR).card, not shown(
        event, SPECTATOR
    ))  # fmt: skip


def positions(seed: int, variant: Variant, every: int = 4) -> Iterator[State]:
    for step, (before, _action, _after) in enumerate(playout(seed, variant)):
        if step % every == 0 and not before.needs_reshuffle and not before.is_finished:
            yield before


def first_leak(audience: Audience, states: Iterator[State], rng: random.Random) -> str | None:
    """The first position whose table differs between worlds ``audience`` cannot tell apart."""
    blind = (0, 1) if audience in (SPECTATOR, FULL) else (audience,)
    for state in states:
        seen = table(position(state, audience))
        for seat in blind:
            assert isinstance(seat, int)
            for world in other_worlds(state, seat, rng, 3):
                if table(position(world, audience)) != seen:
                    return f"{audience!r}: seat {seat}'s worlds differ in the table"
    return None


@pytest.mark.parametrize("variant", VARIANTS, ids=["basic", "tactical", "both"])
@pytest.mark.parametrize("audience", [0, 1, SPECTATOR], ids=["seat0", "seat1", "spectator"])
def test_an_audiences_table_is_the_same_in_every_world_it_cannot_rule_out(
    variant: Variant, audience: Audience
) -> None:
    rng = random.Random(29)
    for seed in range(4):
        assert first_leak(audience, positions(seed, variant), rng) is None


def test_control_the_full_table_differs_between_worlds() -> None:
    rng = random.Random(29)
    assert first_leak(FULL, positions(1, Variant()), rng) is not None


@pytest.mark.parametrize("variant", VARIANTS, ids=["basic", "tactical", "both"])
def test_each_table_keeps_what_its_audience_is_shown_and_nothing_else(variant: Variant) -> None:
    for state in positions(3, variant, every=2):
        full = table(position(state, FULL))
        assert full == table(state)
        assert full.hands == state.hands and full.facedown_discards == state.facedown_discards
        for seat in (0, 1):
            mine = table(position(state, seat))
            assert mine == table(observe(state, seat))
            assert mine.hands[seat] == state.hands[seat] and mine.hands[1 - seat] is None
            assert mine.facedown_discards[1 - seat] is None
            assert (mine.hand_sizes, mine.facedown_counts) == (
                full.hand_sizes, full.facedown_counts
            )  # fmt: skip
        public = table(position(state, SPECTATOR))
        assert public == table(spectate(state))
        assert public.hands == (None, None) == public.facedown_discards
        assert _public_columns(public) == _public_columns(full)


def _public_columns(view: TableView) -> tuple[object, ...]:
    return (view.round, view.to_move, view.points, dict(view.bridges), dict(view.controlled),
            view.supply, view.faceup, view.deck_size, view.played_cards, view.final_turns,
            view.is_finished, view.outcome, view.hand_sizes, view.open_cards,
            view.facedown_counts)  # fmt: skip


def test_a_view_since_an_event_is_the_views_history_from_there() -> None:
    for state in positions(5, Variant(tactical=True), every=7):
        events = state.history
        for seat in (0, 1):
            whole = observe(state, seat)
            for start in {0, len(events) // 2, len(events)}:
                since = observe_since(state, seat, events[start:])
                assert since.history == whole.history[start:]
                assert dataclasses.replace(since, history=whole.history) == whole
                assert list(vars(since)) == [f.name for f in dataclasses.fields(Observation)]
                assert Observation(**vars(since)) == since


@pytest.mark.parametrize("audience", [2, -1, "public", None], ids=repr)
def test_an_unknown_audience_is_refused_by_name(audience: object) -> None:
    state = next(positions(1, Variant()))
    with pytest.raises(ValueError, match=r"seat must be 0 or 1|an audience is"):
        position(state, audience)  # type: ignore[arg-type]


@pytest.mark.parametrize("variant", VARIANTS, ids=["basic", "tactical", "both"])
@pytest.mark.parametrize("seed", [1, 8])
def test_a_seats_view_is_the_states_public_values_it_may_know(variant: Variant, seed: int) -> None:
    """``seat_view`` reads the engine's fields; each value is the public property's."""
    for before, _action, after in playout(seed, variant):
        for state in (before, after):
            for seat in (0, 1):
                view = dict(zip(OBSERVATION_FIELDS, seat_view(state, seat, ()), strict=True))
                other = 1 - seat
                assert view == {
                    "seat": seat, "variant": state.variant, "round": state.round,
                    "to_move": state.to_move, "points": state.points,
                    "bridges": state.bridges, "controlled": state.controlled,
                    "supply": state.supply, "hand": state.hands[seat],
                    "opponent_hand_size": state.hand_sizes[other],
                    "open_cards": state.open_cards, "faceup": state.faceup,
                    "deck_size": state.deck_size, "played_cards": state.played_cards,
                    "own_facedown_discards": state.facedown_discards[seat],
                    "opponent_facedown_count": len(state.facedown_discards[other]),
                    "final_turns": state.final_turns, "opponent_passed": state.opponent_passed,
                    "turn_played_card": state.turn_played_card,
                    "turn_discarded": state.turn_discarded, "history": (),
                    "is_finished": state.is_finished, "outcome": state.outcome,
                }  # fmt: skip
