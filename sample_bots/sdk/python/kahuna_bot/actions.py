"""Actions in docs/reference/RECORD.md text notation, and their protobuf form.

``Action`` is what ``choose`` receives in ``legal_actions`` and may return;
``str(action)`` is the canonical text (``place HUNA ELAI-HUNA``,
``remove ELAI+HUNA ELAI-HUNA``, ``discard HUNA``, ``draw deck``,
``draw HUNA``, ``pass``). ``parse_action`` reads the same text leniently.
``Action`` and the text notation are the engine's (``arena.kahuna``, mounted
next to the SDK); this module adds the protobuf form.
"""

from __future__ import annotations

from arena.kahuna.actions import (
    PASS_ACTION,
    Action,
    ActionType,
    discard,
    draw,
    parse_action,
    place,
    remove,
)
from kahuna_bot._gen import game_pb2
from kahuna_bot._memo import MessageMemo

_TYPE_TO_PROTO: dict[ActionType, int] = {
    ActionType.PLACE: game_pb2.ACTION_TYPE_PLACE,
    ActionType.REMOVE: game_pb2.ACTION_TYPE_REMOVE,
    ActionType.DISCARD: game_pb2.ACTION_TYPE_DISCARD,
    ActionType.DRAW: game_pb2.ACTION_TYPE_DRAW,
    ActionType.PASS: game_pb2.ACTION_TYPE_PASS,
}
_PROTO_TO_TYPE: dict[int, ActionType] = {code: kind for kind, code in _TYPE_TO_PROTO.items()}

PASS = PASS_ACTION


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


__all__ = [
    "PASS",
    "Action",
    "ActionType",
    "action_from_proto",
    "action_to_proto",
    "discard",
    "draw",
    "parse_action",
    "place",
    "remove",
]
