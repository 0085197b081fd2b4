"""A finished game's record as a sequence of frames for the replay viewer.

Frame 0 is the position before the first action; frame k the position after
action k. A frame is plain JSON in one shape for every perspective, so the
page has one renderer:

- perspective ``None`` ("everything"): the true state, both hands, every
  face-down discard, the card each deck draw gave;
- perspective ``0`` or ``1``: exactly what that seat was shown at that moment,
  computed with ``arena.kahuna.observe`` (the function the referee uses):
  the opponent's hand is a size, their face-down discards a count, their deck
  draws "a card from the deck";
- perspective ``"public"``: what both seats may know, computed with
  ``arena.kahuna.spectate`` (the live page's only view): both hands are sizes
  (with Tactical's open cards), both seats' face-down discards counts, every
  deck draw "a card from the deck".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from arena.kahuna import (
    ActionType,
    Event,
    MalformedRecordError,
    Observation,
    Record,
    SeenEvent,
    State,
    observe,
    replay_steps,
)
from arena.kahuna.spectate import PublicEvent, SpectatorView, public_event, spectate

Json = dict[str, object]

PUBLIC: Literal["public"] = "public"
Perspective = int | Literal["public"] | None
PERSPECTIVE_NAMES: Mapping[str, Perspective] = {"all": None, "0": 0, "1": 1, "public": PUBLIC}


class PerspectiveError(ValueError):
    """A perspective that is not ``all``, ``0`` or ``1``."""


def parse_perspective(text: str | None) -> Perspective:
    """``None``/``"all"`` -> everything; ``"0"``/``"1"`` -> that seat; ``"public"``."""
    if text is None or text == "":
        return None
    if text not in PERSPECTIVE_NAMES:
        raise PerspectiveError(f"perspective must be one of all, 0, 1, public (got {text!r})")
    return PERSPECTIVE_NAMES[text]


@dataclass(frozen=True)
class Frames:
    """Every frame of one replay, plus why it stopped early if it did."""

    frames: tuple[Json, ...]
    error: str | None  # a record the engine refuses part-way (should not happen for stored games)

    def to_json(self, perspective: Perspective) -> Json:
        return {
            "perspective": "all" if perspective is None else perspective,
            "frames": list(self.frames),
            "error": self.error,
        }


def game_frames(record: Record, perspective: Perspective) -> Frames:
    """Describe each position of ``record`` (``arena.kahuna.replay_steps``, as ``replay``)."""
    frames: list[Json] = []
    try:
        for step in replay_steps(record):
            state = step.state
            event = state.last_event
            note = None
            if step.round_began:
                note = (f"round {state.round} began: the discard pile was shuffled into a new"
                        " draw pile")  # fmt: skip
            frames.append(_frame(state, perspective, step.action + 1, event, note))
            if step.stopped is not None:
                index, error = step.stopped.index, step.stopped.error
                action = record.actions[index][1]
                return Frames(tuple(frames), f"action {index} {action.text()}: {error}")
    except MalformedRecordError as err:
        return Frames(tuple(frames), f"the record cannot be replayed: {err}")
    return Frames(tuple(frames), None)


def _frame(
    state: State,
    perspective: Perspective,
    step: int,
    event: Event | None,
    note: str | None,
) -> Json:
    if perspective is None:
        body = _true_frame(state)
        action = _true_action(event) if step else None
    elif perspective == PUBLIC:
        body = public_frame(spectate(state, history=False))
        action = public_action(public_event(event)) if step and event is not None else None
    else:
        observation = observe(state, perspective)
        body = _observed_frame(observation)
        seen = observation.history[-1] if step and observation.history else None
        action = _seen_action(seen, perspective) if seen is not None else None
    body.update({"step": step, "action": action, "note": note})
    return body


def _common(source: State | Observation) -> Json:
    outcome = source.outcome
    return {
        "round": source.round,
        "to_move": source.to_move,
        "points": list(source.points),
        "bridges": dict(source.bridges),
        "controlled": dict(source.controlled),
        "supply": list(source.supply),
        "faceup": list(source.faceup),
        "deck_size": source.deck_size,
        "played_cards": list(source.played_cards),
        "final_turns": source.final_turns,
        "finished": source.is_finished,
        "outcome": None
        if outcome is None
        else {
            "winner": outcome.winner,
            "reason": str(outcome.termination),
            "points": list(outcome.points),
        },
    }


def _true_frame(state: State) -> Json:
    body = _common(state)
    body.update(
        {
            "hands": [list(hand) for hand in state.hands],
            "hand_sizes": [len(hand) for hand in state.hands],
            "open_cards": [list(cards) for cards in state.open_cards],
            "facedown_discards": [list(cards) for cards in state.facedown_discards],
            "facedown_counts": [len(cards) for cards in state.facedown_discards],
        }
    )
    return body


def _observed_frame(obs: Observation) -> Json:
    seat = obs.seat
    other = 1 - seat
    hands: list[list[str] | None] = [None, None]
    hands[seat] = list(obs.hand)
    sizes = [0, 0]
    sizes[seat] = len(obs.hand)
    sizes[other] = obs.opponent_hand_size
    facedown: list[list[str] | None] = [None, None]
    facedown[seat] = list(obs.own_facedown_discards)
    counts = [0, 0]
    counts[seat] = len(obs.own_facedown_discards)
    counts[other] = obs.opponent_facedown_count
    body = _common(obs)
    body.update(
        {
            "hands": hands,
            "hand_sizes": sizes,
            "open_cards": [list(cards) for cards in obs.open_cards],
            "facedown_discards": facedown,
            "facedown_counts": counts,
        }
    )
    return body


def public_frame(view: SpectatorView) -> Json:
    """A frame of what both seats may know: built from a ``SpectatorView`` alone."""
    return {
        "round": view.round,
        "to_move": view.to_move,
        "points": list(view.points),
        "bridges": dict(view.bridges),
        "controlled": dict(view.controlled),
        "supply": list(view.supply),
        "faceup": list(view.faceup),
        "deck_size": view.deck_size,
        "played_cards": list(view.played_cards),
        "final_turns": view.final_turns,
        "finished": view.is_finished,
        "outcome": None
        if view.outcome is None
        else {
            "winner": view.outcome.winner,
            "reason": str(view.outcome.termination),
            "points": list(view.outcome.points),
        },
        "hands": [None, None],
        "hand_sizes": list(view.hand_sizes),
        "open_cards": [list(cards) for cards in view.open_cards],
        "facedown_discards": [None, None],
        "facedown_counts": list(view.facedown_counts),
    }


def public_action(event: PublicEvent) -> Json:
    return {
        "seat": event.seat,
        "text": event.text(),
        "line": event.line,
        "drawn": None,
        "hidden": event.hidden,
    }


def _true_action(event: Event | None) -> Json | None:
    if event is None:
        return None
    return {
        "seat": event.seat,
        "text": event.action.text(),
        "line": event.action.line,
        "drawn": event.drawn,
        "hidden": False,
    }


def _seen_action(seen: SeenEvent, observer: int) -> Json:
    return {
        "seat": seen.seat,
        "text": seen_text(seen),
        "line": seen.line,
        "drawn": seen.drawn if seen.seat == observer else None,
        "hidden": seen.hidden,
    }


def seen_text(seen: SeenEvent) -> str:
    """docs/reference/RECORD.md notation for an action as an observer saw it.

    What the observer was not shown is written in words, never guessed:
    an opponent's face-down discard is ``discard (face down)`` and a deck
    draw is ``draw deck``.
    """
    if seen.type is ActionType.PLACE:
        return f"place {seen.card} {seen.line}"
    if seen.type is ActionType.REMOVE:
        cards = "+".join(seen.cards) if seen.cards else "?"
        return f"remove {cards} {seen.line}"
    if seen.type is ActionType.DISCARD:
        return "discard (face down)" if seen.card is None else f"discard {seen.card}"
    if seen.type is ActionType.DRAW:
        return "draw deck" if seen.card is None else f"draw {seen.card}"
    return "pass"
