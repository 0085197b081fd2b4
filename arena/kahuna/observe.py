"""What one seat may know (docs/reference/RULES.md R9), and nothing more.

An observation is built only from public parts of the state and the
observer's own private parts; the opponent's hand (beyond its size and, in
Tactical, its open cards), the draw pile's order and the opponent's
face-down discards never enter it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from arena.kahuna.actions import ActionType
from arena.kahuna.state import Event, Outcome, State, Variant


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


def seen_event(event: Event, observer: int) -> SeenEvent:
    """Mask what ``observer`` may not see of one event."""
    action = event.action
    own = event.seat == observer
    if action.type is ActionType.DISCARD and not own:
        return SeenEvent(event.seat, ActionType.DISCARD, None, None, None, None, True)
    if action.type is ActionType.DRAW and action.card is None and not own:
        return SeenEvent(event.seat, ActionType.DRAW, None, None, None, None, True)
    return SeenEvent(
        event.seat, action.type, action.card, action.cards, action.line, event.drawn, False
    )


def observe(state: State, seat: int, *, history: bool = True) -> Observation:
    """Everything ``seat`` may know of ``state`` (R9); ``history=False`` leaves the
    history empty (it costs a step per event), for callers that use only the present."""
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 or 1, not {seat!r}")
    opponent = 1 - seat
    facedown = state.facedown_discards
    return Observation(
        seat=seat,
        variant=state.variant,
        round=state.round,
        to_move=state.to_move,
        points=state.points,
        bridges=state.bridges,
        controlled=state.controlled,
        supply=state.supply,
        hand=state.hands[seat],
        opponent_hand_size=state.hand_sizes[opponent],
        open_cards=state.open_cards,
        faceup=state.faceup,
        deck_size=state.deck_size,
        played_cards=state.played_cards,
        own_facedown_discards=facedown[seat],
        opponent_facedown_count=len(facedown[opponent]),
        final_turns=state.final_turns,
        opponent_passed=state.opponent_passed,
        turn_played_card=state.turn_played_card,
        turn_discarded=state.turn_discarded,
        history=tuple(seen_event(event, seat) for event in state.history) if history else (),
        is_finished=state.is_finished,
        outcome=state.outcome,
    )


def _event_json(event: SeenEvent) -> dict[str, object]:
    obj: dict[str, object] = {"seat": event.seat, "type": event.type.value}
    if event.cards is not None:
        obj["cards"] = list(event.cards)
    if event.card is not None:
        obj["card"] = event.card
    if event.line is not None:
        obj["line"] = event.line
    if event.drawn is not None:
        obj["drawn"] = event.drawn
    if event.hidden:
        obj["hidden"] = True
    return obj


def outcome_to_json(outcome: Outcome | None) -> dict[str, object] | None:
    if outcome is None:
        return None
    return {
        "winner": outcome.winner,
        "reason": outcome.termination.value,
        "points": list(outcome.points),
    }


def observation_to_json(obs: Observation) -> dict[str, object]:
    """A JSON-ready dict of an observation (stable keys, sorted maps)."""
    return {
        "seat": obs.seat,
        "variant": {"strategic": obs.variant.strategic, "tactical": obs.variant.tactical},
        "round": obs.round,
        "to_move": obs.to_move,
        "points": list(obs.points),
        "bridges": dict(sorted(obs.bridges.items())),
        "controlled": dict(sorted(obs.controlled.items())),
        "supply": list(obs.supply),
        "hand": list(obs.hand),
        "opponent_hand_size": obs.opponent_hand_size,
        "open_cards": [list(cards) for cards in obs.open_cards],
        "faceup": list(obs.faceup),
        "deck_size": obs.deck_size,
        "played_cards": list(obs.played_cards),
        "own_facedown_discards": list(obs.own_facedown_discards),
        "opponent_facedown_count": obs.opponent_facedown_count,
        "final_turns": obs.final_turns,
        "opponent_passed": obs.opponent_passed,
        "turn_played_card": obs.turn_played_card,
        "turn_discarded": obs.turn_discarded,
        "history": [_event_json(event) for event in obs.history],
        "is_finished": obs.is_finished,
        "outcome": outcome_to_json(obs.outcome),
    }
