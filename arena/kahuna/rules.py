"""Applying actions: the turn, control and clearing, rounds, scoring, winning.

Each action kind is a small function that builds the next state from a copy
of the current one. Legality is settled before any of them runs (``apply``).
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.kahuna.actions import (
    KIND_DISCARD,
    KIND_DRAW_DECK,
    KIND_DRAW_FACEUP,
    KIND_PLACE,
    KIND_REMOVE,
    Action,
)
from arena.kahuna.board import (
    CARDS_PER_ISLAND,
    ISLAND_INDEX,
    ISLAND_LINE_MASK,
    ISLANDS,
    LINE_ENDS,
    LINE_INDEX,
    MAJORITY_OF,
)
from arena.kahuna.errors import IllegalActionError, MalformedActionError, SetupError
from arena.kahuna.legal import violation
from arena.kahuna.state import (
    NO_CARD,
    HandicapBridge,
    Outcome,
    State,
    Termination,
    Variant,
    card_bit,
    control_counts,
    pack_hand,
)

INTERIM_POINTS = {1: 1, 2: 2}  # R6: points for the interim scoring after rounds 1 and 2
LAST_ROUND = 3


def apply(state: State, action: Action, seat: int | None = None) -> State:
    """The state after ``action``; IllegalActionError naming the rule otherwise."""
    if type(action) is not Action:
        raise MalformedActionError(f"not an Action: {type(action).__name__}")
    problem = violation(state, action, seat)
    if problem is not None:
        raise IllegalActionError(*problem)
    kind = action.code[0]
    if kind == KIND_PLACE:
        return _place(state, action)
    if kind == KIND_REMOVE:
        return _remove(state, action)
    if kind == KIND_DISCARD:
        return _discard(state, action)
    if kind in (KIND_DRAW_DECK, KIND_DRAW_FACEUP):
        return _draw(state, action)
    return _pass(state, action)


def _spend_card(new: State, seat: int, card: int) -> None:
    """Take one card of ``card`` out of the hand; in Tactical the open copy goes first."""
    bit = card_bit(card)
    hands = new._hands
    new._hands = (hands[0] - bit, hands[1]) if seat == 0 else (hands[0], hands[1] - bit)
    if new._tactical:
        opened = new._open[seat]
        if (opened >> (2 * card)) & 3:
            new._open = (opened - bit, new._open[1]) if seat == 0 else (new._open[0], opened - bit)


def _place(state: State, action: Action) -> State:
    _, card, _, line = action.code
    seat = state._mover
    new = state.copy()
    _spend_card(new, seat, card)
    new._played = (state._played, card)
    new._turn_played = True
    new._history = (state._history, seat, action, NO_CARD)
    own_before = state._bridges[seat]
    own = own_before | (1 << line)
    opp = state._bridges[1 - seat]
    for island in LINE_ENDS[line]:  # R5: winning an island clears it, both ends at once
        lines = ISLAND_LINE_MASK[island]
        need = MAJORITY_OF[island]
        if (own & lines).bit_count() >= need > (own_before & lines).bit_count():
            opp &= ~lines
    new._bridges = (own, opp) if seat == 0 else (opp, own)
    _check_no_bridges(new)
    return new


def _remove(state: State, action: Action) -> State:
    _, first, second, line = action.code
    seat = state._mover
    new = state.copy()
    _spend_card(new, seat, first)
    _spend_card(new, seat, second)
    new._played = ((state._played, first), second)
    new._turn_played = True
    new._history = (state._history, seat, action, NO_CARD)
    bridges = state._bridges
    keep = ~(1 << line)
    new._bridges = (bridges[0], bridges[1] & keep) if seat == 0 else (bridges[0] & keep, bridges[1])
    _check_no_bridges(new)
    return new


def _discard(state: State, action: Action) -> State:
    card = action.code[1]
    seat = state._mover
    new = state.copy()
    _spend_card(new, seat, card)
    facedown = state._facedown
    cell = (facedown[seat], card)
    new._facedown = (cell, facedown[1]) if seat == 0 else (facedown[0], cell)
    new._turn_discarded = True
    new._history = (state._history, seat, action, NO_CARD)
    return new


def _draw(state: State, action: Action) -> State:
    seat = state._mover
    new = state.copy()
    kind, card, _, _ = action.code
    drawn = NO_CARD
    if kind == KIND_DRAW_DECK:
        card = drawn = state._deck[state._dpos]
        new._dpos = state._dpos + 1
    else:  # R4, C8: the lowest slot showing the card; refilled from the pile at once
        slot = state._faceup.index(card)
        refill = NO_CARD
        if state._dpos < len(state._deck):
            refill = state._deck[state._dpos]
            new._dpos = state._dpos + 1
        faceup = list(state._faceup)
        faceup[slot] = refill
        new._faceup = (faceup[0], faceup[1], faceup[2])
        if state._tactical:
            opened = new._open
            bit = card_bit(card)
            new._open = (opened[0] + bit, opened[1]) if seat == 0 else (opened[0], opened[1] + bit)
    hands = state._hands
    bit = card_bit(card)
    new._hands = (hands[0] + bit, hands[1]) if seat == 0 else (hands[0], hands[1] + bit)
    new._history = (state._history, seat, action, drawn)
    _end_turn(new, seat, passed=False)
    if new._dpos >= len(new._deck) and new._faceup == (NO_CARD, NO_CARD, NO_CARD):
        _end_round(new)
    return new


def _pass(state: State, action: Action) -> State:
    seat = state._mover
    new = state.copy()
    new._history = (state._history, seat, action, NO_CARD)
    _end_turn(new, seat, passed=True)
    return new


def _end_turn(new: State, seat: int, *, passed: bool) -> None:
    new._mover = 1 - seat
    new._turn_played = False
    new._turn_discarded = False
    new._opp_passed = passed
    if new._final == 1:
        new._final = 2
    elif new._final == 2:
        _final_scoring(new)


def _end_round(new: State) -> None:
    """R6: the last card is taken; the other player moves next (already set)."""
    if new._round < LAST_ROUND:
        counts = control_counts(new._bridges)
        gained = INTERIM_POINTS[new._round]
        if counts[0] != counts[1]:
            leader = 0 if counts[0] > counts[1] else 1
            points = list(new._points)
            points[leader] += gained
            new._points = (points[0], points[1])
        new._reshuffle = True
    else:
        new._final = 1  # C5: two final turns, the opponent of the taker first


def _final_scoring(new: State) -> None:
    counts = control_counts(new._bridges)
    final = (max(counts[0] - counts[1], 0), max(counts[1] - counts[0], 0))
    new._final_points = final
    points = (new._points[0] + final[0], new._points[1] + final[1])
    new._points = points
    bridges = (new._bridges[0].bit_count(), new._bridges[1].bit_count())
    for values, termination in (
        (points, Termination.POINTS),  # R7.2
        (final, Termination.FINAL_POINTS),  # R7.3
        (bridges, Termination.BRIDGES),  # R7.4
    ):
        if values[0] != values[1]:
            _finish(new, 0 if values[0] > values[1] else 1, termination)
            return
    _finish(new, None, Termination.DRAW)  # R7.5


def _finish(new: State, winner: int | None, termination: Termination) -> None:
    new._outcome = Outcome(winner, termination, new._points)
    new._mover = -1
    new._final = 0
    new._turn_played = False
    new._turn_discarded = False


def _check_no_bridges(new: State) -> None:
    """R7.1, C6: in rounds 2 and 3, exactly one seat without bridges loses at once."""
    if new._round >= 2:
        empty0 = new._bridges[0] == 0
        empty1 = new._bridges[1] == 0
        if empty0 != empty1:
            _finish(new, 1 if empty0 else 0, Termination.NO_BRIDGES)


def start_round(state: State, order: Sequence[str]) -> State:
    """Deal round 2 or 3 from ``order``, a permutation of ``state.reshuffle_cards`` (R6)."""
    if not state._reshuffle:
        raise SetupError("no round to start: the current round has not ended")
    cards = _card_indices(order, "reshuffle")
    expected = sorted(ISLAND_INDEX[c] for c in state.reshuffle_cards)
    if sorted(cards) != expected:
        raise SetupError(
            f"reshuffle for round {state._round + 1} is not a permutation of the discard pile "
            f"({len(expected)} cards: {' '.join(state.reshuffle_cards)})"
        )
    new = state.copy()
    new._round = state._round + 1
    new._faceup = _three(cards[:3])
    new._deck = tuple(cards[3:])
    new._dpos = 0
    new._played = None
    new._facedown = (None, None)
    new._reshuffle = False
    new._opp_passed = False
    _check_no_bridges(new)  # C6: after the interim scoring has been added
    return new


def _three(cards: list[int]) -> tuple[int, int, int]:
    padded = [*cards, NO_CARD, NO_CARD, NO_CARD]
    return padded[0], padded[1], padded[2]


def _card_indices(order: Sequence[str], what: str) -> list[int]:
    if isinstance(order, str) or not isinstance(order, Sequence):
        raise SetupError(f"the {what} must be a list of island names")
    cards = []
    for position, name in enumerate(order):
        index = ISLAND_INDEX.get(name.upper()) if isinstance(name, str) else None
        if index is None:
            raise SetupError(f"the {what} names an unknown island at position {position}: "
                             f"{name!r:.40}")
        cards.append(index)
    return cards


def new_game(
    deal: Sequence[str],
    variant: Variant = Variant(),  # noqa: B008 - frozen, shared safely
    handicap: Sequence[HandicapBridge] = (),
) -> State:
    """The state before the first turn (R2); SetupError on a bad deal, variant or handicap."""
    if not isinstance(variant, Variant):
        raise SetupError(f"the variant must be a Variant, not {type(variant).__name__}")
    cards = _card_indices(deal, "deal")
    if len(cards) != len(ISLANDS) * CARDS_PER_ISLAND or any(
        cards.count(c) != CARDS_PER_ISLAND for c in range(len(ISLANDS))
    ):
        raise SetupError("the deal must hold exactly 2 cards of each of the 12 islands")
    bridges = _handicap_bridges(handicap)
    state = object.__new__(State)
    state._variant = variant
    state._handicap = tuple(handicap)
    state._strategic = bool(variant.strategic)
    state._tactical = bool(variant.tactical)
    state._round = 1
    state._mover = 0
    state._points = (0, 0)
    state._final_points = (0, 0)
    state._hands = (pack_hand(cards[0:3]), pack_hand(cards[3:6]))
    state._open = (0, 0)
    state._faceup = _three(cards[6:9])
    state._deck = tuple(cards[9:])
    state._dpos = 0
    state._bridges = bridges
    state._played = None
    state._facedown = (None, None)
    state._turn_played = False
    state._turn_discarded = False
    state._opp_passed = False
    state._final = 0
    state._reshuffle = False
    state._outcome = None
    state._history = None
    state._legal = None
    return state


MAX_HANDICAP = 3


def _handicap_bridges(handicap: Sequence[HandicapBridge]) -> tuple[int, int]:
    """R2h: 1-3 bridges of one seat on distinct lines, placed before the first turn."""
    if isinstance(handicap, str) or not isinstance(handicap, Sequence):
        raise SetupError("a handicap must be a sequence of HandicapBridge")
    if not handicap:
        return (0, 0)
    if not all(isinstance(b, HandicapBridge) and type(b.seat) is int for b in handicap):
        raise SetupError("a handicap must be a sequence of HandicapBridge (seat 0 or 1, a line)")
    if len(handicap) > MAX_HANDICAP:
        raise SetupError(f"a handicap is 1 to {MAX_HANDICAP} bridges, not {len(handicap)}")
    seats = {bridge.seat for bridge in handicap}
    if len(seats) != 1 or not seats <= {0, 1}:
        raise SetupError("a handicap gives bridges to one seat, 0 or 1")
    mask = 0
    for bridge in handicap:
        index = LINE_INDEX.get(bridge.line) if isinstance(bridge.line, str) else None
        if index is None:
            raise SetupError(f"handicap names an unknown line {bridge.line!r:.40}")
        if mask >> index & 1:
            raise SetupError(f"handicap names {bridge.line} twice")
        mask |= 1 << index
    return (mask, 0) if seats == {0} else (0, mask)

