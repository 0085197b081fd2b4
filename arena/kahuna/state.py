"""The game state (immutable from outside) and its public value types.

``State`` keeps a compact engine form: hands as packed counts (two bits per
island), the board as one line bitmask per seat, the deck as a shared tuple
plus a position, and the history and discard piles as cons cells that are
materialised only when asked for. The engine modules build new states with
``State.copy``; nobody else mutates one.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple

from arena.kahuna.actions import DISCARD_ACTIONS, REMOVE_ACTIONS, Action
from arena.kahuna.board import (
    BRIDGES_PER_SEAT,
    ISLAND_LINE_MASK,
    ISLANDS,
    LINE_ENDS,
    LINES,
    MAJORITY_OF,
)

NO_CARD = -1
HAND_LIMIT = 5  # C3

# A cons list: None, or (previous cell, payload...). O(1) append, shared tails.
Cons = tuple[Any, ...] | None


@dataclass(frozen=True)
class Variant:
    strategic: bool = False
    tactical: bool = False


@dataclass(frozen=True)
class HandicapBridge:
    seat: int
    line: str


class Termination(enum.StrEnum):
    POINTS = "points"
    FINAL_POINTS = "final_points"
    BRIDGES = "bridges"
    DRAW = "draw"
    NO_BRIDGES = "no_bridges"


@dataclass(frozen=True)
class Outcome:
    winner: int | None
    termination: Termination
    points: tuple[int, int]


@dataclass(frozen=True)
class Event:
    """One applied action; ``drawn`` is the card a deck draw gave (else None)."""

    seat: int
    action: Action
    drawn: str | None


# ------------------------------------------------------------ packed hands


def card_bit(card: int) -> int:
    """The packed-hand increment for one card of island ``card``."""
    return 1 << (2 * card)


def card_count(packed: int, card: int) -> int:
    return (packed >> (2 * card)) & 3


class HandInfo(NamedTuple):
    """Everything move generation needs from a hand, computed once per hand."""

    size: int
    distinct: tuple[int, ...]
    names: tuple[str, ...]  # sorted
    discards: tuple[Action, ...]
    remove_mask: int  # lines some remove with these cards could target
    removes: Mapping[int, tuple[Action, ...]]  # line index -> removes possible


_HAND_INFO: dict[int, HandInfo] = {}


def hand_info(packed: int) -> HandInfo:
    info = _HAND_INFO.get(packed)
    if info is None:
        info = _HAND_INFO[packed] = _build_hand_info(packed)
    return info


def _build_hand_info(packed: int) -> HandInfo:
    counts = [card_count(packed, c) for c in range(len(ISLANDS))]
    distinct = tuple(c for c in range(len(ISLANDS)) if counts[c])
    names = tuple(ISLANDS[c] for c in distinct for _ in range(counts[c]))
    removes: dict[int, tuple[Action, ...]] = {}
    for line, (a, b) in enumerate(LINE_ENDS):
        both_a, mixed, both_b = REMOVE_ACTIONS[line]
        options = []
        if counts[a] >= 2:
            options.append(both_a)
        if counts[a] and counts[b]:
            options.append(mixed)
        if counts[b] >= 2:
            options.append(both_b)
        if options:
            removes[line] = tuple(options)
    return HandInfo(
        size=sum(counts),
        distinct=distinct,
        names=names,
        discards=tuple(DISCARD_ACTIONS[c] for c in distinct),
        remove_mask=sum(1 << line for line in removes),
        removes=removes,
    )


def pack_hand(cards: list[int] | tuple[int, ...]) -> int:
    return sum(card_bit(c) for c in cards)


def unpack_hand(packed: int) -> tuple[str, ...]:
    return hand_info(packed).names


# ------------------------------------------------------------ board helpers


def control_counts(bridges: tuple[int, int]) -> tuple[int, int]:
    """How many islands each seat controls (R5: a strict majority of its lines)."""
    counts = [0, 0]
    for seat in (0, 1):
        mask = bridges[seat]
        for island, lines in enumerate(ISLAND_LINE_MASK):
            if (mask & lines).bit_count() >= MAJORITY_OF[island]:
                counts[seat] += 1
    return counts[0], counts[1]


def controlled_lines(mask: int) -> int:
    """The lines touching an island that the owner of ``mask`` controls."""
    blocked = 0
    for island, lines in enumerate(ISLAND_LINE_MASK):
        if (mask & lines).bit_count() >= MAJORITY_OF[island]:
            blocked |= lines
    return blocked


def cons_cards(cell: Cons) -> tuple[int, ...]:
    """Materialise a cons list of (prev, card) cells, oldest first."""
    items: list[int] = []
    while cell is not None:
        items.append(cell[1])
        cell = cell[0]
    items.reverse()
    return tuple(items)


def cons_events(cell: Cons) -> list[tuple[int, Action, int]]:
    """Materialise the history cons list of (prev, seat, action, drawn), oldest first."""
    items: list[tuple[int, Action, int]] = []
    while cell is not None:
        items.append((cell[1], cell[2], cell[3]))
        cell = cell[0]
    items.reverse()
    return items


_FACEUP_NAMES: dict[tuple[int, int, int], tuple[str | None, str | None, str | None]] = {}
"""The face-up row's names by its card indices (bounded: 13**3 rows at most)."""
_CARD_NAMES: dict[int, tuple[Cons, tuple[str, ...]]] = {}
_CARD_NAMES_MAX_ENTRIES = 512
"""A few games' piles: the memo serves the game being played, and a larger one would keep
old games' cells alive for the garbage collector to walk."""


