"""The greedy evaluation (``kahuna_bot.greedy``) on an engine state's bitmasks, for searches.

``choose(state, legal)`` plays what ``greedy.choose(greedy.view(state), legal)``
plays (the tests compare them at every decision of random games), an order of
magnitude faster: the board is each seat's line bitmask
(``State.bridge_masks``), an island's counts are two popcounts, and the
values a search meets again and again (a board's position value, a card's
usefulness on a board) are remembered. The arithmetic is the same
expressions in the same order, so the scores, and the ties between them, are
the same floats.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.kahuna import Action, ActionType, State
from arena.kahuna.board import ISLAND_INDEX, ISLAND_LINE_MASK, ISLANDS, LINE_ENDS, MAJORITY_OF
from kahuna_bot.board import HAND_LIMIT
from kahuna_bot.greedy import (
    BLOCKED_PROGRESS_FACTOR,
    BRIDGE_VALUE,
    CARD_VALUE,
    CHANCE_VALUE,
    CONTROL_VALUE,
    NO_BRIDGES_VALUE,
    PROGRESS_VALUE,
    REMOVE_EXTRA_COST,
    SAFE_MARGIN_VALUE,
    SCORING_VALUE,
    THREAT_VALUE,
)

_ISLAND_COUNT = len(ISLANDS)
_SIZES = tuple(mask.bit_count() for mask in ISLAND_LINE_MASK)
_ISLAND_LINES = tuple(
    tuple(k for k in range(mask.bit_length()) if mask >> k & 1) for mask in ISLAND_LINE_MASK
)
_MEMO_LIMIT = 200_000  # entries per table before it is emptied


def _island_value(island: int, mine: int, theirs: int, fits: bool) -> float:
    """``greedy.island_value`` from the counts (``fits``: a card in hand fits a free line)."""
    majority = MAJORITY_OF[island]
    free = _SIZES[island] - mine - theirs
    if mine >= majority:
        return CONTROL_VALUE + (SAFE_MARGIN_VALUE if mine > majority else 0.0)
    if theirs >= majority:
        return -CONTROL_VALUE - (SAFE_MARGIN_VALUE if theirs > majority else 0.0)
    reach_mine = 1.0 if mine + free >= majority else BLOCKED_PROGRESS_FACTOR
    reach_theirs = 1.0 if theirs + free >= majority else BLOCKED_PROGRESS_FACTOR
    value = PROGRESS_VALUE * (mine * reach_mine - theirs * reach_theirs) / majority
    if free and theirs == majority - 1:
        value -= THREAT_VALUE * (1.0 + 0.5 * mine)
    if free and mine == majority - 1 and fits:
        value += CHANCE_VALUE
    return value


_ISLAND_VALUES = {
    (island, mine, theirs, fits): _island_value(island, mine, theirs, fits)
    for island in range(_ISLAND_COUNT)
    for mine in range(_SIZES[island] + 1)
    for theirs in range(_SIZES[island] + 1 - mine)
    for fits in (False, True)
}
_POSITIONS: dict[tuple[int, int, int], float] = {}
_USEFULNESS: dict[tuple[int, int, int], float] = {}


def position_value(mine: int, theirs: int, reach: int) -> float:
    """``greedy.position_value`` for the seat with bridges ``mine``; ``reach``: the lines
    a card in its hand names an end of (0 for no hand)."""
    key = (mine, theirs, reach)
    value = _POSITIONS.get(key)
    if value is not None:
        return value
    free_lines = ~(mine | theirs)
    total = 0.0
    values = _ISLAND_VALUES
    for island, lines in enumerate(ISLAND_LINE_MASK):
        m = (mine & lines).bit_count()
        fits = bool(reach & lines & free_lines) and m == MAJORITY_OF[island] - 1
        total += values[island, m, (theirs & lines).bit_count(), fits]
    own = mine.bit_count()
    value = total + BRIDGE_VALUE * (2 * own - (own + theirs.bit_count()))
    if len(_POSITIONS) >= _MEMO_LIMIT:
        _POSITIONS.clear()
    _POSITIONS[key] = value
    return value


def after_place(mine: int, theirs: int, line: int) -> tuple[int, int]:
    """``greedy.after_place``: the masks after this seat places on ``line`` (R5 clearing)."""
    placed = mine | 1 << line
    for island in LINE_ENDS[line]:
        lines = ISLAND_LINE_MASK[island]
        majority = MAJORITY_OF[island]
        if (placed & lines).bit_count() >= majority > (mine & lines).bit_count():
            theirs &= ~lines
    return placed, theirs


def usefulness(mine: int, theirs: int, card: int) -> float:
    """``greedy.card_usefulness``: the best gain a placement with ``card`` would make."""
    key = (mine, theirs, card)
    value = _USEFULNESS.get(key)
    if value is not None:
        return value
    base = position_value(mine, theirs, 0)
    best = 0.0
    occupied = mine | theirs
    for line in _ISLAND_LINES[card]:
        if not occupied >> line & 1:
            gain = position_value(*after_place(mine, theirs, line), 0) - base
            best = max(best, gain)
    if len(_USEFULNESS) >= _MEMO_LIMIT:
        _USEFULNESS.clear()
    _USEFULNESS[key] = best
    return best


def _no_bridges(mine: int, theirs: int) -> float:
    own, other = mine.bit_count(), theirs.bit_count()
    return float((other == 0 and own > 0) - (own == 0 and other > 0))


def board_value(mine: int, theirs: int, reach: int, round_no: int) -> float:
    weight = NO_BRIDGES_VALUE if round_no >= 2 else NO_BRIDGES_VALUE / 20
    return position_value(mine, theirs, reach) + weight * _no_bridges(mine, theirs)


def _reach(hand: Sequence[int]) -> int:
    """The lines that some card of ``hand`` (island indices) names an end of."""
    lines = 0
    for card in hand:
        lines |= ISLAND_LINE_MASK[card]
    return lines


def _without(hand: Sequence[int], *cards: int) -> list[int]:
    rest = list(hand)
    for card in cards:
        rest.remove(card)
    return rest


def _round_end_value(mine: int, theirs: int, round_no: int) -> float:
    held_mine = held_theirs = 0
    for island, lines in enumerate(ISLAND_LINE_MASK):
        majority = MAJORITY_OF[island]
        if (mine & lines).bit_count() >= majority:
            held_mine += 1
        elif (theirs & lines).bit_count() >= majority:
            held_theirs += 1
    difference = held_mine - held_theirs
    stake = round_no if round_no < 3 else abs(difference)
    value = SCORING_VALUE * stake * ((difference > 0) - (difference < 0))
    if round_no < 3:
        value += NO_BRIDGES_VALUE * _no_bridges(mine, theirs)
    return value


class _Decision:
    __slots__ = ("base", "hand", "last_faceup", "mine", "round_no", "theirs")

    def __init__(self, state: State, seat: int) -> None:
        masks = state.bridge_masks
        self.mine, self.theirs = masks[seat], masks[1 - seat]
        self.hand = [ISLAND_INDEX[card] for card in state.hands[seat]]
        self.round_no = state.round
        self.base = board_value(self.mine, self.theirs, _reach(self.hand), self.round_no)
        # taking a face-up card ends the round (R6): the pile is empty and it is the last one
        self.last_faceup = state.deck_size == 0 and sum(c is not None for c in state.faceup) == 1

    def score(self, action: Action) -> float:
        _kind, a, b, line = action.code
        mine, theirs, round_no = self.mine, self.theirs, self.round_no
        action_type = action.type
        if action_type is ActionType.PLACE:
            placed, cleared = after_place(mine, theirs, line)
            rest = _reach(_without(self.hand, a))
            return board_value(placed, cleared, rest, round_no) - self.base - CARD_VALUE
        if action_type is ActionType.REMOVE:
            rest = _reach(_without(self.hand, a, b))
            gain = board_value(mine, theirs & ~(1 << line), rest, round_no) - self.base
            return gain - 2 * CARD_VALUE - REMOVE_EXTRA_COST
        if action_type is ActionType.DISCARD:
            return -CARD_VALUE - usefulness(mine, theirs, a)
        value = 0.0
        if action_type is ActionType.DRAW:
            if action.card:
                value += CARD_VALUE + usefulness(mine, theirs, a)
            else:
                fits = [usefulness(mine, theirs, island) for island in range(_ISLAND_COUNT)]
                value += CARD_VALUE + sum(fits) / len(fits)
            if action.card and self.last_faceup:
                value += _round_end_value(mine, theirs, round_no)
        return value


def score_action(state: State, action: Action) -> float:
    """``greedy.score_action`` for the seat to move of an unfinished engine state."""
    seat = state.to_move
    if seat is None:
        raise ValueError("a finished state has no seat to move")
    return _Decision(state, seat).score(action)


def choose(state: State, legal_actions: Sequence[Action]) -> Action:
    """``greedy.choose`` for the seat to move of an unfinished engine state."""
    seat = state.to_move
    if seat is None:
        raise ValueError("a finished state has no seat to move")
    decision = _Decision(state, seat)
    score = decision.score
    best_other: Action | None = None
    best_ender: Action | None = None
    other_score = ender_score = 0.0
    only_pass = True
    for action in legal_actions:  # the best score; a tie goes to the first text
        value = score(action)
        if action.ends_turn:
            only_pass = only_pass and action.type is ActionType.PASS
            if (
                best_ender is None
                or value > ender_score
                or (value == ender_score and action.text() < best_ender.text())
            ):
                best_ender, ender_score = action, value
        elif (
            best_other is None
            or value > other_score
            or (value == other_score and action.text() < best_other.text())
        ):
            best_other, other_score = action, value
    if best_other is not None:
        room = (
            only_pass and len(decision.hand) >= HAND_LIMIT and state.deck_size > 0
        )  # a full hand cannot draw: rather spend a card than pass with nothing gained
        if best_ender is None or other_score > 0.0 or room:
            return best_other
    assert best_ender is not None
    return best_ender
