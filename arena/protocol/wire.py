"""Hand-assembled ``PlayResponse`` frames for the hot path (one per decision).

Protobuf's wire format is a concatenation of fields, so an ActionRequest can
be assembled from bytes that are cached (each legal action is serialised
once per process) instead of building message objects per decision. The
result parses to exactly the message the generated API would build; the
protocol tests check that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from arena.kahuna import ISLANDS, LINES, Action, Event, State
from arena.kahuna.view import SeenEvent, seat_view
from arena.protocol.convert import action_to_pb, event_to_pb, outcome_to_pb

_WIRE_VARINT = 0
_WIRE_LEN = 2
# Field numbers (proto/kahuna/v1/referee.proto).
_PLAY_RESPONSE_ACTION_REQUEST = 3
_REQUEST_ID, _GAME_INDEX, _OBSERVATION, _LEGAL_ACTIONS, _DEADLINE_MS, _BANK_MS = 1, 2, 3, 4, 5, 6

# Caches keyed by ``Action.code``, the engine's canonical 4-int identity of an
# action: hashing it is far cheaper than hashing the dataclass.
_ACTION_BYTES: dict[tuple[int, int, int, int], bytes] = {}
_LEGAL_FIELD: dict[tuple[int, int, int, int], bytes] = {}


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL_VARINTS = tuple(_encode_varint(value) for value in range(1 << 14))


def varint(value: int) -> bytes:
    if value < 0:
        raise ValueError("varints here are unsigned")
    if value < 1 << 14:
        return _SMALL_VARINTS[value]
    return _encode_varint(value)


def _tag(field_number: int, wire_type: int) -> bytes:
    return _SMALL_VARINTS[(field_number << 3) | wire_type]


def len_field(field_number: int, payload: bytes) -> bytes:
    size = len(payload)
    size_bytes = _SMALL_VARINTS[size] if size < 1 << 14 else _encode_varint(size)
    return _SMALL_VARINTS[(field_number << 3) | _WIRE_LEN] + size_bytes + payload


def varint_field(field_number: int, value: int) -> bytes:
    """A varint field; proto3 leaves zero values out."""
    return _tag(field_number, _WIRE_VARINT) + varint(value) if value else b""


def action_bytes(action: Action) -> bytes:
    """The serialised ``kahuna.v1.Action`` (cached: actions are few and immutable)."""
    raw = _ACTION_BYTES.get(action.code)
    if raw is None:
        raw = _ACTION_BYTES[action.code] = action_to_pb(action).SerializeToString()
    return raw


def legal_action_field(action: Action) -> bytes:
    """``ActionRequest.legal_actions`` field bytes for one action (cached)."""
    field = _LEGAL_FIELD.get(action.code)
    if field is None:
        field = _LEGAL_FIELD[action.code] = len_field(_LEGAL_ACTIONS, action_bytes(action))
    return field


def action_request_frame(
    *,
    request_id: int,
    game_index: int,
    observation: bytes,
    legal: Iterable[Action] | LegalActions,
    action_deadline_ms: int,
    time_bank_ms: int,
) -> bytes:
    """A serialised ``PlayResponse{action_request}`` (``legal`` in the order given)."""
    fields = legal.fields if isinstance(legal, LegalActions) else legal_fields(legal)
    request = b"".join(
        (
            _REQUEST_ID_TAG + varint(request_id) if request_id else b"",
            _GAME_INDEX_TAG + varint(game_index) if game_index else b"",
            len_field(_OBSERVATION, observation),
            fields,
            _DEADLINE_MS_TAG + varint(action_deadline_ms) if action_deadline_ms else b"",
            _BANK_MS_TAG + varint(time_bank_ms) if time_bank_ms else b"",
        )
    )
    return len_field(_PLAY_RESPONSE_ACTION_REQUEST, request)


_REQUEST_ID_TAG, _GAME_INDEX_TAG, _DEADLINE_MS_TAG, _BANK_MS_TAG = (
    _tag(field, _WIRE_VARINT) for field in (_REQUEST_ID, _GAME_INDEX, _DEADLINE_MS, _BANK_MS)
)


def legal_fields(actions: Iterable[Action]) -> bytes:
    """The ``ActionRequest.legal_actions`` fields of ``actions``, in that order."""
    return b"".join(legal_action_field(action) for action in actions)


_Piece = tuple[str, bytes, bytes, Action]
"""What a request needs of one action: (text, legal_actions field, serialised, action)."""
_PIECES: dict[tuple[int, int, int, int], _Piece] = {}
"""Pieces by ``Action.code``: bounded by the game's actions (a few hundred)."""


def _piece(action: Action) -> _Piece:
    found = _PIECES[action.code] = (
        action.text(),
        legal_action_field(action),
        action_bytes(action),
        action,
    )
    return found


