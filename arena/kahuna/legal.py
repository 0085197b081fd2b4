"""Which actions the seat to move may take: generation and explanation.

``legal_actions`` is the fast path (cached on the state); ``violation`` names
the rule an action breaks. Both read the same conditions of docs/reference/RULES.md; the
tests check, over many random positions, that they agree on every action.
"""

from __future__ import annotations

from arena.kahuna.actions import (
    DRAW_DECK,
    DRAW_FACEUP_ACTIONS,
    KIND_DISCARD,
    KIND_DRAW_DECK,
    KIND_DRAW_FACEUP,
    KIND_PLACE,
    KIND_REMOVE,
    PASS_ACTION,
    PLACE_ACTIONS,
    Action,
)
from arena.kahuna.board import (
    ALL_LINES_MASK,
    BRIDGES_PER_SEAT,
    ISLAND_LINE_MASK,
    ISLANDS,
    LINE_ENDS,
    LINES,
    MAJORITY_OF,
)
from arena.kahuna.state import HAND_LIMIT, NO_CARD, State, card_count, controlled_lines, hand_info

_PLACES: dict[int, tuple[Action, ...]] = {}
_FACEUP_DRAWS: dict[tuple[int, int, int], tuple[Action, ...]] = {}


def _places(card: int, free_mask: int) -> tuple[Action, ...]:
    """Place actions for one card on the free lines in ``free_mask`` (its lines only)."""
    key = free_mask << 4 | card
    found = _PLACES.get(key)
    if found is None:
        row = PLACE_ACTIONS[card]
        found = tuple(row[k] for k in range(len(LINES)) if free_mask >> k & 1)  # type: ignore[misc]
        _PLACES[key] = found
    return found


def _faceup_draws(faceup: tuple[int, int, int]) -> tuple[Action, ...]:
    found = _FACEUP_DRAWS.get(faceup)
    if found is None:
        cards = sorted({card for card in faceup if card != NO_CARD})
        found = _FACEUP_DRAWS[faceup] = tuple(DRAW_FACEUP_ACTIONS[c] for c in cards)
    return found


def legal_actions(state: State) -> tuple[Action, ...]:
    """Every legal action of the seat to move; () when finished or between rounds."""
    cached = state._legal
    if cached is None:
        cached = state._legal = _generate(state)
    return cached


def _generate(state: State) -> tuple[Action, ...]:
    if state._outcome is not None or state._reshuffle:
        return ()
    seat = state._mover
    info = hand_info(state._hands[seat])
    own, opp = state._bridges[seat], state._bridges[1 - seat]
    out: list[Action] = []
    if not state._turn_discarded:  # C2: no playing after a discard
        if own.bit_count() < BRIDGES_PER_SEAT:  # C7
            free = ALL_LINES_MASK & ~(own | opp)
            if state._strategic:  # R8
                free &= ~controlled_lines(opp)
            for card in info.distinct:
                mask = free & ISLAND_LINE_MASK[card]
                if mask:
                    out.extend(_places(card, mask))
        targets = opp & info.remove_mask
        while targets:
            low = targets & -targets
            out.extend(info.removes[low.bit_length() - 1])
            targets ^= low
    if not state._turn_played:  # C2: discard only in a turn without play
        out.extend(info.discards)
    if state._final:  # C4/C5: pass is the only ending
        out.append(PASS_ACTION)
        return tuple(out)
    if info.size < HAND_LIMIT:  # C3
        if state._dpos < len(state._deck):
            out.append(DRAW_DECK)
        out.extend(_faceup_draws(state._faceup))
    if not state._opp_passed:  # C4
        out.append(PASS_ACTION)
    return tuple(out)


def is_legal(state: State, action: Action) -> bool:
    return action in legal_actions(state)


def violation(state: State, action: Action, seat: int | None = None) -> tuple[str, str] | None:
    """(rule, reason) for the first rule ``action`` breaks here, or None if legal."""
    if state._outcome is not None:
        return "R7", "the game is over"
    if state._reshuffle:
        return "R6", "the round is over: the next round must be dealt first"
    mover = state._mover
    if seat is not None and seat != mover:
        return "R3", f"seat {seat} is not to move (seat {mover} is)"
    kind, a, b, line = action.code
    if kind == KIND_PLACE:
        return _place_violation(state, a, line)
    if kind == KIND_REMOVE:
        return _remove_violation(state, a, b, line)
    if kind == KIND_DISCARD:
        if state._turn_played:
            return "C2", "no discarding in a turn in which a card was played"
        return _missing_cards(state, (a,))
    if kind in (KIND_DRAW_DECK, KIND_DRAW_FACEUP):
        return _draw_violation(state, a if kind == KIND_DRAW_FACEUP else None)
    if state._opp_passed and not state._final:
        return "C4", "the opponent passed: this turn must end with a draw"
    return None


def _missing_cards(state: State, cards: tuple[int, ...]) -> tuple[str, str] | None:
    hand = state._hands[state._mover]
    for card in set(cards):
        if card_count(hand, card) < cards.count(card):
            wanted = " and ".join(ISLANDS[c] for c in cards if c == card)
            return "R3", f"{wanted} not in hand"
    return None


def _place_violation(state: State, card: int, line: int) -> tuple[str, str] | None:
    seat = state._mover
    own, opp = state._bridges[seat], state._bridges[1 - seat]
    if state._turn_discarded:
        return "C2", "no playing cards after discarding"
    if card not in LINE_ENDS[line]:
        return "R3", f"{ISLANDS[card]} names neither island of {LINES[line]}"
    missing = _missing_cards(state, (card,))
    if missing:
        return missing
    if (own | opp) >> line & 1:
        return "R3", f"{LINES[line]} is not free"
    if own.bit_count() >= BRIDGES_PER_SEAT:
        return "C7", "no bridge left in supply"
    if state._strategic:
        for island in LINE_ENDS[line]:
            if (opp & ISLAND_LINE_MASK[island]).bit_count() >= MAJORITY_OF[island]:
                return "R8", f"strategic: {ISLANDS[island]} is controlled by the opponent"
    return None


def _remove_violation(state: State, a: int, b: int, line: int) -> tuple[str, str] | None:
    seat = state._mover
    if state._turn_discarded:
        return "C2", "no playing cards after discarding"
    ends = LINE_ENDS[line]
    if a not in ends or b not in ends:
        return "R3", f"remove needs two cards naming islands of {LINES[line]}"
    if not state._bridges[1 - seat] >> line & 1:
        return "R3", f"{LINES[line]} holds no opponent bridge"
    return _missing_cards(state, (a, b))


def _draw_violation(state: State, card: int | None) -> tuple[str, str] | None:
    if state._final:
        return "C5", "no drawing in the final turns"
    if hand_info(state._hands[state._mover]).size >= HAND_LIMIT:
        return "C3", "hand limit 5: play or discard before drawing"
    if card is None:
        if state._dpos >= len(state._deck):
            return "R4", "the draw pile is empty"
    elif card not in state._faceup:
        return "R4", f"no face-up {ISLANDS[card]}"
    return None
