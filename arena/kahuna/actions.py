"""Actions and their notation (docs/reference/RECORD.md): text and JSON, parse and format.

Every canonical action exists once: the constructors return interned
instances, so move generation allocates nothing and comparisons are cheap.
Each action carries ``code``, a small integer tuple the engine dispatches on.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from arena.kahuna.board import ISLANDS, LINE_ENDS, LINES, island_index, line_index
from arena.kahuna.errors import MalformedActionError

# Engine codes: (kind, card_a, card_b, line); -1 where a slot is unused.
KIND_PLACE = 0
KIND_REMOVE = 1
KIND_DISCARD = 2
KIND_DRAW_DECK = 3
KIND_DRAW_FACEUP = 4
KIND_PASS = 5


class ActionType(enum.StrEnum):
    PLACE = "place"
    REMOVE = "remove"
    DISCARD = "discard"
    DRAW = "draw"
    PASS = "pass"


@dataclass(frozen=True, slots=True)
class Action:
    """One action in docs/reference/RECORD.md notation; built canonical (upper case, sorted)."""

    type: ActionType
    card: str | None = None
    cards: tuple[str, str] | None = None
    line: str | None = None
    code: tuple[int, int, int, int] = field(
        default=(-1, -1, -1, -1), init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        kind_type = _coerce_type(self.type)
        code = _validate(kind_type, self.card, self.cards, self.line)
        object.__setattr__(self, "type", kind_type)
        if self.card is not None:
            object.__setattr__(self, "card", ISLANDS[code[1]])
        if self.cards is not None:
            object.__setattr__(self, "cards", (ISLANDS[code[1]], ISLANDS[code[2]]))
        if self.line is not None:
            object.__setattr__(self, "line", LINES[code[3]])
        object.__setattr__(self, "code", code)

    def text(self) -> str:
        """Canonical text notation, e.g. ``remove ELAI+HUNA ELAI-HUNA``."""
        if self.type is ActionType.PLACE:
            return f"place {self.card} {self.line}"
        if self.type is ActionType.REMOVE:
            assert self.cards is not None
            return f"remove {self.cards[0]}+{self.cards[1]} {self.line}"
        if self.type is ActionType.DISCARD:
            return f"discard {self.card}"
        if self.type is ActionType.DRAW:
            return f"draw {self.card or 'deck'}"
        return "pass"

    @property
    def ends_turn(self) -> bool:
        """Draw and pass end the turn; place, remove and discard do not (R3)."""
        return self.code[0] >= KIND_DRAW_DECK

    def to_json(self) -> dict[str, object]:
        """docs/reference/RECORD.md JSON, without a ``seat`` key."""
        obj: dict[str, object] = {"type": self.type.value}
        if self.cards is not None:
            obj["cards"] = list(self.cards)
        elif self.card is not None:
            obj["card"] = self.card
        if self.line is not None:
            obj["line"] = self.line
        return obj

    def __str__(self) -> str:
        return self.text()


def _coerce_type(value: object) -> ActionType:
    if isinstance(value, ActionType):
        return value
    try:
        return ActionType(value.lower() if isinstance(value, str) else value)  # type: ignore[arg-type]
    except ValueError:
        raise MalformedActionError(f"unknown action type {value!r}") from None


def _validate(
    kind: ActionType, card: str | None, cards: tuple[str, str] | None, line: str | None
) -> tuple[int, int, int, int]:
    """Check which fields an action type takes; return its engine code."""
    needs = _FIELDS[kind]
    given = {"card": card is not None, "cards": cards is not None, "line": line is not None}
    for name, present in given.items():
        if present and name not in needs[1]:
            raise MalformedActionError(f"{kind.value} takes no {name}")
        if not present and name in needs[0]:
            raise MalformedActionError(f"{kind.value} needs a {name}")
    if kind is ActionType.PLACE:
        assert card is not None and line is not None
        return (KIND_PLACE, island_index(card), -1, line_index(line))
    if kind is ActionType.REMOVE:
        assert cards is not None and line is not None
        if not isinstance(cards, tuple | list) or len(cards) != 2:
            raise MalformedActionError("remove needs exactly two cards")
        first, second = sorted((island_index(cards[0]), island_index(cards[1])))
        return (KIND_REMOVE, first, second, line_index(line))
    if kind is ActionType.DISCARD:
        assert card is not None
        return (KIND_DISCARD, island_index(card), -1, -1)
    if kind is ActionType.DRAW:
        if card is None:
            return (KIND_DRAW_DECK, -1, -1, -1)
        return (KIND_DRAW_FACEUP, island_index(card), -1, -1)
    return (KIND_PASS, -1, -1, -1)


# type -> (required fields, allowed fields)
_FIELDS: dict[ActionType, tuple[frozenset[str], frozenset[str]]] = {
    ActionType.PLACE: (frozenset({"card", "line"}), frozenset({"card", "line"})),
    ActionType.REMOVE: (frozenset({"cards", "line"}), frozenset({"cards", "line"})),
    ActionType.DISCARD: (frozenset({"card"}), frozenset({"card"})),
    ActionType.DRAW: (frozenset(), frozenset({"card"})),
    ActionType.PASS: (frozenset(), frozenset()),
}

# ---------------------------------------------------------------- interning

_INTERN: dict[tuple[int, int, int, int], Action] = {}


def _interned(action: Action) -> Action:
    return _INTERN.setdefault(action.code, action)


def place(card: str, line: str) -> Action:
    return _intern_code((KIND_PLACE, island_index(card), -1, line_index(line)))


def remove(card_a: str, card_b: str, line: str) -> Action:
    first, second = sorted((island_index(card_a), island_index(card_b)))
    return _intern_code((KIND_REMOVE, first, second, line_index(line)))


def discard(card: str) -> Action:
    return _intern_code((KIND_DISCARD, island_index(card), -1, -1))


def draw(card: str | None = None) -> Action:
    if card is None:
        return DRAW_DECK
    return _intern_code((KIND_DRAW_FACEUP, island_index(card), -1, -1))


def _intern_code(code: tuple[int, int, int, int]) -> Action:
    found = _INTERN.get(code)
    if found is not None:
        return found
    kind, a, b, k = code
    if kind == KIND_PLACE:
        return _interned(Action(ActionType.PLACE, card=ISLANDS[a], line=LINES[k]))
    if kind == KIND_REMOVE:
        return _interned(Action(ActionType.REMOVE, cards=(ISLANDS[a], ISLANDS[b]), line=LINES[k]))
    if kind == KIND_DISCARD:
        return _interned(Action(ActionType.DISCARD, card=ISLANDS[a]))
    if kind == KIND_DRAW_FACEUP:
        return _interned(Action(ActionType.DRAW, card=ISLANDS[a]))
    if kind == KIND_DRAW_DECK:
        return _interned(Action(ActionType.DRAW))
    return _interned(Action(ActionType.PASS))


def intern(action: Action) -> Action:
    """The interned instance equal to ``action``."""
    return _intern_code(action.code)


DRAW_DECK: Action = _interned(Action(ActionType.DRAW))
PASS_ACTION: Action = _interned(Action(ActionType.PASS))

# Tables for move generation: only actions that can ever be legal.
PLACE_ACTIONS: tuple[tuple[Action | None, ...], ...] = tuple(
    tuple(
        _intern_code((KIND_PLACE, c, -1, k)) if c in LINE_ENDS[k] else None
        for k in range(len(LINES))
    )
    for c in range(len(ISLANDS))
)
REMOVE_ACTIONS: tuple[tuple[Action, Action, Action], ...] = tuple(
    (
        _intern_code((KIND_REMOVE, a, a, k)),
        _intern_code((KIND_REMOVE, a, b, k)),
        _intern_code((KIND_REMOVE, b, b, k)),
    )
    for k, (a, b) in enumerate(LINE_ENDS)
)
DISCARD_ACTIONS: tuple[Action, ...] = tuple(
    _intern_code((KIND_DISCARD, c, -1, -1)) for c in range(len(ISLANDS))
)
DRAW_FACEUP_ACTIONS: tuple[Action, ...] = tuple(
    _intern_code((KIND_DRAW_FACEUP, c, -1, -1)) for c in range(len(ISLANDS))
)

# ---------------------------------------------------------------- parsing


def parse_action(text: str) -> Action:
    """Parse text notation leniently (any case, either order); MalformedActionError."""
    if not isinstance(text, str):
        raise MalformedActionError(f"an action must be text, not {type(text).__name__}")
    words = text.split()
    if not words:
        raise MalformedActionError("empty action")
    verb, args = words[0].lower(), words[1:]
    expected = {"place": 2, "remove": 2, "discard": 1, "draw": 1, "pass": 0}.get(verb)
    if expected is None:
        raise MalformedActionError(f"unknown action {words[0]!r}")
    if len(args) != expected:
        raise MalformedActionError(f"{verb} takes {expected} argument(s): {text!r}")
    if verb == "place":
        return place(args[0], args[1])
    if verb == "remove":
        pair = args[0].split("+")
        if len(pair) != 2:
            raise MalformedActionError(f"remove names two cards joined by '+': {args[0]!r}")
        return remove(pair[0], pair[1], args[1])
    if verb == "discard":
        return discard(args[0])
    if verb == "draw":
        return DRAW_DECK if args[0].lower() == "deck" else draw(args[0])
    return PASS_ACTION


def action_from_json(obj: object) -> tuple[Action, int | None]:
    """docs/reference/RECORD.md JSON -> (action, seat or None); MalformedActionError on a bad shape.

    A key whose value is null counts as absent; keys that no action uses are
    ignored (room for per-action metadata).
    """
    if not isinstance(obj, dict):
        raise MalformedActionError(f"an action must be a JSON object, not {_json_kind(obj)}")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise MalformedActionError("an action needs a string 'type'")
    seat = obj.get("seat")
    if seat is not None and (type(seat) is not int or seat not in (0, 1)):
        raise MalformedActionError(f"'seat' must be 0 or 1, not {seat!r:.40}")
    card = _optional_str(obj, "card")
    line = _optional_str(obj, "line")
    cards: tuple[str, str] | None = None
    if obj.get("cards") is not None:
        raw = obj["cards"]
        if not isinstance(raw, list) or len(raw) != 2 or not all(isinstance(c, str) for c in raw):
            raise MalformedActionError("'cards' must be a list of two island names")
        cards = (raw[0], raw[1])
    action = intern(Action(_coerce_type(kind), card=card, cards=cards, line=line))
    return action, seat if type(seat) is int else None


def _optional_str(obj: dict[str, object], key: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise MalformedActionError(f"'{key}' must be a string, not {_json_kind(value)}")
    return value


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"
