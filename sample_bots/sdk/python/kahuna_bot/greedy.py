"""A greedy evaluation: one-ply lookahead over the legal actions.

The ``python_greedy`` sample bot plays it; ``python_ismcts`` uses it as its
move ordering and playout policy. It reads only what a seat can see (the
board, its own hand, the round, the deck size and the face-up row), so it
runs on an SDK ``Observation`` and, through ``view``, on an engine state
for the seat to move.

Every place and remove is applied to a copy of the board (R5: a new
majority clears the opponent's bridges from that island; control is a
function of the board) and the board is scored from this seat's side:
controlled islands, progress towards majorities that are still reachable,
majorities the opponent is one bridge from, and C6 (a seat with no bridge
in rounds 2-3 loses). A card spent costs a fixed value, so a placement is
made only when it gains more than the card is worth; otherwise the turn
ends with the draw whose card fits the board best.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from arena.kahuna import Action, ActionType, State
from kahuna_bot.board import HAND_LIMIT, ISLANDS, LINE_ISLANDS, LINES_OF, MAJORITY

Board = Mapping[str, int]  # occupied line -> seat


class Position(Protocol):
    """What the evaluation reads: an SDK ``Observation`` has it, so has ``view``."""

    @property
    def seat(self) -> int: ...
    @property
    def round(self) -> int: ...
    @property
    def bridges(self) -> Board: ...
    @property
    def hand(self) -> tuple[str, ...]: ...
    @property
    def faceup(self) -> tuple[str | None, str | None, str | None]: ...
    @property
    def deck_size(self) -> int: ...


class _StateView:
    """An engine state as the seat to move sees it, for the evaluation."""

    __slots__ = ("bridges", "deck_size", "faceup", "hand", "round", "seat")

    def __init__(self, state: State, seat: int) -> None:
        self.seat = seat
        self.round = state.round
        self.bridges = state.bridges
        self.hand = state.hands[seat]
        self.faceup = state.faceup
        self.deck_size = state.deck_size


def view(state: State) -> Position:
    """The position of an unfinished engine state for the seat to move (its own hand only)."""
    seat = state.to_move
    if seat is None:
        raise ValueError("a finished state has no seat to move")
    return _StateView(state, seat)


CONTROL_VALUE = 10.0  # an island held
SAFE_MARGIN_VALUE = 2.0  # held with a bridge to spare: one remove cannot break it
PROGRESS_VALUE = 4.0  # a full majority's worth of progress on an open island
BLOCKED_PROGRESS_FACTOR = 0.3  # progress on an island the seat can no longer reach
THREAT_VALUE = 2.5  # the opponent is one bridge short of an island, a line is free
CHANCE_VALUE = 1.5  # this seat is one bridge short, a line is free, a card fits
BRIDGE_VALUE = 0.1  # bridges on the board break R7 ties and guard against C6
NO_BRIDGES_VALUE = 1000.0  # C6: the seat without bridges loses
CARD_VALUE = 1.0  # what a card in hand is worth
REMOVE_EXTRA_COST = 0.5  # a remove gives the bridge back to the opponent's supply
SCORING_VALUE = 5.0  # per point that a round ended now would score


def counts(board: Board, island: str, seat: int) -> tuple[int, int, int]:
    """(bridges of seat, bridges of the opponent, free lines) on an island."""
    mine = theirs = free = 0
    for line in LINES_OF[island]:
        owner = board.get(line)
        if owner is None:
            free += 1
        elif owner == seat:
            mine += 1
        else:
            theirs += 1
    return mine, theirs, free


def controller(board: Board, island: str) -> int | None:
    seat_0, seat_1, _free = counts(board, island, 0)
    majority = MAJORITY[island]
    if seat_0 >= majority:
        return 0
    return 1 if seat_1 >= majority else None


def after_place(board: Board, line: str, seat: int) -> dict[str, int]:
    """The board after seat places on line, with R5 clearing applied."""
    before = {island: controller(board, island) for island in LINE_ISLANDS[line]}
    after = dict(board)
    after[line] = seat
    for island in LINE_ISLANDS[line]:
        won = counts(after, island, seat)[0] >= MAJORITY[island] and before[island] != seat
        if won:
            for cleared in LINES_OF[island]:
                if after.get(cleared) == 1 - seat:
                    del after[cleared]
    return after


def after_remove(board: Board, line: str) -> dict[str, int]:
    after = dict(board)
    after.pop(line, None)
    return after


def _card_fits(island: str, board: Board, hand: Sequence[str]) -> bool:
    """A card in hand can place on a free line of island."""
    for line in LINES_OF[island]:
        if line not in board and any(card in LINE_ISLANDS[line] for card in hand):
            return True
    return False


def island_value(board: Board, island: str, seat: int, hand: Sequence[str]) -> float:
    mine, theirs, free = counts(board, island, seat)
    majority = MAJORITY[island]
    if mine >= majority:
        return CONTROL_VALUE + (SAFE_MARGIN_VALUE if mine > majority else 0.0)
    if theirs >= majority:
        return -CONTROL_VALUE - (SAFE_MARGIN_VALUE if theirs > majority else 0.0)
    reach_mine = 1.0 if mine + free >= majority else BLOCKED_PROGRESS_FACTOR
    reach_theirs = 1.0 if theirs + free >= majority else BLOCKED_PROGRESS_FACTOR
    value = PROGRESS_VALUE * (mine * reach_mine - theirs * reach_theirs) / majority
    if free and theirs == majority - 1:
        value -= THREAT_VALUE * (1.0 + 0.5 * mine)
    if free and mine == majority - 1 and _card_fits(island, board, hand):
        value += CHANCE_VALUE
    return value


def position_value(board: Board, seat: int, hand: Sequence[str]) -> float:
    """How good the islands and bridges are for seat, holding hand."""
    value = sum(island_value(board, island, seat, hand) for island in ISLANDS)
    mine = sum(1 for owner in board.values() if owner == seat)
    return value + BRIDGE_VALUE * (2 * mine - len(board))


def no_bridges_value(board: Board, seat: int) -> float:
    """C6: +1 if only the opponent has no bridge on the board, -1 if only seat has none."""
    mine = sum(1 for owner in board.values() if owner == seat)
    theirs = len(board) - mine
    return float((theirs == 0 and mine > 0) - (mine == 0 and theirs > 0))


def board_value(board: Board, seat: int, hand: Sequence[str], round_no: int) -> float:
    """Position plus C6, which decides the game at once in rounds 2-3 and
    at the start of round 2 (so it weighs less in round 1)."""
    weight = NO_BRIDGES_VALUE if round_no >= 2 else NO_BRIDGES_VALUE / 20
    return position_value(board, seat, hand) + weight * no_bridges_value(board, seat)


def _without(hand: Sequence[str], *cards: str) -> list[str]:
    rest = list(hand)
    for card in cards:
        rest.remove(card)
    return rest


def card_usefulness(board: Board, card: str, seat: int) -> float:
    """The best gain in position a placement with this card would make (0 if none)."""
    return _usefulness(board, card, seat, position_value(board, seat, ()))


def _usefulness(board: Board, card: str, seat: int, base: float) -> float:
    """``card_usefulness`` with the board's own position value given."""
    best = 0.0
    for line in LINES_OF.get(card, ()):
        if line not in board:
            gain = position_value(after_place(board, line, seat), seat, ()) - base
            best = max(best, gain)
    return best