class LegalActions:
    """A position's legal actions as a request carries them: sorted by text, their
    ``legal_actions`` field bytes, and each action keyed by its serialised form (so a
    reply that echoes one is found at once).

    Built per decision: the sets recur too rarely for a cache of them to pay (one
    lookup of the cached pieces per action, one sort of a few tuples by their text)."""

    __slots__ = ("by_bytes", "fields", "sorted")

    def __init__(self, actions: Iterable[Action]) -> None:
        get = _PIECES.get
        # Texts differ between actions, so the tuples sort by text alone.
        pieces = sorted([get(action.code) or _piece(action) for action in actions])
        self.sorted = tuple([piece[3] for piece in pieces])
        self.fields = b"".join([piece[1] for piece in pieces])
        self.by_bytes: Mapping[bytes, Action] = {piece[2]: piece[3] for piece in pieces}


def legal_set(actions: Sequence[Action]) -> LegalActions:
    """``LegalActions`` of ``actions``."""
    return LegalActions(actions)


# ---------------------------------------------------------------- replies

# kahuna.v1.PlayRequest.action_reply and kahuna.v1.ActionReply fields (referee.proto).
_PLAY_REQUEST_ACTION_REPLY = 2
_REPLY_REQUEST_ID, _REPLY_ACTION = 1, 2
_REPLY_TAG = (_PLAY_REQUEST_ACTION_REPLY << 3) | _WIRE_LEN
_REPLY_ACTION_TAG = (_REPLY_ACTION << 3) | _WIRE_LEN
_REPLY_ID_TAG = _SMALL_VARINTS[(_REPLY_REQUEST_ID << 3) | _WIRE_VARINT]
_ONE_BYTE_LENGTH = 0x80


def echoed_action(raw: bytes, request_id: int) -> bytes | None:
    """The serialised ``Action`` of ``raw`` when ``raw`` is exactly how protobuf encodes
    ``PlayRequest{action_reply{request_id, action}}`` for this ``request_id`` (fields in
    order, nothing else); None for any other bytes, which only the full parse may judge.

    The bytes returned are then the action's own canonical encoding whenever they are
    one of ours: parsing ``raw`` and re-serialising its action would give them back.
    """
    id_field = _REPLY_ID_TAG + varint(request_id) if request_id else b""
    start = 4 + len(id_field)
    size = len(raw)
    if (
        size < start
        or size - 2 >= _ONE_BYTE_LENGTH
        or raw[0] != _REPLY_TAG
        or raw[1] != size - 2
        or not raw.startswith(id_field, 2)
        or raw[start - 2] != _REPLY_ACTION_TAG
        or raw[start - 1] != size - start
    ):
        return None
    return raw[start:]


# ---------------------------------------------------------------- observations

# kahuna.v1.Observation field numbers (proto/kahuna/v1/game.proto).
_OBS_SEAT, _OBS_VARIANT, _OBS_ROUND, _OBS_TO_MOVE, _OBS_POINTS = 1, 2, 3, 4, 5
_OBS_BRIDGES, _OBS_CONTROLLED, _OBS_SUPPLY, _OBS_HAND, _OBS_OPP_HAND = 6, 7, 8, 9, 10
_OBS_OPEN, _OBS_FACEUP, _OBS_DECK, _OBS_PLAYED, _OBS_OWN_FACEDOWN = 11, 12, 13, 14, 15
_OBS_OPP_FACEDOWN, _OBS_FINAL, _OBS_OPP_PASSED, _OBS_PLAYED_CARD = 16, 17, 18, 19
_OBS_DISCARDED, _OBS_HISTORY_START, _OBS_HISTORY, _OBS_FINISHED, _OBS_OUTCOME = 20, 21, 22, 23, 24
_CARD_LIST_CARDS = 1

_STRING_FIELD: dict[tuple[int, str], bytes] = {}
_OWNER_FIELD: dict[tuple[int, str, int], bytes] = {}


def string_field(field_number: int, text: str) -> bytes:
    """A string field, also when empty (for elements of repeated fields; cached)."""
    key = (field_number, text)
    field = _STRING_FIELD.get(key)
    if field is None:
        field = _STRING_FIELD[key] = len_field(field_number, text.encode())
    return field


def _owner_field(field_number: int, name: str, seat: int) -> bytes:
    """A LineOwner / IslandOwner element (name is field 1, seat field 2; cached)."""
    key = (field_number, name, seat)
    field = _OWNER_FIELD.get(key)
    if field is None:
        payload = string_field(1, name) + varint_field(2, seat)
        field = _OWNER_FIELD[key] = len_field(field_number, payload)
    return field


def _packed(field_number: int, values: Iterable[int]) -> bytes:
    payload = b"".join(varint(value) for value in values)
    return len_field(field_number, payload) if payload else b""


