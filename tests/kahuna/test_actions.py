"""Move notation (docs/reference/RECORD.md): canonical output, lenient input, distinct errors."""

from __future__ import annotations

import pytest

from arena.kahuna import (
    PASS_ACTION,
    Action,
    ActionType,
    MalformedActionError,
    action_from_json,
    discard,
    draw,
    parse_action,
    place,
    remove,
)
from arena.kahuna.actions import _INTERN

# (id, lenient text, canonical text, JSON)
NOTATION = [
    ("place", "place HUNA ELAI-HUNA", "place HUNA ELAI-HUNA",
     {"type": "place", "card": "HUNA", "line": "ELAI-HUNA"}),
    ("place-lenient", "PLACE huna huna-elai", "place HUNA ELAI-HUNA",
     {"type": "place", "card": "HUNA", "line": "ELAI-HUNA"}),
    ("remove", "remove ELAI+HUNA ELAI-HUNA", "remove ELAI+HUNA ELAI-HUNA",
     {"type": "remove", "cards": ["ELAI", "HUNA"], "line": "ELAI-HUNA"}),
    ("remove-lenient", "remove huna+elai Huna-Elai", "remove ELAI+HUNA ELAI-HUNA",
     {"type": "remove", "cards": ["ELAI", "HUNA"], "line": "ELAI-HUNA"}),
    ("remove-pair", "remove HUNA+HUNA ELAI-HUNA", "remove HUNA+HUNA ELAI-HUNA",
     {"type": "remove", "cards": ["HUNA", "HUNA"], "line": "ELAI-HUNA"}),
    ("discard", "discard huna", "discard HUNA", {"type": "discard", "card": "HUNA"}),
    ("draw-deck", "draw deck", "draw deck", {"type": "draw"}),
    ("draw-deck-upper", "DRAW DECK", "draw deck", {"type": "draw"}),
    ("draw-faceup", "draw Huna", "draw HUNA", {"type": "draw", "card": "HUNA"}),
    ("pass", "  pass ", "pass", {"type": "pass"}),
]


@pytest.mark.parametrize(("text", "canonical", "obj"), [n[1:] for n in NOTATION],
                         ids=[n[0] for n in NOTATION])
def test_notation(text: str, canonical: str, obj: dict[str, object]) -> None:
    action = parse_action(text)
    assert action.text() == canonical and action.to_json() == obj
    assert action_from_json(obj) == (action, None)
    assert action_from_json({"seat": 1, **obj}) == (action, 1)
    assert parse_action(canonical) is action  # interned


def test_every_interned_action_round_trips() -> None:
    for action in _INTERN.values():
        assert parse_action(action.text()) is action
        assert action_from_json(action.to_json())[0] is action


def test_constructors_canonicalise_and_intern() -> None:
    assert remove("huna", "ELAI", "huna-elai") is parse_action("remove ELAI+HUNA ELAI-HUNA")
    assert place("Huna", "HUNA-ELAI") is parse_action("place HUNA ELAI-HUNA")
    assert discard("lale") is parse_action("discard LALE") and draw() is parse_action("draw deck")
    assert draw("coco").card == "COCO" and PASS_ACTION.type is ActionType.PASS
    assert Action(ActionType.PLACE, card="huna", line="huna-elai") == place("HUNA", "ELAI-HUNA")


@pytest.mark.parametrize("text", [
    "", "jump", "place HUNA", "place HUNA ELAI-HUNA extra", "place XXXX ELAI-HUNA",
    "place HUNA ALOA-LALE", "remove HUNA ELAI-HUNA", "remove A+B+C ELAI-HUNA", "discard",
    "draw", "pass now",
], ids=["empty", "unknown-verb", "place-short", "place-long", "unknown-island", "not-a-line",
        "remove-one-card", "remove-three-cards", "discard-nothing", "draw-nothing", "pass-arg"])
def test_malformed_text(text: str) -> None:
    with pytest.raises(MalformedActionError):
        parse_action(text)


@pytest.mark.parametrize("obj", [
    "pass", None, [], {}, {"type": "jump"}, {"type": 5}, {"type": "place", "card": "HUNA"},
    {"type": "pass", "card": "HUNA"}, {"type": "remove", "card": "HUNA", "line": "ELAI-HUNA"},
    {"type": "remove", "cards": ["HUNA"], "line": "ELAI-HUNA"},
    {"type": "remove", "cards": "HUNA+ELAI", "line": "ELAI-HUNA"},
    {"type": "discard", "card": 7}, {"type": "pass", "seat": 2}, {"type": "pass", "seat": True},
    {"type": "pass", "seat": "0"}, {"type": "draw", "card": "deck"},
], ids=["string", "null", "list", "empty", "unknown-type", "numeric-type", "place-no-line",
        "pass-with-card", "remove-with-card", "remove-one-card", "remove-cards-string",
        "card-number", "seat-2", "seat-bool", "seat-string", "draw-card-deck"])
def test_malformed_json(obj: object) -> None:
    with pytest.raises(MalformedActionError):
        action_from_json(obj)


def test_json_null_keys_count_as_absent() -> None:
    assert action_from_json({"type": "draw", "card": None, "seat": None}) == (draw(), None)
