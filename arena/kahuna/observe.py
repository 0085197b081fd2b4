"""What one seat may know (docs/reference/RULES.md R9), and nothing more, and its JSON.

An observation is built (``arena.kahuna.view``) only from public parts of the
state and the observer's own private parts; the opponent's hand (beyond its
size and, in Tactical, its open cards), the draw pile's order and the
opponent's face-down discards never enter it.
"""

from __future__ import annotations

from arena.kahuna.state import Outcome
from arena.kahuna.view import Observation, SeenEvent, observe, observe_since, seen_event

__all__ = [
    "Observation",
    "SeenEvent",
    "observation_to_json",
    "observe",
    "observe_since",
    "outcome_to_json",
    "seen_event",
]


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
