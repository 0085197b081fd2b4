"""Single-observer information-set Monte Carlo tree search (SO-ISMCTS).

Cowling, Powley and Whitehouse (2012), "Information Set Monte Carlo Tree
Search". One tree for the deciding seat, its nodes keyed by the actions
taken from the decision as that seat would see them. Every iteration:

1. samples a full state consistent with the observation
   (``kahuna_bot.sampling``: the unseen cards, uniformly);
2. descends the tree with actions legal *in that sample*, choosing by UCB1
   with availability counts (a child's exploration term counts the
   iterations in which it was legal, not its parent's visits);
3. adds one child, then plays the sample to the end with the playout
   policy (new rounds dealt from a random reshuffle);
4. backs up 1 / 0.5 / 0 (win / draw / loss) for the seat that chose each
   edge.

The opponent's face-down discards are hidden from the decider, so they
share one child (``HIDDEN_DISCARD``) whose card is drawn in each sample.
The move played is the root's most visited legal child.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kahuna_bot import greedy, greedy_masks
from kahuna_bot.sampling import InfoStateSampler

from arena.kahuna import (
    Action,
    ActionType,
    Observation,
    State,
    apply_legal,
    legal_actions,
    start_round,
)

# A tree edge is keyed by its action's ``code`` (four small ints: a cheap hash);
# the opponent's face-down discard, as the decider sees it, is one key for every card.
Key = tuple[int, int, int, int]
HIDDEN_DISCARD: Key = (-2, -2, -2, -2)


class Node:
    __slots__ = ("available", "children", "seat", "visits", "wins")

    def __init__(self, seat: int) -> None:
        self.seat = seat  # the seat that chose the edge into this node
        self.children: dict[Key, Node] = {}
        self.visits = 0
        self.wins = 0.0
        self.available = 1


Playout = Callable[[State, random.Random], State]


def reshuffle(state: State, rng: random.Random) -> State:
    """R6: the next round dealt from a uniformly shuffled discard pile."""
    order = list(state.reshuffle_cards)
    rng.shuffle(order)
    return start_round(state, order)


def random_playout(state: State, rng: random.Random) -> State:
    """Uniformly random legal actions to the end of the game."""
    choice = rng.choice
    while not state.is_finished:
        if state.needs_reshuffle:
            state = reshuffle(state, rng)
            continue
        state = apply_legal(state, choice(legal_actions(state)))
    return state


_USELESS = (ActionType.DISCARD, ActionType.PASS)
_TRIES = 4  # random picks before filtering the legal actions


def eager_choice(legal: Sequence[Action], rng: random.Random) -> Action:
    """A uniformly random action among those that are not a face-down discard or a
    pass, if any (else among all): a few random picks first, kept if useful (the
    same distribution as filtering, and most positions have few useless actions)."""
    uniform = rng.random
    count = len(legal)
    for _ in range(_TRIES):
        action = legal[int(uniform() * count)]
        if action.type not in _USELESS:
            return action
    useful = [a for a in legal if a.type not in _USELESS]
    return useful[int(uniform() * len(useful))] if useful else legal[int(uniform() * count)]


def eager_playout(state: State, rng: random.Random) -> State:
    """Random, but never a face-down discard or a pass while anything else is legal.

    Random play throws cards away (discard) and stalls (pass) far more than
    any sensible player; leaving those out makes playouts shorter and their
    results closer to real games, at the same cost per action.
    """
    while not state.is_finished:
        if state.needs_reshuffle:
            state = reshuffle(state, rng)
            continue
        state = apply_legal(state, eager_choice(legal_actions(state), rng))
    return state


def round_playout(state: State, rng: random.Random) -> State:
    while not state.is_finished and not state.needs_reshuffle:
        state = apply_legal(state, eager_choice(legal_actions(state), rng))
    return state


GREEDY_TURNS = 2  # turns a greedy playout plays: the rest of this one and the reply
# How often a greedy playout plays an eager random action instead: 0, as measured
# (benchmarks/house_bots.py duel at 10 ms of CPU per decision against greedy, 90 deal
# pairs: 0.772 with 0, 0.689 with 0.1); the samples already vary the playouts.
GREEDY_EPSILON = 0.0


def greedy_playout(
    state: State,
    rng: random.Random,
    *,
    turns: int = GREEDY_TURNS,
    epsilon: float = GREEDY_EPSILON,
) -> State:
    """Both seats play the greedy evaluation's choice (``kahuna_bot.greedy_masks``: the
    same choices as ``kahuna_bot.greedy``, faster), with
    probability ``epsilon`` an ``eager`` random action instead, for ``turns`` turns
    (the one under way counts as the first) or to the end of the round, whichever
    first (then ``reward`` estimates from the board).

    Random playouts model the opponent as a player who throws cards away; the
    greedy one answers a move the way a sensible player would (captures back,
    removes a threatening bridge), which is what a one-ply choice misses.
    """
    played = 0
    mover = state.to_move
    while not state.is_finished and not state.needs_reshuffle:
        if state.to_move != mover:
            played += 1
            if played >= turns:
                break
            mover = state.to_move
        legal = legal_actions(state)
        if epsilon and rng.random() < epsilon:
            action = eager_choice(legal, rng)
        else:
            action = greedy_masks.choose(state, legal)
        state = apply_legal(state, action)
    return state


PLAYOUTS: dict[str, Playout] = {
    "random": random_playout,
    "eager": eager_playout,
    "round": round_playout,
    "greedy": greedy_playout,
}

# What an island held at a round's end is worth in points still to come (R6:
# 2 for leading after round 2, the difference after round 3), and how sure a
# lead of one point makes a win: a logistic in the estimated point margin.
CONTROL_WEIGHT = {1: 0.6, 2: 0.8, 3: 1.0}
MARGIN_SCALE = 1.5


# Mid-round, the board as the greedy evaluation values it (an island held is
# greedy.CONTROL_VALUE), in points: POSITION_POINTS points per CONTROL_VALUE.
POSITION_POINTS = 0.6


def reward(state: State, seat: int) -> float:
    """1 / 0.5 / 0 for a finished game; otherwise an estimate from the points and
    the board (logistic in the expected margin): between rounds the islands held,
    mid-round the greedy evaluation's value of the board (progress and threats too)."""
    outcome = state.outcome
    if outcome is not None:
        if outcome.winner is None:
            return 0.5
        return 1.0 if outcome.winner == seat else 0.0
    points = state.points
    weight = CONTROL_WEIGHT[state.round]
    if state.needs_reshuffle:
        held = list(state.controlled.values())
        board = float(held.count(seat) - held.count(1 - seat))
    else:
        masks = state.bridge_masks
        value = greedy_masks.position_value(masks[seat], masks[1 - seat], 0)
        board = POSITION_POINTS * value / greedy.CONTROL_VALUE
    margin = points[seat] - points[1 - seat] + weight * board
    return 1.0 / (1.0 + math.exp(-margin / MARGIN_SCALE))