def cons_names(cell: Cons) -> tuple[str, ...]:
    """The island names of a cons list of (prev, card) cells, oldest first. A pile only
    grows by a cell on top of the last, so the names are kept per cell (by identity: the
    entry keeps the cell alive, so its id is not reused) and a new cell costs one step."""
    if cell is None:
        return ()
    found = _CARD_NAMES.get(id(cell))
    if found is not None and found[0] is cell:
        return found[1]
    below = _CARD_NAMES.get(id(cell[0]))
    if below is not None and below[0] is cell[0]:
        names = (*below[1], ISLANDS[cell[1]])
    else:
        names = tuple([ISLANDS[card] for card in cons_cards(cell)])
    if len(_CARD_NAMES) >= _CARD_NAMES_MAX_ENTRIES:
        _CARD_NAMES.clear()
    _CARD_NAMES[id(cell)] = (cell, names)
    return names


# Views derived from the bridge masks alone, computed once per position of the
# bridges (a game has a few dozen) rather than on every access: read-only.
_VIEWS_MAX_ENTRIES = 50_000
_BRIDGE_VIEWS: dict[tuple[int, int], Mapping[str, int]] = {}
_CONTROL_VIEWS: dict[tuple[int, int], Mapping[str, int]] = {}


def _remember(
    cache: dict[tuple[int, int], Mapping[str, int]], masks: tuple[int, int], view: dict[str, int]
) -> Mapping[str, int]:
    if len(cache) >= _VIEWS_MAX_ENTRIES:
        cache.clear()
    frozen = cache[masks] = MappingProxyType(view)
    return frozen


def _bridges_of(masks: tuple[int, int]) -> dict[str, int]:
    """Occupied line -> seat, in board order (``LINES``), a step per bridge."""
    first = masks[0]
    occupied = first | masks[1]
    owners: dict[str, int] = {}
    while occupied:
        low = occupied & -occupied
        owners[LINES[low.bit_length() - 1]] = 0 if first & low else 1
        occupied ^= low
    return owners


def _controlled_of(masks: tuple[int, int]) -> dict[str, int]:
    result: dict[str, int] = {}
    for island, lines in enumerate(ISLAND_LINE_MASK):
        for seat in (0, 1):
            if (masks[seat] & lines).bit_count() >= MAJORITY_OF[island]:
                result[ISLANDS[island]] = seat
    return result


# ------------------------------------------------------------ the state


