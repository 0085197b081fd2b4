"""What anyone may know of a game in play: the columns both seats share
(docs/reference/RULES.md R9).

A spectator sees the intersection of the two seats' observations and
nothing else: the board, the face-up row, the size of the draw pile, the
played cards, how many cards each seat has discarded face down and holds,
the Tactical open cards, the score, the round and whose turn it is, and
every action with each face-down discard as "a discard" and each deck draw
as "a card from the deck". Neither hand, no face-down card, no card a deck
draw gave and not the pile's order enter a ``SpectatorView``: its types have
no place for them (as ``arena.kahuna.observe`` has none for the opponent's
hand), so a public page built from one cannot show them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from arena.kahuna.actions import ActionType
from arena.kahuna.observe import outcome_to_json
from arena.kahuna.state import Event, Outcome, State, Variant


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
        if self.type is ActionType.PLACE:
            return f"place {self.card} {self.line}"
        if self.type is ActionType.REMOVE:
            cards = "+".join(self.cards) if self.cards else "?"
            return f"remove {cards} {self.line}"
        if self.type is ActionType.DISCARD:
            return "discard (face down)"
        if self.type is ActionType.DRAW:
            return "draw deck" if self.card is None else f"draw {self.card}"
        return "pass"


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
    """Mask what neither seat's opponent may see of one event."""
    action = event.action
    if action.type is ActionType.DISCARD:
        return PublicEvent(event.seat, ActionType.DISCARD, None, None, None, True)
    if action.type is ActionType.DRAW and action.card is None:
        return PublicEvent(event.seat, ActionType.DRAW, None, None, None, True)
    return PublicEvent(event.seat, action.type, action.card, action.cards, action.line, False)


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


def public_event_json(event: PublicEvent) -> dict[str, object]:
    obj: dict[str, object] = {"seat": event.seat, "type": event.type.value}
    if event.cards is not None:
        obj["cards"] = list(event.cards)
    if event.card is not None:
        obj["card"] = event.card
    if event.line is not None:
        obj["line"] = event.line
    if event.hidden:
        obj["hidden"] = True
    return obj


def spectator_to_json(view: SpectatorView) -> dict[str, object]:
    """A JSON-ready dict of a spectator view (stable keys, sorted maps)."""
    return {
        "variant": {"strategic": view.variant.strategic, "tactical": view.variant.tactical},
        "round": view.round,
        "to_move": view.to_move,
        "points": list(view.points),
        "bridges": dict(sorted(view.bridges.items())),
        "controlled": dict(sorted(view.controlled.items())),
        "supply": list(view.supply),
        "hand_sizes": list(view.hand_sizes),
        "open_cards": [list(cards) for cards in view.open_cards],
        "faceup": list(view.faceup),
        "deck_size": view.deck_size,
        "played_cards": list(view.played_cards),
        "facedown_counts": list(view.facedown_counts),
        "final_turns": view.final_turns,
        "last_turn_passed": view.last_turn_passed,
        "history": [public_event_json(event) for event in view.history],
        "is_finished": view.is_finished,
        "outcome": outcome_to_json(view.outcome),
    }
