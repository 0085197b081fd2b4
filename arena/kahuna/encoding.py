"""Fixed-size numbers for learners: every action as an index, a seat's observation as a vector.

The action encoding numbers every action the game can ever make legal, in one
order fixed here (``ACTIONS``): a policy's output is an index into it and a
legal-action mask is one flag per index. The observation vector is built from
one seat's ``Observation`` (``arena.kahuna.observe``), never from the full
state, so a learner sees what a bot of that seat is sent and nothing more;
``FEATURES`` names its slots (docs/guide/learning.md). Plain lists and the standard
library only: a sandboxed bot encodes with the same code the training
environment (``arena.envs``) used, without numpy.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.kahuna.actions import (
    DISCARD_ACTIONS,
    DRAW_DECK,
    DRAW_FACEUP_ACTIONS,
    PASS_ACTION,
    PLACE_ACTIONS,
    REMOVE_ACTIONS,
    Action,
)
from arena.kahuna.board import BRIDGES_PER_SEAT, DECK_CARDS, ISLAND_INDEX, ISLANDS, LINE_ENDS, LINES
from arena.kahuna.observe import Observation


def _all_actions() -> tuple[Action, ...]:
    places: list[Action] = []
    for line, ends in enumerate(LINE_ENDS):
        for card in ends:
            action = PLACE_ACTIONS[card][line]
            assert action is not None
            places.append(action)
    removes = [action for triple in REMOVE_ACTIONS for action in triple]
    return (
        *places,
        *removes,
        *DISCARD_ACTIONS,
        *DRAW_FACEUP_ACTIONS,
        DRAW_DECK,
        PASS_ACTION,
    )


ACTIONS: tuple[Action, ...] = _all_actions()
"""Every action the game can have, in encoding order: for each line (R1's order)
a place of either end's card (54), then for each line the removes with two cards of
its first end, one of each, two of its second (81), the discards (12), the face-up
draws (12), the deck draw, the pass: 161 in all."""

ACTION_COUNT = len(ACTIONS)
_INDEX_OF_CODE: dict[tuple[int, int, int, int], int] = {a.code: i for i, a in enumerate(ACTIONS)}


def action_index(action: Action) -> int:
    """The index of ``action`` in ``ACTIONS``."""
    return _INDEX_OF_CODE[action.code]


def action_mask(legal: Iterable[Action]) -> list[int]:
    """One flag per index of ``ACTIONS``: 1 where the action is among ``legal``."""
    mask = [0] * ACTION_COUNT
    for action in legal:
        mask[_INDEX_OF_CODE[action.code]] = 1
    return mask


MAX_POINTS = 1000
"""An upper bound on the points slots (no game comes near it)."""

FEATURES: tuple[tuple[str, int, int], ...] = (
    # (name, slots, highest value); "own" is the observing seat, "opponent" the other
    ("own_bridge_on_line", len(LINES), 1),
    ("opponent_bridge_on_line", len(LINES), 1),
    ("own_controls_island", len(ISLANDS), 1),
    ("opponent_controls_island", len(ISLANDS), 1),
    ("hand_count_of_island", len(ISLANDS), 2),
    ("own_open_count_of_island", len(ISLANDS), 2),
    ("opponent_open_count_of_island", len(ISLANDS), 2),
    ("faceup_count_of_island", len(ISLANDS), 2),
    ("played_count_of_island", len(ISLANDS), 2),
    ("own_facedown_count_of_island", len(ISLANDS), 2),
    ("round_is", 3, 1),
    ("to_move_is_own", 1, 1),
    ("own_points", 1, MAX_POINTS),
    ("opponent_points", 1, MAX_POINTS),
    ("own_supply", 1, BRIDGES_PER_SEAT),
    ("opponent_supply", 1, BRIDGES_PER_SEAT),
    ("own_hand_size", 1, DECK_CARDS),
    ("opponent_hand_size", 1, DECK_CARDS),
    ("deck_size", 1, DECK_CARDS),
    ("opponent_facedown_count", 1, DECK_CARDS),
    ("final_turns", 1, 1),
    ("opponent_passed", 1, 1),
    ("turn_played_card", 1, 1),
    ("turn_discarded", 1, 1),
    ("strategic", 1, 1),
    ("tactical", 1, 1),
    ("is_finished", 1, 1),
)
"""The observation vector's slots in order: name, how many, the highest value any takes.
Per-line slots follow ``LINES``' order, per-island slots ``ISLANDS``'; values are
counts and flags, unscaled."""

OBSERVATION_SIZE = sum(size for _, size, _ in FEATURES)
OBSERVATION_HIGH: tuple[int, ...] = tuple(high for _, size, high in FEATURES for _ in range(size))
"""The highest value of each slot (every slot's lowest is 0)."""

_LINE_INDEX = {line: k for k, line in enumerate(LINES)}
_ISLANDS = len(ISLANDS)


def _counts(cards: Sequence[str | None]) -> list[float]:
    counts = [0.0] * _ISLANDS
    for card in cards:
        if card is not None:
            counts[ISLAND_INDEX[card]] += 1.0
    return counts


def encode_observation(obs: Observation) -> list[float]:
    """The vector of ``FEATURES`` for one seat's observation (``OBSERVATION_SIZE`` numbers)."""
    own = obs.seat
    other = 1 - own
    lines = len(LINES)
    bridges = [0.0] * (2 * lines)
    for line, seat in obs.bridges.items():
        bridges[_LINE_INDEX[line] + (0 if seat == own else lines)] = 1.0
    control = [0.0] * (2 * _ISLANDS)
    for island, seat in obs.controlled.items():
        control[ISLAND_INDEX[island] + (0 if seat == own else _ISLANDS)] = 1.0
    rounds = [0.0, 0.0, 0.0]
    rounds[min(max(obs.round, 1), 3) - 1] = 1.0
    return [
        *bridges,
        *control,
        *_counts(obs.hand),
        *_counts(obs.open_cards[own]),
        *_counts(obs.open_cards[other]),
        *_counts(obs.faceup),
        *_counts(obs.played_cards),
        *_counts(obs.own_facedown_discards),
        *rounds,
        1.0 if obs.to_move == own else 0.0,
        float(obs.points[own]),
        float(obs.points[other]),
        float(obs.supply[own]),
        float(obs.supply[other]),
        float(len(obs.hand)),
        float(obs.opponent_hand_size),
        float(obs.deck_size),
        float(obs.opponent_facedown_count),
        float(obs.final_turns),
        float(obs.opponent_passed),
        float(obs.turn_played_card),
        float(obs.turn_discarded),
        float(obs.variant.strategic),
        float(obs.variant.tactical),
        float(obs.is_finished),
    ]
