"""What an audience may know of a game (docs/reference/RULES.md R9): one builder per audience.

Three audiences see a game: a seat (``0`` or ``1``: the bot playing it, a
replay from its side), the spectators (``SPECTATOR``: the live page, a public
replay) and the arena itself (``FULL``: the record, the admin's replay). One
rule (``shown``) says whose cards an action reveals to whom, and one builder
per audience reads the state:

- ``observe(state, seat)``: an ``Observation``; the opponent's hand is a size,
  its face-down discards a count, its deck draws "a card from the deck"
  (``observe_since``: only the actions not sent yet; ``seat_view``: the same
  values as a tuple, for the referee's encoder);
- ``spectate(state)``: a ``SpectatorView``, the columns both seats share;
- the state itself is the full view.

Hidden information is absent by type: an ``Observation`` has no place for the
opponent's hand, a ``SpectatorView`` none for any hand, so whatever renders
one (the protocol's messages, the web's frames, the SDK) cannot show them.
``table`` puts any audience's view in one shape, a column per seat with
``None`` where the audience is not shown it, for renderers of every audience.
``spectate``, ``table`` and their classes are defined in ``arena.kahuna.view_public``
and imported from there on their first use here (no bot needs them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Final, Literal

from arena.kahuna.actions import ActionType
from arena.kahuna.lazy import on_first_use
from arena.kahuna.state import Event, Outcome, State, Variant, cons_names, hand_info

SPECTATOR: Final = "spectator"
FULL: Final = "full"
Audience = int | Literal["spectator", "full"]
"""A seat (0 or 1), the spectators, or everything."""


def shown(event: Event, audience: Audience) -> bool:
    """Whether ``audience`` is shown the card ``event`` hides from its opponent: a
    face-down discard and a deck draw show their card only to their own seat."""
    if audience == FULL or audience == event.seat:
        return True
    action = event.action
    if action.type is ActionType.DISCARD:
        return False
    return not (action.type is ActionType.DRAW and action.card is None)


def event_text(
    type: ActionType, card: str | None, cards: tuple[str, str] | None, line: str | None
) -> str:
    """docs/reference/RECORD.md notation of an action as an audience saw it: what it was
    not shown is written in words, never guessed (``discard (face down)``, ``draw deck``)."""
    if type is ActionType.PLACE:
        return f"place {card} {line}"
    if type is ActionType.REMOVE:
        return f"remove {'+'.join(cards) if cards else '?'} {line}"
    if type is ActionType.DISCARD:
        return "discard (face down)" if card is None else f"discard {card}"
    if type is ActionType.DRAW:
        return "draw deck" if card is None else f"draw {card}"
    return "pass"


# ------------------------------------------------------------------ a seat


@dataclass(frozen=True)
class SeenEvent:
    """One action as the observer saw it (``hidden``: part of it was masked)."""

    seat: int
    type: ActionType
    card: str | None
    cards: tuple[str, str] | None
    line: str | None
    drawn: str | None
    hidden: bool


@dataclass(frozen=True)
class Observation:
    """What one seat may know: every action in ``history`` from ``observe``, only those
    not sent yet from ``observe_since`` (what the protocol sends a seat)."""

    seat: int
    variant: Variant
    round: int
    to_move: int | None
    points: tuple[int, int]
    bridges: Mapping[str, int]
    controlled: Mapping[str, int]
    supply: tuple[int, int]
    hand: tuple[str, ...]
    opponent_hand_size: int
    open_cards: tuple[tuple[str, ...], tuple[str, ...]]
    faceup: tuple[str | None, str | None, str | None]
    deck_size: int
    played_cards: tuple[str, ...]
    own_facedown_discards: tuple[str, ...]
    opponent_facedown_count: int
    final_turns: bool
    opponent_passed: bool
    turn_played_card: bool
    turn_discarded: bool
    history: tuple[SeenEvent, ...]
    is_finished: bool
    outcome: Outcome | None


_SEEN: dict[tuple[Audience, int, tuple[int, int, int, int], str | None], SeenEvent] = {}
"""Seen events by what decides them; bounded by the game (audiences, seats, actions,
islands): a few thousand at most."""


def seen_event(event: Event, observer: Audience) -> SeenEvent:
    """One event as ``observer`` saw it (``shown``); equal events give the same object."""
    action = event.action
    key = (observer, event.seat, action.code, event.drawn)
    seen = _SEEN.get(key)
    if seen is None:
        if shown(event, observer):
            seen = SeenEvent(
                event.seat, action.type, action.card, action.cards, action.line, event.drawn, False
            )
        else:
            seen = SeenEvent(event.seat, action.type, None, None, None, None, True)
        _SEEN[key] = seen
    return seen


def observe(state: State, seat: int, *, history: bool = True) -> Observation:
    """Everything ``seat`` may know of ``state`` (R9); ``history=False`` leaves the
    history empty (it costs a step per event), for callers that use only the present."""
    return observe_since(state, seat, state.history if history else ())


def observe_since(state: State, seat: int, new_events: Sequence[Event]) -> Observation:
    """``observe(state, seat)`` with only ``new_events`` in its history: the actions the
    seat has not been sent yet, kept by the caller so that a decision costs O(1) in the
    game's length (the state's history is a linked list)."""
    values = dict(zip(OBSERVATION_FIELDS, seat_view(state, seat, new_events), strict=True))
    observation = object.__new__(Observation)  # the frozen __init__ sets field by field
    object.__setattr__(observation, "__dict__", values)
    return observation


SeatView = tuple[
    int, Variant, int, int | None, tuple[int, int], Mapping[str, int], Mapping[str, int],
    tuple[int, int], tuple[str, ...], int, tuple[tuple[str, ...], tuple[str, ...]],
    tuple[str | None, str | None, str | None], int, tuple[str, ...], tuple[str, ...], int,
    bool, bool, bool, bool, tuple[SeenEvent, ...], bool, Outcome | None,
]  # fmt: skip
"""An ``Observation``'s values in field order (``OBSERVATION_FIELDS``)."""


