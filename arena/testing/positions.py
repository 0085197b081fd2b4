"""Hand-built positions, for tests of every layer.

``build_position`` turns a small dict into a State without playing up to it:

    build_position({
        "hands": [["HUNA", "ELAI"], ["ALOA"]],
        "bridges": {"ELAI-HUNA": 0, "ALOA-BARI": 1},
        "faceup": ["COCO", None, "LALE"],
        "to_move": 1,
    })

Keys (all optional): ``variant`` ({"strategic": bool, "tactical": bool}),
``round`` (1-3), ``to_move`` (0/1), ``points`` ([a, b]), ``hands``,
``open_cards`` (Tactical, a sub-multiset of each hand), ``faceup`` (3 slots,
None for empty), ``deck`` (top first), ``bridges`` ({line: seat}),
``played`` (face-up discard pile, oldest first), ``facedown`` ([[...], [...]]),
``turn_played_card``, ``turn_discarded``, ``opponent_passed``, ``final_turn``
(0, or 1/2: which of the two final turns is being played), ``needs_reshuffle``.
Cards the spec does not place go to the bottom of the deck in R1 order, or to
the played pile if ``"rest": "played"``. The position's history is empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena.kahuna.board import CARDS_PER_ISLAND, ISLANDS, LINE_INDEX, canonical_line, island_index
from arena.kahuna.state import NO_CARD, Cons, State, Variant, pack_hand

_KEYS = frozenset({
    "variant", "round", "to_move", "points", "hands", "open_cards", "faceup", "deck",
    "bridges", "played", "facedown", "turn_played_card", "turn_discarded",
    "opponent_passed", "final_turn", "needs_reshuffle", "rest",
})  # fmt: skip


def _cards(names: Sequence[str | None]) -> list[int]:
    return [island_index(name) for name in names if name is not None]


def _cons(cards: Sequence[int]) -> Cons:
    cell: Cons = None
    for card in cards:
        cell = (cell, card)
    return cell


def _variant(raw: Any) -> Variant:
    if isinstance(raw, Variant):
        return raw
    return Variant(bool(raw.get("strategic", False)), bool(raw.get("tactical", False)))


def build_position(spec: Mapping[str, Any]) -> State:
    """A State from a dict (see the module doc); ValueError on an impossible spec."""
    unknown = set(spec) - _KEYS
    if unknown:
        raise ValueError(f"unknown position keys: {sorted(unknown)}")
    hands = [_cards(hand) for hand in spec.get("hands", [[], []])]
    faceup = [NO_CARD if c is None else island_index(c) for c in spec.get("faceup", [None] * 3)]
    if len(faceup) != 3:
        raise ValueError("faceup has exactly 3 slots")
    deck = _cards(spec.get("deck", []))
    played = _cards(spec.get("played", []))
    facedown = [_cards(cards) for cards in spec.get("facedown", [[], []])]
    used = [*hands[0], *hands[1], *deck, *played, *facedown[0], *facedown[1]]
    used += [c for c in faceup if c != NO_CARD]
    rest = [c for c in range(len(ISLANDS)) for _ in range(CARDS_PER_ISLAND - used.count(c))]
    if any(used.count(c) > CARDS_PER_ISLAND for c in range(len(ISLANDS))):
        raise ValueError("the position holds more than 2 cards of an island")
    if spec.get("rest", "deck") == "played":
        played += rest
    else:
        deck += rest
    state = object.__new__(State)
    state._variant = _variant(spec.get("variant", {}))
    state._handicap = ()
    state._strategic = state._variant.strategic
    state._tactical = state._variant.tactical
    state._round = int(spec.get("round", 1))
    state._mover = int(spec.get("to_move", 0))
    points = spec.get("points", (0, 0))
    state._points = (int(points[0]), int(points[1]))
    state._final_points = (0, 0)
    state._hands = (pack_hand(hands[0]), pack_hand(hands[1]))
    opened = [_cards(cards) for cards in spec.get("open_cards", [[], []])]
    state._open = (pack_hand(opened[0]), pack_hand(opened[1]))
    state._faceup = (faceup[0], faceup[1], faceup[2])
    state._deck = tuple(deck)
    state._dpos = 0
    state._bridges = _bridges(spec.get("bridges", {}))
    state._played = _cons(played)
    state._facedown = (_cons(facedown[0]), _cons(facedown[1]))
    state._turn_played = bool(spec.get("turn_played_card", False))
    state._turn_discarded = bool(spec.get("turn_discarded", False))
    state._opp_passed = bool(spec.get("opponent_passed", False))
    state._final = int(spec.get("final_turn", 0))
    state._reshuffle = bool(spec.get("needs_reshuffle", False))
    state._outcome = None
    state._history = None
    state._legal = None
    return state


def _bridges(spec: Mapping[str, int]) -> tuple[int, int]:
    masks = [0, 0]
    for line, seat in spec.items():
        masks[seat] |= 1 << LINE_INDEX[canonical_line(line)]
    return masks[0], masks[1]
