"""Hand-assembled ``PlayResponse`` frames for the hot path (one per decision).

Protobuf's wire format is a concatenation of fields, so an ActionRequest can
be assembled from bytes that are cached (each legal action is serialised
once per process) instead of building message objects per decision. The
result parses to exactly the message the generated API would build; the
protocol tests check that.
"""

from __future__ import annotations

from collections.abc import Iterable

from arena.kahuna import Action
from arena.protocol.convert import action_to_pb

_WIRE_VARINT = 0
_WIRE_LEN = 2
# Field numbers (proto/kahuna/v1/referee.proto).
_PLAY_RESPONSE_ACTION_REQUEST = 3
_REQUEST_ID, _GAME_INDEX, _OBSERVATION, _LEGAL_ACTIONS, _DEADLINE_MS, _BANK_MS = 1, 2, 3, 4, 5, 6

_ACTION_BYTES: dict[Action, bytes] = {}
_LEGAL_FIELD: dict[Action, bytes] = {}
_TEXT: dict[Action, str] = {}


def varint(value: int) -> bytes:
    if value < 0:
        raise ValueError("varints here are unsigned")
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _tag(field_number: int, wire_type: int) -> bytes:
    return varint((field_number << 3) | wire_type)


def len_field(field_number: int, payload: bytes) -> bytes:
    return _tag(field_number, _WIRE_LEN) + varint(len(payload)) + payload


def varint_field(field_number: int, value: int) -> bytes:
    """A varint field; proto3 leaves zero values out."""
    return _tag(field_number, _WIRE_VARINT) + varint(value) if value else b""


def action_bytes(action: Action) -> bytes:
    """The serialised ``kahuna.v1.Action`` (cached: actions are few and immutable)."""
    raw = _ACTION_BYTES.get(action)
    if raw is None:
        raw = _ACTION_BYTES[action] = action_to_pb(action).SerializeToString()
    return raw


def legal_action_field(action: Action) -> bytes:
    """``ActionRequest.legal_actions`` field bytes for one action (cached)."""
    field = _LEGAL_FIELD.get(action)
    if field is None:
        field = _LEGAL_FIELD[action] = len_field(_LEGAL_ACTIONS, action_bytes(action))
    return field


def sort_by_text(actions: Iterable[Action]) -> list[Action]:
    """Actions sorted by text notation (texts cached)."""
    def text(action: Action) -> str:
        value = _TEXT.get(action)
        if value is None:
            value = _TEXT[action] = action.text()
        return value

    return sorted(actions, key=text)


def action_request_frame(
    *,
    request_id: int,
    game_index: int,
    observation: bytes,
    legal: Iterable[Action],
    action_deadline_ms: int,
    time_bank_ms: int,
) -> bytes:
    """A serialised ``PlayResponse{action_request}``."""
    request = b"".join(
        (
            varint_field(_REQUEST_ID, request_id),
            varint_field(_GAME_INDEX, game_index),
            len_field(_OBSERVATION, observation),
            *(legal_action_field(action) for action in legal),
            varint_field(_DEADLINE_MS, action_deadline_ms),
            varint_field(_BANK_MS, time_bank_ms),
        )
    )
    return len_field(_PLAY_RESPONSE_ACTION_REQUEST, request)
