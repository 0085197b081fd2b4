"""Completing one seat's observation into full states (determinization).

An ``Observation`` (R9) leaves three places hidden from its seat: the
opponent's hand (beyond Tactical open cards), the opponent's face-down
discards of this round and the draw pile. ``Completion`` reads an
observation once and then builds, fast and without further checks, the
``State`` in which those places hold given cards: the *worlds* a search may
play in. Which cards may go where (``HiddenPlaces``) is fixed here, and
``deal_unseen`` draws one arrangement of them, every allowed one equally likely,
for samplers (the SDK's ``kahuna_bot.sampling``, OpenSpiel's resampling) whose
faster redraws find none.

What the public history proves about the opponent's hand is kept (a
face-up card the opponent drew stays in its hand until it plays a card of
that island), as two per-island lower bounds, sound at every event:

* ``known``: cards certainly in the opponent's hand. A face-up draw adds
  one; a played card of that island takes one off; a hidden face-down
  discard takes one off every island (any of them may have been the card
  discarded). In Tactical the open cards count too.
* ``held``: cards certainly in the opponent's hand *or* among its face-down
  discards of this round (a hidden discard moves a card, it does not lose
  it). It starts each round equal to ``known``.

Cards of earlier rounds went back into a shuffled pile: the history keeps
no trace of them. In a completed state the history is the observer's own
history with stand-ins where it saw nothing: the opponent's face-down
discards of this round carry the completion's face-down cards, in order;
earlier hidden discards carry the first island and hidden deck draws no
card. The rules never read the history, and ``observe`` of a completion for
the observing seat equals the observation it was made from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import comb

from arena.kahuna.actions import (
    DISCARD_ACTIONS,
    DRAW_DECK,
    PASS_ACTION,
    Action,
    ActionType,
    discard,
    draw,
    place,
    remove,
)
from arena.kahuna.board import CARDS_PER_ISLAND, ISLAND_INDEX, ISLANDS, LINE_INDEX
from arena.kahuna.observe import Observation, SeenEvent
from arena.kahuna.state import NO_CARD, Cons, State, pack_hand

FIRST_ROUND_DRAWS = len(ISLANDS) * CARDS_PER_ISLAND - 6  # 15 in the pile, 3 face up


@dataclass(frozen=True)
class HiddenPlaces:
    """What the observing seat does not see, as island indices (R1 order).

    ``pool`` holds every card the seat cannot place (sorted); a completion
    deals ``opponent_hidden`` of them into the opponent's hand (next to
    ``known``), ``opponent_facedown`` into its face-down discards and
    ``deck`` into the draw pile, so that the hand and the face-down cards
    together contain ``held``.
    """

    pool: tuple[int, ...]
    known: tuple[int, ...]
    held: tuple[int, ...]  # beyond ``known``: in the hidden hand or face down
    opponent_hidden: int
    opponent_facedown: int
    deck: int


def deal_unseen(
    places: HiddenPlaces, uniform: Callable[[], float]
) -> tuple[list[int], list[int], list[int]]:
    """(hidden hand, face-down discards, pile top first): ``places.pool`` dealt so that
    the hand and the face-down cards together hold ``places.held``, each such
    arrangement as likely as under a uniform shuffle redrawn until it holds them.

    Exact where redrawing is hopeless (a few proven cards among a large pool leave
    almost no shuffle that keeps them): the number of cards of each island in
    the opponent's places is drawn by its count of arrangements, then each side is
    shuffled. ``uniform`` gives floats in [0, 1) (``random.Random.random``); ValueError
    when no arrangement keeps ``held``."""
    reach = places.opponent_hidden + places.opponent_facedown
    have, need = Counter(places.pool), Counter(places.held)
    islands = sorted(have)
    # ways[i][k]: arrangements of islands[i:] putting k of their cards in the opponent's places
    ways = [[0] * (reach + 1) for _ in range(len(islands) + 1)]
    ways[-1][0] = 1
    for i in range(len(islands) - 1, -1, -1):
        count, least = have[islands[i]], need[islands[i]]
        for k in range(reach + 1):
            ways[i][k] = sum(
                comb(count, m) * ways[i + 1][k - m] for m in range(least, min(count, k) + 1)
            )
    if not ways[0][reach]:
        raise ValueError(
            f"no arrangement of the {len(places.pool)} unseen cards puts the opponent's "
            f"proven cards {sorted(places.held)} in its hand or face-down discards"
        )
    front: list[int] = []
    back: list[int] = []
    k = reach
    for i, island in enumerate(islands):
        count, least = have[island], need[island]
        options = [
            (m, comb(count, m) * ways[i + 1][k - m])
            for m in range(least, min(count, k) + 1)
            if ways[i + 1][k - m]
        ]
        target = uniform() * ways[i][k]
        taken = options[-1][0]  # where rounding carries the target past the last weight
        for m, weight in options:
            if target < weight:
                taken = m
                break
            target -= weight
        front += [island] * taken
        back += [island] * (count - taken)
        k -= taken
    for cards in (front, back):
        for i in range(len(cards) - 1, 0, -1):  # Fisher-Yates
            j = int(uniform() * (i + 1))
            cards[i], cards[j] = cards[j], cards[i]
    hidden = places.opponent_hidden
    return front[:hidden], front[hidden:], back


def _counts(cards: Sequence[str]) -> list[int]:
    counts = [0] * len(ISLANDS)
    for card in cards:
        counts[ISLAND_INDEX[card]] += 1
    return counts


def _elements(counts: Sequence[int]) -> tuple[int, ...]:
    return tuple(card for card, count in enumerate(counts) if count for _ in range(count))


def _cards_played(event: SeenEvent) -> tuple[str, ...]:
    if event.type is ActionType.PLACE and event.card is not None:
        return (event.card,)
    if event.type is ActionType.REMOVE and event.cards is not None:
        return event.cards
    return ()


def opponent_knowledge(obs: Observation) -> tuple[list[int], list[int]]:
    """(known, held) per island for the opponent of ``obs.seat`` (see the module doc)."""
    opp = 1 - obs.seat
    known = [0] * len(ISLANDS)
    held = [0] * len(ISLANDS)
    drawable = FIRST_ROUND_DRAWS  # cards still to be taken this round
    spent = 0  # cards played or discarded this round: the next round's pile
    for event in obs.history:
        kind = event.type
        if kind is ActionType.DRAW:
            if event.seat == opp and event.card is not None:
                card = ISLAND_INDEX[event.card]
                known[card] += 1
                held[card] += 1
            drawable -= 1
            if drawable == 0:  # R6: the round ends; its discards are reshuffled
                drawable, spent = spent, 0
                held = list(known)
            continue
        if kind is ActionType.DISCARD:
            spent += 1
            if event.seat == opp:
                known = [max(count - 1, 0) for count in known]
            continue
        played = _cards_played(event)
        spent += len(played)
        if event.seat == opp:
            for name in played:
                card = ISLAND_INDEX[name]
                known[card] = max(known[card] - 1, 0)
                held[card] = max(held[card] - 1, 0)
    if obs.variant.tactical:
        for card, count in enumerate(_counts(obs.open_cards[opp])):
            known[card] = max(known[card], count)
    held = [max(h, k) for h, k in zip(held, known, strict=True)]
    return known, held


def _final_turn(obs: Observation) -> int:
    """C5: 1 in the first of the two final turns, 2 in the second. The first
    follows the turn that took the last card (a draw), the second the first's
    pass (C4): whether the opponent passed tells them apart."""
    if not obs.final_turns:
        return 0
    return 2 if obs.opponent_passed else 1


def _action(event: SeenEvent) -> Action:
    if event.type is ActionType.PLACE and event.card and event.line:
        return place(event.card, event.line)
    if event.type is ActionType.REMOVE and event.cards and event.line:
        return remove(event.cards[0], event.cards[1], event.line)
    if event.type is ActionType.DISCARD:
        return DISCARD_ACTIONS[0] if event.card is None else discard(event.card)
    if event.type is ActionType.DRAW:
        return DRAW_DECK if event.card is None else draw(event.card)
    return PASS_ACTION


def _cons(cards: Sequence[int]) -> Cons:
    cell: Cons = None
    for card in cards:
        cell = (cell, card)
    return cell


class Completion:
    """The worlds consistent with one observation; ``state`` builds one of them."""

    __slots__ = ("_opp", "_prefix", "_suffix", "_template", "places")

    def __init__(self, obs: Observation) -> None:
        if obs.is_finished or obs.to_move is None:
            raise ValueError("the game is over: nothing is left to complete")
        opp = 1 - obs.seat
        known, held = opponent_knowledge(obs)
        visible = _counts(obs.hand)
        for cards in (obs.played_cards, obs.own_facedown_discards, [c for c in obs.faceup if c]):
            for card, count in enumerate(_counts(cards)):
                visible[card] += count
        pool_counts = [CARDS_PER_ISLAND - v - k for v, k in zip(visible, known, strict=True)]
        if min(pool_counts) < 0:
            island = ISLANDS[min(range(len(ISLANDS)), key=pool_counts.__getitem__)]
            raise ValueError(f"the observation shows more than 2 cards of {island}")
        hidden = obs.opponent_hand_size - sum(known)
        pool = _elements(pool_counts)
        if hidden < 0 or len(pool) != hidden + obs.opponent_facedown_count + obs.deck_size:
            raise ValueError(
                f"the observation does not add up: {len(pool)} unseen cards for "
                f"{max(hidden, 0)} hidden hand cards, {obs.opponent_facedown_count} face-down "
                f"discards and a pile of {obs.deck_size}"
            )
        beyond = [h - k for h, k in zip(held, known, strict=True)]
        self.places = HiddenPlaces(
            pool=pool,
            known=_elements(known),
            held=_elements(beyond),
            opponent_hidden=hidden,
            opponent_facedown=obs.opponent_facedown_count,
            deck=obs.deck_size,
        )
        self._opp = opp
        self._template = self._build_template(obs)
        self._prefix, self._suffix = self._split_history(obs)

    def _build_template(self, obs: Observation) -> State:
        seat = obs.seat
        state = object.__new__(State)
        state._variant = obs.variant
        state._handicap = ()
        state._strategic = bool(obs.variant.strategic)
        state._tactical = bool(obs.variant.tactical)
        state._round = obs.round
        assert obs.to_move is not None
        state._mover = obs.to_move
        state._points = obs.points
        state._final_points = (0, 0)
        hands = [0, 0]
        hands[seat] = pack_hand([ISLAND_INDEX[c] for c in obs.hand])
        state._hands = (hands[0], hands[1])
        opened = [pack_hand([ISLAND_INDEX[c] for c in cards]) for cards in obs.open_cards]
        state._open = (opened[0], opened[1]) if obs.variant.tactical else (0, 0)
        faceup = [NO_CARD if c is None else ISLAND_INDEX[c] for c in obs.faceup]
        state._faceup = (faceup[0], faceup[1], faceup[2])
        state._deck = ()
        state._dpos = 0
        masks = [0, 0]
        for line, owner in obs.bridges.items():
            masks[owner] |= 1 << LINE_INDEX[line]
        state._bridges = (masks[0], masks[1])
        state._played = _cons([ISLAND_INDEX[c] for c in obs.played_cards])
        own = _cons([ISLAND_INDEX[c] for c in obs.own_facedown_discards])
        state._facedown = (own, None) if seat == 0 else (None, own)
        state._turn_played = obs.turn_played_card
        state._turn_discarded = obs.turn_discarded
        state._opp_passed = obs.opponent_passed
        state._final = _final_turn(obs)
        state._reshuffle = False
        state._outcome = None
        state._history = None
        state._legal = None
        return state

    def _split_history(
        self, obs: Observation
    ) -> tuple[Cons, tuple[tuple[int, Action | None, int], ...]]:
        """The history as cons cells up to this round's first hidden opponent
        discard, then the events from there (None: a face-down card to fill in)."""
        events = obs.history
        count = obs.opponent_facedown_count
        first = len(events)
        if count:
            seen = 0
            for index in range(len(events) - 1, -1, -1):
                event = events[index]
                if event.seat == self._opp and event.type is ActionType.DISCARD and event.hidden:
                    seen += 1
                    if seen == count:
                        first = index
                        break
        cell: Cons = None
        for event in events[:first]:
            cell = (cell, event.seat, _action(event), _drawn(event))
        suffix: list[tuple[int, Action | None, int]] = []
        for event in events[first:]:
            hidden_discard = (
                event.seat == self._opp and event.type is ActionType.DISCARD and event.hidden
            )
            suffix.append((event.seat, None if hidden_discard else _action(event), _drawn(event)))
        return cell, tuple(suffix)

    def state(
        self, hidden_hand: Sequence[int], facedown: Sequence[int], deck: Sequence[int]
    ) -> State:
        """The world with these cards in the hidden places (island indices, the
        pile top first, face-down cards oldest first). Not checked: the caller
        deals a permutation of ``places.pool``, sized as ``places`` says."""
        new = self._template.copy()
        packed = pack_hand([*self.places.known, *hidden_hand])
        opp = self._opp
        hands = new._hands
        new._hands = (hands[0], packed) if opp == 1 else (packed, hands[1])
        new._deck = tuple(deck)
        cell = _cons(facedown)
        own = new._facedown
        new._facedown = (own[0], cell) if opp == 1 else (cell, own[1])
        history = self._prefix
        if self._suffix:
            next_card = 0
            for seat, action, drawn in self._suffix:
                if action is None:
                    action = DISCARD_ACTIONS[facedown[next_card]]
                    next_card += 1
                history = (history, seat, action, drawn)
        new._history = history
        return new


def _drawn(event: SeenEvent) -> int:
    return NO_CARD if event.drawn is None else ISLAND_INDEX[event.drawn]