class State:
    """One position of a game. Immutable through its public properties."""

    __slots__ = (  # noqa: RUF023 - grouped by meaning, not sorted
        "_variant", "_handicap", "_strategic", "_tactical", "_round", "_mover", "_points",
        "_final_points", "_hands", "_open", "_faceup", "_deck", "_dpos", "_bridges",
        "_played", "_facedown", "_turn_played", "_turn_discarded", "_opp_passed",
        "_final", "_reshuffle", "_outcome", "_history", "_legal",
    )  # fmt: skip

    _variant: Variant
    _handicap: tuple[HandicapBridge, ...]
    _strategic: bool
    _tactical: bool
    _round: int
    _mover: int  # seat to act next; -1 once finished
    _points: tuple[int, int]
    _final_points: tuple[int, int]
    _hands: tuple[int, int]  # packed counts
    _open: tuple[int, int]  # packed counts, tactical only
    _faceup: tuple[int, int, int]  # island index or NO_CARD
    _deck: tuple[int, ...]  # this round's draw pile, top first; _dpos cards are gone
    _dpos: int
    _bridges: tuple[int, int]  # line bitmask per seat
    _played: Cons  # (prev, card)
    _facedown: tuple[Cons, Cons]  # (prev, card) per seat
    _turn_played: bool
    _turn_discarded: bool
    _opp_passed: bool
    _final: int  # 0, or which of the two final turns (C5) is being played: 1 or 2
    _reshuffle: bool
    _outcome: Outcome | None
    _history: Cons  # (prev, seat, action, drawn card index or NO_CARD)
    _legal: tuple[Action, ...] | None

    def copy(self) -> State:
        new = object.__new__(State)
        new._variant = self._variant
        new._handicap = self._handicap
        new._strategic = self._strategic
        new._tactical = self._tactical
        new._round = self._round
        new._mover = self._mover
        new._points = self._points
        new._final_points = self._final_points
        new._hands = self._hands
        new._open = self._open
        new._faceup = self._faceup
        new._deck = self._deck
        new._dpos = self._dpos
        new._bridges = self._bridges
        new._played = self._played
        new._facedown = self._facedown
        new._turn_played = self._turn_played
        new._turn_discarded = self._turn_discarded
        new._opp_passed = self._opp_passed
        new._final = self._final
        new._reshuffle = self._reshuffle
        new._outcome = self._outcome
        new._history = self._history
        new._legal = None
        return new

    # -- public, read-only view (docs/reference/RECORD.md names) --------------------------

    @property
    def variant(self) -> Variant:
        return self._variant

    @property
    def handicap(self) -> tuple[HandicapBridge, ...]:
        return self._handicap

    @property
    def round(self) -> int:
        return self._round

    @property
    def to_move(self) -> int | None:
        return None if self._mover < 0 else self._mover

    @property
    def points(self) -> tuple[int, int]:
        return self._points

    @property
    def final_scoring_points(self) -> tuple[int, int]:
        """Points of the final scoring alone (R7 tie-break 3); (0, 0) before it."""
        return self._final_points

    @property
    def hands(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return unpack_hand(self._hands[0]), unpack_hand(self._hands[1])

    @property
    def hand_sizes(self) -> tuple[int, int]:
        return hand_info(self._hands[0]).size, hand_info(self._hands[1]).size

    @property
    def open_cards(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return unpack_hand(self._open[0]), unpack_hand(self._open[1])

    @property
    def faceup(self) -> tuple[str | None, str | None, str | None]:
        names = _FACEUP_NAMES.get(self._faceup)
        if names is None:
            a, b, c = (None if card == NO_CARD else ISLANDS[card] for card in self._faceup)
            names = _FACEUP_NAMES[self._faceup] = (a, b, c)
        return names

    @property
    def deck_size(self) -> int:
        return len(self._deck) - self._dpos

    @property
    def deck(self) -> tuple[str, ...]:
        """The draw pile, top card first (hidden from both seats, R9)."""
        return tuple(ISLANDS[c] for c in self._deck[self._dpos :])

    @property
    def bridges(self) -> Mapping[str, int]:
        """Occupied line -> seat (read-only; shared by every state with these bridges)."""
        view = _BRIDGE_VIEWS.get(self._bridges)
        if view is None:
            view = _remember(_BRIDGE_VIEWS, self._bridges, _bridges_of(self._bridges))
        return view

    @property
    def controlled(self) -> Mapping[str, int]:
        """Controlled island -> seat (read-only; shared like ``bridges``)."""
        view = _CONTROL_VIEWS.get(self._bridges)
        if view is None:
            view = _remember(_CONTROL_VIEWS, self._bridges, _controlled_of(self._bridges))
        return view

    @property
    def bridge_masks(self) -> tuple[int, int]:
        """Each seat's bridges as a line bitmask (bit k: ``LINES[k]``), for fast evaluations."""
        return self._bridges

    @property
    def bridge_counts(self) -> tuple[int, int]:
        return self._bridges[0].bit_count(), self._bridges[1].bit_count()

    @property
    def supply(self) -> tuple[int, int]:
        return (
            BRIDGES_PER_SEAT - self._bridges[0].bit_count(),
            BRIDGES_PER_SEAT - self._bridges[1].bit_count(),
        )

    @property
    def played_cards(self) -> tuple[str, ...]:
        return cons_names(self._played)

    @property
    def facedown_discards(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        first, second = self._facedown
        return cons_names(first), cons_names(second)

    @property
    def final_turns(self) -> bool:
        return self._final > 0

    @property
    def opponent_passed(self) -> bool:
        return self._opp_passed

    @property
    def turn_played_card(self) -> bool:
        return self._turn_played

    @property
    def turn_discarded(self) -> bool:
        return self._turn_discarded

    @property
    def needs_reshuffle(self) -> bool:
        return self._reshuffle

    @property
    def reshuffle_cards(self) -> tuple[str, ...]:
        """The whole discard pile (played and face-down), sorted (R6)."""
        cards = list(self.played_cards)
        for seat_cards in self.facedown_discards:
            cards.extend(seat_cards)
        return tuple(sorted(cards))

    @property
    def is_finished(self) -> bool:
        return self._outcome is not None

    @property
    def outcome(self) -> Outcome | None:
        return self._outcome

    @property
    def history(self) -> tuple[Event, ...]:
        return tuple(
            Event(seat, action, None if drawn == NO_CARD else ISLANDS[drawn])
            for seat, action, drawn in cons_events(self._history)
        )

    @property
    def last_event(self) -> Event | None:
        """The latest entry of ``history``, in O(1)."""
        cell = self._history
        if cell is None:
            return None
        drawn = cell[3]
        return Event(cell[1], cell[2], None if drawn == NO_CARD else ISLANDS[drawn])

    @property
    def history_length(self) -> int:
        count, cell = 0, self._history
        while cell is not None:
            count += 1
            cell = cell[0]
        return count

    def __repr__(self) -> str:
        status = "finished" if self.is_finished else f"seat {self._mover} to move"
        return f"<kahuna State round {self._round}, {status}, points {self._points}>"