def _bool_field(field_number: int, value: bool) -> bytes:
    return _tag(field_number, _WIRE_VARINT) + b"\x01" if value else b""


_CACHE_MAX_ENTRIES = 100_000
"""Bound of each encoding cache below (cleared when full: entries are cheap to rebuild)."""


class _Strings(dict[tuple[str | None, ...], bytes]):
    """Repeated string field ``field_number`` of a tuple of names (None as ""), by the
    tuple: hands, rows and piles repeat within and across games. A pile grows by a card
    at its end, so a tuple whose tuple less its last name is known costs one field."""

    def __init__(self, field_number: int) -> None:
        super().__init__()
        self.field_number = field_number

    def __missing__(self, texts: tuple[str | None, ...]) -> bytes:
        below = self.get(texts[:-1]) if texts else None
        if below is not None:
            encoded = below + string_field(self.field_number, texts[-1] or "")
        else:
            encoded = b"".join([string_field(self.field_number, text or "") for text in texts])
        if len(self) >= _CACHE_MAX_ENTRIES:
            self.clear()
        self[texts] = encoded
        return encoded


class _OpenCards(dict[tuple[tuple[str, ...], ...], bytes]):
    """``Observation.open_cards`` (one ``CardList`` per seat), by the pair of rows."""

    def __missing__(self, rows: tuple[tuple[str, ...], ...]) -> bytes:
        if len(self) >= _CACHE_MAX_ENTRIES:
            self.clear()
        encoded = self[rows] = b"".join(
            [len_field(_OBS_OPEN, _CARDS[cards]) for cards in rows]
        )
        return encoded


class _Points(dict[tuple[int, ...], bytes]):
    def __missing__(self, points: tuple[int, ...]) -> bytes:
        if len(self) >= _CACHE_MAX_ENTRIES:
            self.clear()
        encoded = self[points] = _packed(_OBS_POINTS, points)
        return encoded


_Head = tuple[int, bool, bool, int, int | None]


class _Heads(dict[_Head, bytes]):
    """Fields 1 to 4 (seat, variant, round, to_move), by their values."""

    def __missing__(self, key: _Head) -> bytes:
        seat, strategic, tactical, round_, to_move = key
        parts = [
            varint_field(_OBS_SEAT, seat),
            _VARIANT_FIELD[(strategic, tactical)],
            varint_field(_OBS_ROUND, round_),
        ]
        if to_move is not None:
            parts.append(_tag(_OBS_TO_MOVE, _WIRE_VARINT) + varint(to_move))
        if len(self) >= _CACHE_MAX_ENTRIES:
            self.clear()
        encoded = self[key] = b"".join(parts)
        return encoded


_CARDS = _Strings(_CARD_LIST_CARDS)
_HAND, _FACEUP = _Strings(_OBS_HAND), _Strings(_OBS_FACEUP)
_PLAYED, _OWN_FACEDOWN = _Strings(_OBS_PLAYED), _Strings(_OBS_OWN_FACEDOWN)
_OPEN = _OpenCards()
_POINTS = _Points()
_HEADS = _Heads()

_Board = tuple[Mapping[str, int], Mapping[str, int], tuple[int, int], bytes]
_LINE_RANK = {line: rank for rank, line in enumerate(LINES)}
_ISLAND_RANK = {island: rank for rank, island in enumerate(ISLANDS)}
"""Owners are sent in board order (``LINES``, ``ISLANDS``); names off the board are not sent."""
_BOARDS: dict[int, _Board] = {}


def _board(bridges: Mapping[str, int], controlled: Mapping[str, int],
           supply: tuple[int, int]) -> bytes:  # fmt: skip
    """Fields 6 to 8 (bridges, controlled islands, supply). The engine hands out one
    shared read-only mapping per position of the bridges: known by identity (kept alive
    in the entry, so its id is not reused), the three fields cost one lookup."""
    seen = _BOARDS.get(id(bridges))
    if seen is not None and seen[0] is bridges and seen[1] is controlled and seen[2] == supply:
        return seen[3]
    lines = sorted(filter(_LINE_RANK.__contains__, bridges), key=_LINE_RANK.__getitem__)
    islands = sorted(filter(_ISLAND_RANK.__contains__, controlled), key=_ISLAND_RANK.__getitem__)
    encoded = b"".join(
        [
            *[_owner_field(_OBS_BRIDGES, line, bridges[line]) for line in lines],
            *[_owner_field(_OBS_CONTROLLED, island, controlled[island]) for island in islands],
            _packed(_OBS_SUPPLY, supply),
        ]
    )
    if len(_BOARDS) >= _CACHE_MAX_ENTRIES:
        _BOARDS.clear()
    _BOARDS[id(bridges)] = (bridges, controlled, supply, encoded)
    return encoded


