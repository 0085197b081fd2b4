"""An example policy for ``arena.envs.kahuna_v0``: the same function trains and plays.

It takes what the environment's ``observe(agent)`` returns (``"observation"``,
the seat's vector; ``"action_mask"``, one flag per action index) and returns an
action index. It scores each legal action with a table of weights per action
index plus a bonus for places on lines touching islands the seat already
leans on; a learner would replace ``weights`` with trained numbers. Pure
Python, so the same code runs inside the sandbox (no numpy there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arena.kahuna.board import ISLANDS, LINE_ENDS, LINES
from arena.kahuna.encoding import ACTION_COUNT

PLACES = 2 * len(LINES)
REMOVES = PLACES + 3 * len(LINES)
DISCARDS = REMOVES + len(ISLANDS)
DRAW_FACEUP = DISCARDS + len(ISLANDS)
DRAW_DECK = DRAW_FACEUP + len(ISLANDS)


def _weights() -> list[float]:
    weights = [0.0] * ACTION_COUNT
    for index in range(ACTION_COUNT):
        if index < PLACES:
            weights[index] = 3.0
        elif index < REMOVES:
            weights[index] = 4.0
        elif index < DISCARDS:
            weights[index] = -1.0
        elif index < DRAW_DECK:
            weights[index] = 1.0
        elif index == DRAW_DECK:
            weights[index] = 0.5
    return weights


WEIGHTS = _weights()


def policy(observation: Mapping[str, Sequence[float] | Sequence[int]]) -> int:
    """The legal action of highest score (the lowest index on a tie)."""
    vector = observation["observation"]
    mask = observation["action_mask"]
    lines = len(LINES)
    best, best_score = -1, float("-inf")
    for index in range(ACTION_COUNT):
        if not mask[index]:
            continue
        score = WEIGHTS[index]
        if index < PLACES:
            line = index // 2
            own_nearby = sum(
                vector[other]
                for other in range(lines)
                if set(LINE_ENDS[other]) & set(LINE_ENDS[line])
            )
            score += 0.1 * float(own_nearby)
        if score > best_score:
            best, best_score = index, score
    return best