def seat_view(state: State, seat: int, new_events: Sequence[Event]) -> SeatView:
    """What ``seat`` may know of ``state``: the one place a seat's view is read from the
    state. ``observe_since`` names the values; the referee's encoder
    (``arena.protocol.wire``) reads them as they are, without building the object.

    It runs once per decision in the referee, so it reads the state's fields as the
    engine keeps them (the public properties' values, without building the opponent's
    hand or face-down pile): tests/kahuna/test_view.py checks it against them."""
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 or 1, not {seat!r}")
    opponent = 1 - seat
    seen = _SEEN.get  # the memo first: one decision's few events are nearly always in it
    history = tuple(
        [seen((seat, e.seat, e.action.code, e.drawn)) or seen_event(e, seat) for e in new_events]
    )
    hands = state._hands
    facedown = state._facedown
    return (
        seat,
        state._variant,
        state._round,
        state.to_move,
        state._points,
        state.bridges,
        state.controlled,
        state.supply,
        hand_info(hands[seat]).names,
        hand_info(hands[opponent]).size,
        state.open_cards,
        state.faceup,
        len(state._deck) - state._dpos,
        cons_names(state._played),
        cons_names(facedown[seat]),
        len(cons_names(facedown[opponent])),
        state._final > 0,
        state._opp_passed,
        state._turn_played,
        state._turn_discarded,
        history,
        state._outcome is not None,
        state._outcome,
    )


OBSERVATION_FIELDS = tuple(field.name for field in fields(Observation))


if TYPE_CHECKING:
    from arena.kahuna.view_public import Pair as Pair
    from arena.kahuna.view_public import PublicEvent as PublicEvent
    from arena.kahuna.view_public import SpectatorView as SpectatorView
    from arena.kahuna.view_public import TableView as TableView
    from arena.kahuna.view_public import position as position
    from arena.kahuna.view_public import public_event as public_event
    from arena.kahuna.view_public import spectate as spectate
    from arena.kahuna.view_public import table as table

__getattr__, __dir__ = on_first_use(
    globals(),
    dict.fromkeys(
        ("Pair", "PublicEvent", "SpectatorView", "TableView", "position", "public_event",
         "spectate", "table"),
        "arena.kahuna.view_public",
    ),
)  # fmt: skip
