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
hand), so a public page built from one cannot show them. The view is built by
``arena.kahuna.view``; this is its JSON.
"""

from __future__ import annotations

from arena.kahuna.observe import outcome_to_json
from arena.kahuna.view import PublicEvent, SpectatorView, public_event, spectate

__all__ = [
    "PublicEvent",
    "SpectatorView",
    "public_event",
    "public_event_json",
    "spectate",
    "spectator_to_json",
]


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