@dataclass(frozen=True)
class SearchResult:
    action: Action
    iterations: int
    seconds: float
    root_visits: dict[str, int]


def _key(action: Action, seat: int, observer: int) -> Key:
    if seat != observer and action.type is ActionType.DISCARD:
        return HIDDEN_DISCARD
    return action.code


def search(
    observation: Observation,
    legal: Sequence[Action],
    rng: random.Random,
    *,
    seconds: float,
    max_iterations: int | None = None,
    playout: Playout = eager_playout,
    exploration: float = 0.7,
    clock: Callable[[], float] = time.perf_counter,
    favourite: Action | None = None,
    bias: float = 0.0,
) -> SearchResult:
    """The action to play after ``max_iterations`` iterations or ``seconds`` of ``clock``
    (wall time by default; a benchmark passes ``time.process_time`` to give every
    contender the same CPU), which first."""
    started = clock()
    if len(legal) == 1:
        return SearchResult(legal[0], 0, 0.0, {str(legal[0]): 0})
    observer = observation.seat
    sampler = InfoStateSampler(observation, rng=rng)
    root = Node(1 - observer)
    allowed = {action.code for action in legal}
    favoured = favourite.code if favourite is not None and bias else None
    deadline = started + seconds
    iterations = 0
    log, sqrt = math.log, math.sqrt
    while max_iterations is None or iterations < max_iterations:
        if iterations and clock() >= deadline:
            break
        iterations += 1
        state = sampler.sample()
        node = root
        path = [root]
        while True:
            if state.is_finished:
                break
            if state.needs_reshuffle:
                state = reshuffle(state, rng)
                continue
            mover = state.to_move
            assert mover is not None
            actions = legal_actions(state)
            if node is root:
                actions = tuple(a for a in actions if a.code in allowed)
            options: dict[Key, list[Action]] = {}
            for action in actions:
                options.setdefault(_key(action, mover, observer), []).append(action)
            children = node.children
            untried = [key for key in options if key not in children]
            if untried:
                key = untried[int(rng.random() * len(untried))]
                child = children[key] = Node(mover)
                for other in options:
                    if other in children and other != key:
                        children[other].available += 1
                node = child
                path.append(node)
                state = apply_legal(state, rng.choice(options[key]))
                state = playout(state, rng)
                break
            best_key: Key | None = None
            best = -1.0
            for key in options:
                child = children[key]
                child.available += 1
                value = child.wins / child.visits + exploration * sqrt(
                    log(child.available) / child.visits
                )
                if key == favoured and node is root:
                    value += bias / (child.visits + 1)
                if value > best:
                    best, best_key = value, key
            assert best_key is not None
            node = children[best_key]
            path.append(node)
            choices = options[best_key]
            state = apply_legal(state, choices[0] if len(choices) == 1 else rng.choice(choices))
        rewards = (reward(state, 0), reward(state, 1))
        for visited in path:
            visited.visits += 1
            visited.wins += rewards[visited.seat]
    children = root.children
    visits = {a: children[a.code].visits for a in legal if a.code in children}
    if not visits:  # no iteration ran (a zero budget): the first legal action
        return SearchResult(legal[0], iterations, clock() - started, {})
    action = max(visits, key=lambda a: (visits[a], children[a.code].wins))
    return SearchResult(
        action=action,
        iterations=iterations,
        seconds=clock() - started,
        root_visits={str(a): n for a, n in visits.items()},
    )