_HISTORY_FIELD: dict[int, tuple[SeenEvent, bytes]] = {}


def _history_field(event: SeenEvent) -> bytes:
    """``Observation.history`` field bytes for one event as its observer saw it, cached
    by identity (``arena.kahuna.view.seen_event`` gives equal events as one object; the
    entry keeps it alive, so its id is not reused)."""
    entry = _HISTORY_FIELD.get(id(event))
    if entry is not None and entry[0] is event:
        return entry[1]
    payload = event_to_pb(event).SerializeToString()
    field = len_field(_OBS_HISTORY, payload)
    if len(_HISTORY_FIELD) >= _CACHE_MAX_ENTRIES:
        _HISTORY_FIELD.clear()
    _HISTORY_FIELD[id(event)] = (event, field)
    return field


_SMALL_FIELD_VALUES = 1024


def _small_fields(field_number: int) -> tuple[bytes, ...]:
    """``varint_field(field_number, value)`` for every value below 1024, by value."""
    return tuple(varint_field(field_number, value) for value in range(_SMALL_FIELD_VALUES))


_OPP_HAND_FIELD, _DECK_FIELD = _small_fields(_OBS_OPP_HAND), _small_fields(_OBS_DECK)
_OPP_FACEDOWN_FIELD = _small_fields(_OBS_OPP_FACEDOWN)
_HISTORY_START_FIELD = _small_fields(_OBS_HISTORY_START)
_FINISHED_FIELD = (_bool_field(_OBS_FINISHED, False), _bool_field(_OBS_FINISHED, True))
_VARIANT_FIELD = {
    (strategic, tactical): len_field(
        _OBS_VARIANT, _bool_field(1, strategic) + _bool_field(2, tactical)
    )
    for strategic in (False, True)
    for tactical in (False, True)
}
_TURN_FLAGS = {
    (final, passed, played, discarded): b"".join(
        (
            _bool_field(_OBS_FINAL, final),
            _bool_field(_OBS_OPP_PASSED, passed),
            _bool_field(_OBS_PLAYED_CARD, played),
            _bool_field(_OBS_DISCARDED, discarded),
        )
    )
    for final in (False, True)
    for passed in (False, True)
    for played in (False, True)
    for discarded in (False, True)
}
"""Fields 17 to 20 (final turns, opponent passed, card played, discarded), by the flags."""


def observation_bytes(
    state: State, seat: int, new_events: Sequence[Event], history_start: int
) -> bytes:
    """``observation_to_pb(...).SerializeToString()``, assembled from cached pieces.

    The values are the seat's view (``arena.kahuna.view.seat_view``, what
    ``observe_since`` names), encoded byte for byte as the generated code does (fields
    in number order, proto3 defaults left out, ``to_move`` present whenever set);
    tests/protocol checks it on playouts. Runs of fields that change together are
    cached as one piece, by the values they encode (flags by truth: ``1`` and ``True``
    are one key).
    """
    (seat, variant, round_, to_move, points, bridges, controlled, supply, hand,
     opponent_hand_size, open_cards, faceup, deck_size, played_cards, own_facedown,
     opponent_facedown_count, final_turns, opponent_passed, turn_played_card,
     turn_discarded, history, is_finished, outcome) = seat_view(state, seat, new_events)
    small = _SMALL_FIELD_VALUES
    parts = [
        _HEADS[(seat, variant.strategic, variant.tactical, round_, to_move)],
        _POINTS[points],
        _board(bridges, controlled, supply),
        _HAND[hand],
        _OPP_HAND_FIELD[opponent_hand_size] if opponent_hand_size < small
        else varint_field(_OBS_OPP_HAND, opponent_hand_size),
        _OPEN[open_cards],
        _FACEUP[faceup],
        _DECK_FIELD[deck_size] if deck_size < small else varint_field(_OBS_DECK, deck_size),
        _PLAYED[played_cards],
        _OWN_FACEDOWN[own_facedown],
        _OPP_FACEDOWN_FIELD[opponent_facedown_count] if opponent_facedown_count < small
        else varint_field(_OBS_OPP_FACEDOWN, opponent_facedown_count),
        _TURN_FLAGS[(final_turns, opponent_passed, turn_played_card, turn_discarded)],
        _HISTORY_START_FIELD[history_start] if history_start < small
        else varint_field(_OBS_HISTORY_START, history_start),
    ]  # fmt: skip
    if history:
        parts += [_history_field(event) for event in history]
    parts.append(_FINISHED_FIELD[is_finished])
    if outcome is not None:
        parts.append(len_field(_OBS_OUTCOME, outcome_to_pb(outcome).SerializeToString()))
    return b"".join(parts)
