"""The spectators' view and the one shape of every audience's view (``arena.kahuna.view``).

``spectate`` and ``table`` (with ``PublicEvent``, ``SpectatorView``, ``TableView`` and
``position``) are the live page's, the replays' and the web's: no bot needs them, so
they live here, imported on first use of their names from ``arena.kahuna.view``
(a sandboxed Python bot imports the engine at every launch, and creating these
classes is a good part of what that import costs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from arena.kahuna.actions import ActionType
from arena.kahuna.state import Event, Outcome, State, Variant
from arena.kahuna.view import (
    FULL,
    SPECTATOR,
    Audience,
    Observation,
    event_text,
    observe_since,
    seen_event,
)

# -------------------------------------------------------------- spectators


@dataclass(frozen=True, slots=True)
class PublicEvent:
    """One action as everyone saw it; ``hidden``: its card was not shown (a face-down
    discard, a deck draw), so ``card`` is None."""

    seat: int
    type: ActionType
    card: str | None
    cards: tuple[str, str] | None
    line: str | None
    hidden: bool

    def text(self) -> str:
        """docs/reference/RECORD.md notation, with what nobody was shown written in words."""
        return event_text(self.type, self.card, self.cards, self.line)


@dataclass(frozen=True, slots=True)
class SpectatorView:
    variant: Variant
    round: int
    to_move: int | None
    points: tuple[int, int]
    bridges: Mapping[str, int]
    controlled: Mapping[str, int]
    supply: tuple[int, int]
    hand_sizes: tuple[int, int]
    open_cards: tuple[tuple[str, ...], tuple[str, ...]]  # Tactical: drawn face up, still held
    faceup: tuple[str | None, str | None, str | None]
    deck_size: int
    played_cards: tuple[str, ...]
    facedown_counts: tuple[int, int]
    final_turns: bool
    last_turn_passed: bool
    history: tuple[PublicEvent, ...]
    is_finished: bool
    outcome: Outcome | None


def public_event(event: Event) -> PublicEvent:
    """One event as the spectators saw it (``shown``)."""
    seen = seen_event(event, SPECTATOR)
    return PublicEvent(seen.seat, seen.type, seen.card, seen.cards, seen.line, seen.hidden)


def spectate(state: State, *, history: bool = True) -> SpectatorView:
    """Everything both seats may know of ``state`` (R9's shared columns); ``history=False``
    leaves the list of actions out (empty), for a caller that shows only the last one."""
    facedown = state.facedown_discards
    return SpectatorView(
        variant=state.variant,
        round=state.round,
        to_move=state.to_move,
        points=state.points,
        bridges=state.bridges,
        controlled=state.controlled,
        supply=state.supply,
        hand_sizes=state.hand_sizes,
        open_cards=state.open_cards,
        faceup=state.faceup,
        deck_size=state.deck_size,
        played_cards=state.played_cards,
        facedown_counts=(len(facedown[0]), len(facedown[1])),
        final_turns=state.final_turns,
        last_turn_passed=state.opponent_passed,
        history=tuple(public_event(event) for event in state.history) if history else (),
        is_finished=state.is_finished,
        outcome=state.outcome,
    )


# --------------------------------------------------------- every audience

Pair = tuple[tuple[str, ...] | None, tuple[str, ...] | None]


@dataclass(frozen=True, slots=True)
class TableView:
    """Any audience's view in one shape: a column per seat, ``None`` where the audience
    is not shown it (a hand, the face-down discards), sizes and counts always."""

    round: int
    to_move: int | None
    points: tuple[int, int]
    bridges: Mapping[str, int]
    controlled: Mapping[str, int]
    supply: tuple[int, int]
    faceup: tuple[str | None, str | None, str | None]
    deck_size: int
    played_cards: tuple[str, ...]
    final_turns: bool
    is_finished: bool
    outcome: Outcome | None
    hands: Pair
    hand_sizes: tuple[int, int]
    open_cards: tuple[tuple[str, ...], tuple[str, ...]]
    facedown_discards: Pair
    facedown_counts: tuple[int, int]


def _by_seat(seat: int, own: tuple[str, ...]) -> Pair:
    return (own, None) if seat == 0 else (None, own)


def table(view: State | Observation | SpectatorView) -> TableView:
    """``view`` (the full state, a seat's or the spectators') as a ``TableView``: built
    from the audience's view alone, so it holds nothing that view does not."""
    if isinstance(view, State):
        hands: Pair = view.hands
        facedown: Pair = view.facedown_discards
        hand_sizes = view.hand_sizes
        counts = (len(view.facedown_discards[0]), len(view.facedown_discards[1]))
    elif isinstance(view, Observation):
        hands = _by_seat(view.seat, view.hand)
        facedown = _by_seat(view.seat, view.own_facedown_discards)
        own = (len(view.hand), len(view.own_facedown_discards))
        other = (view.opponent_hand_size, view.opponent_facedown_count)
        mine, theirs = (own, other) if view.seat == 0 else (other, own)
        hand_sizes, counts = (mine[0], theirs[0]), (mine[1], theirs[1])
    else:
        hands = facedown = (None, None)
        hand_sizes, counts = view.hand_sizes, view.facedown_counts
    return TableView(
        round=view.round,
        to_move=view.to_move,
        points=view.points,
        bridges=view.bridges,
        controlled=view.controlled,
        supply=view.supply,
        faceup=view.faceup,
        deck_size=view.deck_size,
        played_cards=view.played_cards,
        final_turns=view.final_turns,
        is_finished=view.is_finished,
        outcome=view.outcome,
        hands=hands,
        hand_sizes=hand_sizes,
        open_cards=view.open_cards,
        facedown_discards=facedown,
        facedown_counts=counts,
    )


def position(state: State, audience: Audience) -> State | Observation | SpectatorView:
    """``audience``'s view of where ``state`` stands, its history left out (a viewer
    that shows one position at a time reads the last action with ``seen_event``):
    ``FULL`` the state itself, ``SPECTATOR`` a ``SpectatorView``, a seat an ``Observation``."""
    if audience == FULL:
        return state
    if audience == SPECTATOR:
        return spectate(state, history=False)
    if isinstance(audience, int):
        return observe_since(state, audience, ())
    raise ValueError(f"an audience is a seat (0 or 1), {SPECTATOR!r} or {FULL!r}, not {audience!r}")
