"""A finished game's record as a sequence of frames for the replay viewer.

Frame 0 is the position before the first action; frame k the position after
action k. A frame is plain JSON in one shape for every perspective, so the
page has one renderer:

- perspective ``None`` ("everything"): the true state, both hands, every
  face-down discard, the card each deck draw gave;
- perspective ``0`` or ``1``: exactly what that seat was shown at that moment,
  the seat's view of ``arena.kahuna.view`` (the one the referee sends): the
  opponent's hand is a size, their face-down discards a count, their deck
  draws "a card from the deck";
- perspective ``"public"``: what both seats may know, the spectators' view of
  ``arena.kahuna.view`` (the live page's only view): both hands are sizes
  (with Tactical's open cards), both seats' face-down discards counts, every
  deck draw "a card from the deck".

Each frame is that audience's view put in one shape (``arena.kahuna.view.table``)
and written out by one function.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from arena.kahuna import Event, MalformedRecordError, Record, State, replay_steps
from arena.kahuna.view import (
    FULL,
    SPECTATOR,
    Audience,
    Observation,
    PublicEvent,
    SeenEvent,
    SpectatorView,
    TableView,
    event_text,
    position,
    seen_event,
    table,
)

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
    audience = perspective if isinstance(perspective, int) else _AUDIENCES[perspective]
    body = _table_frame(table(position(state, audience)))
    seen = seen_event(event, audience) if step and event is not None else None
    body.update({"step": step, "action": None if seen is None else _action(seen), "note": note})
    return body


_AUDIENCES: Mapping[Literal["public"] | None, Audience] = {None: FULL, PUBLIC: SPECTATOR}


def _table_frame(view: TableView) -> Json:
    """The one frame shape, whatever the audience: ``None`` where it is not shown."""
    outcome = view.outcome
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
        if outcome is None
        else {
            "winner": outcome.winner,
            "reason": str(outcome.termination),
            "points": list(outcome.points),
        },
        "hands": [None if hand is None else list(hand) for hand in view.hands],
        "hand_sizes": list(view.hand_sizes),
        "open_cards": [list(cards) for cards in view.open_cards],
        "facedown_discards": [
            None if cards is None else list(cards) for cards in view.facedown_discards
        ],
        "facedown_counts": list(view.facedown_counts),
    }


def _true_frame(state: State) -> Json:
    return _table_frame(table(state))


def _observed_frame(obs: Observation) -> Json:
    return _table_frame(table(obs))


def public_frame(view: SpectatorView) -> Json:
    """A frame of what both seats may know: built from a ``SpectatorView`` alone."""
    return _table_frame(table(view))


def _action(seen: SeenEvent) -> Json:
    return {
        "seat": seen.seat,
        "text": seen_text(seen),
        "line": seen.line,
        "drawn": seen.drawn,
        "hidden": seen.hidden,
    }


def public_action(event: PublicEvent) -> Json:
    return {
        "seat": event.seat,
        "text": event.text(),
        "line": event.line,
        "drawn": None,
        "hidden": event.hidden,
    }


def seen_text(seen: SeenEvent) -> str:
    """docs/reference/RECORD.md notation for an action as an observer saw it.

    What the observer was not shown is written in words, never guessed:
    an opponent's face-down discard is ``discard (face down)`` and a deck
    draw is ``draw deck``.
    """
    return event_text(seen.type, seen.card, seen.cards, seen.line)
