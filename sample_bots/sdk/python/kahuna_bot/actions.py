"""Actions in docs/RECORD.md text notation, and their protobuf form.

``Action`` is what ``choose`` receives in ``legal_actions`` and may return;
``str(action)`` is the canonical text (``place HUNA ELAI-HUNA``,
``remove ELAI+HUNA ELAI-HUNA``, ``discard HUNA``, ``draw deck``,
``draw HUNA``, ``pass``). ``parse_action`` reads the same text leniently.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kahuna_bot._gen import game_pb2
from kahuna_bot._memo import MessageMemo
from kahuna_bot.board import canonical_island, canonical_line


class ActionType(enum.StrEnum):
    PLACE = "place"
    REMOVE = "remove"
    DISCARD = "discard"
    DRAW = "draw"
    PASS = "pass"


_TYPE_TO_PROTO: dict[ActionType, int] = {
    ActionType.PLACE: game_pb2.ACTION_TYPE_PLACE,
    ActionType.REMOVE: game_pb2.ACTION_TYPE_REMOVE,
    ActionType.DISCARD: game_pb2.ACTION_TYPE_DISCARD,
    ActionType.DRAW: game_pb2.ACTION_TYPE_DRAW,
    ActionType.PASS: game_pb2.ACTION_TYPE_PASS,
}
_PROTO_TO_TYPE: dict[int, ActionType] = {code: kind for kind, code in _TYPE_TO_PROTO.items()}


@dataclass(frozen=True, slots=True)
class Action:
    """One action. ``card``: place, discard, face-up draw (None: deck draw);
    ``cards``: the two cards of a remove, sorted; ``line``: place, remove."""

    type: ActionType
    card: str | None = None
    cards: tuple[str, str] | None = None
    line: str | None = None

    def text(self) -> str:
        """Canonical docs/RECORD.md text notation."""
        if self.type is ActionType.PLACE:
            return f"place {self.card} {self.line}"
        if self.type is ActionType.REMOVE:
            first, second = self.cards or ("?", "?")
            return f"remove {first}+{second} {self.line}"
        if self.type is ActionType.DISCARD:
            return f"discard {self.card}"
        if self.type is ActionType.DRAW:
            return f"draw {self.card or 'deck'}"
        return "pass"

    def __str__(self) -> str:
        return self.text()

    @property
    def ends_turn(self) -> bool:
        """Draw and pass end the turn; place, remove and discard do not."""
        return self.type in (ActionType.DRAW, ActionType.PASS)


def place(card: str, line: str) -> Action:
    return Action(ActionType.PLACE, card=canonical_island(card), line=canonical_line(line))


def remove(card_a: str, card_b: str, line: str) -> Action:
    first, second = sorted((canonical_island(card_a), canonical_island(card_b)))
    return Action(ActionType.REMOVE, cards=(first, second), line=canonical_line(line))


def discard(card: str) -> Action:
    return Action(ActionType.DISCARD, card=canonical_island(card))


def draw(card: str | None = None) -> Action:
    return Action(ActionType.DRAW, card=None if card is None else canonical_island(card))


PASS = Action(ActionType.PASS)


def parse_action(text: str) -> Action:
    """Read docs/RECORD.md text notation in any letter case; ValueError naming the problem."""
    words = text.split()
    if not words:
        raise ValueError("an empty string is not an action")
    kind, args = words[0].lower(), words[1:]
    expected = {"place": 2, "remove": 2, "discard": 1, "draw": 1, "pass": 0}.get(kind)
    if expected is None:
        raise ValueError(f"unknown action {words[0]!r} in {text!r}")
    if len(args) != expected:
        raise ValueError(f"{kind} takes {expected} argument(s), got {len(args)} in {text!r}")
    if kind == "place":
        return place(args[0], args[1])
    if kind == "remove":
        cards = args[0].split("+")
        if len(cards) != 2:
            raise ValueError(f"remove names two cards joined by '+', not {args[0]!r}")
        return remove(cards[0], cards[1], args[1])
    if kind == "discard":
        return discard(args[0])
    if kind == "draw":
        return draw(None if args[0].lower() == "deck" else args[0])
    return PASS


def _read_action(message: game_pb2.Action) -> Action:
    kind = _PROTO_TO_TYPE.get(message.type)
    if kind is None:
        raise ValueError(f"unknown action type {message.type}")
    if kind is ActionType.PLACE:
        return place(message.card, message.line)
    if kind is ActionType.REMOVE:
        if len(message.cards) != 2:
            raise ValueError(f"remove needs two cards, got {len(message.cards)}")
        return remove(message.cards[0], message.cards[1], message.line)
    if kind is ActionType.DISCARD:
        return discard(message.card)
    if kind is ActionType.DRAW:
        return draw(message.card or None)
    return PASS


_ACTIONS_READ = MessageMemo(_read_action)


def action_from_proto(message: game_pb2.Action) -> Action:
    """The typed form of a protobuf Action; ValueError if it is not an action.

    Actions are immutable, so each distinct message is read once and its
    ``Action`` shared afterwards (keyed by the message's bytes): a request
    lists the same few dozen actions over and over.
    """
    return _ACTIONS_READ(message)


def action_to_proto(action: Action) -> game_pb2.Action:
    """The protobuf form of an action (empty strings stand for "none")."""
    return game_pb2.Action(
        type=_TYPE_TO_PROTO[action.type],  # type: ignore[arg-type]
        card=action.card or "",
        cards=list(action.cards or ()),
        line=action.line or "",
    )