def controlled_difference(board: Board, seat: int) -> int:
    held = [controller(board, island) for island in ISLANDS]
    return held.count(seat) - held.count(1 - seat)


def ends_round(observation: Position, action: Action) -> bool:
    """Taking this face-up card leaves the deck and the face-up row empty (R6)."""
    if action.type is not ActionType.DRAW or not action.card or observation.deck_size:
        return False
    return sum(1 for card in observation.faceup if card is not None) == 1


class _Decision:
    """What the scores of one decision's actions share, each computed once."""

    def __init__(self, observation: Position) -> None:
        self.observation = observation
        self.board, self.seat = observation.bridges, observation.seat
        self.hand, self.round_no = observation.hand, observation.round
        self.base = board_value(self.board, self.seat, self.hand, self.round_no)
        self._position: float | None = None  # the board's value without a hand, once needed
        self._usefulness: dict[str, float] = {}

    def usefulness(self, card: str) -> float:
        value = self._usefulness.get(card)
        if value is None:
            if self._position is None:
                self._position = position_value(self.board, self.seat, ())
            value = _usefulness(self.board, card, self.seat, self._position)
            self._usefulness[card] = value
        return value


def score_action(observation: Position, action: Action) -> float:
    """The action's value: board gain minus cards spent; for a draw, the card's fit."""
    return _score(_Decision(observation), action)


def _score(decision: _Decision, action: Action) -> float:
    board, seat, hand = decision.board, decision.seat, decision.hand
    round_no, base = decision.round_no, decision.base
    if action.type is ActionType.PLACE and action.card and action.line:
        after = after_place(board, action.line, seat)
        rest = _without(hand, action.card)
        return board_value(after, seat, rest, round_no) - base - CARD_VALUE
    if action.type is ActionType.REMOVE and action.cards and action.line:
        after = after_remove(board, action.line)
        rest = _without(hand, *action.cards)
        gain = board_value(after, seat, rest, round_no) - base
        return gain - 2 * CARD_VALUE - REMOVE_EXTRA_COST
    if action.type is ActionType.DISCARD and action.card:
        return -CARD_VALUE - decision.usefulness(action.card)
    return _score_turn_end(decision, action)


def _score_turn_end(decision: _Decision, action: Action) -> float:
    board, seat, round_no = decision.board, decision.seat, decision.round_no
    value = 0.0
    if action.type is ActionType.DRAW:
        if action.card:
            value += CARD_VALUE + decision.usefulness(action.card)
        else:
            fits = [decision.usefulness(island) for island in ISLANDS]
            value += CARD_VALUE + sum(fits) / len(fits)
        if ends_round(decision.observation, action):
            value += _round_end_value(board, seat, round_no)
    return value


def _round_end_value(board: Board, seat: int, round_no: int) -> float:
    """What scoring now is worth (R6), and C6 checked as the next round starts."""
    difference = controlled_difference(board, seat)
    stake = round_no if round_no < 3 else abs(difference)
    value = SCORING_VALUE * stake * ((difference > 0) - (difference < 0))
    if round_no < 3:
        value += NO_BRIDGES_VALUE * no_bridges_value(board, seat)
    return value


def choose(observation: Position, legal_actions: Sequence[Action]) -> Action:
    """Play the best non-ending action if it beats ending the turn, else end it."""
    decision = _Decision(observation)
    scored = sorted(
        ((_score(decision, action), action.text(), action) for action in legal_actions),
        key=lambda item: (-item[0], item[1]),
    )
    enders = [item for item in scored if item[2].ends_turn]
    others = [item for item in scored if not item[2].ends_turn]
    if others and (not enders or others[0][0] > 0.0 or _must_make_room(observation, enders)):
        return others[0][2]
    return enders[0][2]


def _must_make_room(observation: Position, enders: list[tuple[float, str, Action]]) -> bool:
    """A full hand cannot draw: rather spend a card than pass with nothing gained."""
    only_pass = all(item[2].type is ActionType.PASS for item in enders)
    return len(observation.hand) >= HAND_LIMIT and only_pass and observation.deck_size > 0
