"""Round-robin schedules by the circle method.

Every pairing is one match; the match itself plays its N games with seats
swapped on shared deals (the referee's business), so a schedule only says
who meets whom in which round. ``Pairing.first`` takes seat 0 in the match's
first game; the schedule balances it so that every bot starts about half its matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pairing:
    """One match of a round: ``first`` sits in seat 0 of the match's first game."""

    first: str
    second: str


@dataclass(frozen=True, slots=True)
class Round:
    """The pairings of one round and the bot sitting out (odd field), if any."""

    number: int  # 1-based
    pairings: tuple[Pairing, ...]
    bye: str | None = None


def round_robin(bots: Sequence[str]) -> tuple[Round, ...]:
    """All rounds of a single round robin: every two bots meet exactly once.

    Circle method: the first bot stays put, the others rotate one place per
    round. With an odd number of bots a phantom joins and whoever meets it
    has the bye. ``n`` bots give ``n - 1`` rounds (``n`` when ``n`` is odd).
    """
    names = list(bots)
    if len(set(names)) != len(names):
        raise ValueError("round_robin: bot names must be distinct")
    if len(names) < 2:
        raise ValueError("round_robin: need at least two bots")
    slots: list[str | None] = [*names, None] if len(names) % 2 else list(names)
    count = len(slots)
    rounds: list[Round] = []
    firsts = dict.fromkeys(names, 0)
    for round_index in range(count - 1):
        pairings: list[Pairing] = []
        bye: str | None = None
        for k in range(count // 2):
            home, away = slots[k], slots[count - 1 - k]
            if home is None or away is None:
                bye = away if home is None else home
                continue
            # Whoever has been first less often goes first: balanced starts.
            if (firsts[away], round_index % 2) < (firsts[home], 1):
                home, away = away, home
            firsts[home] += 1
            pairings.append(Pairing(home, away))
        rounds.append(Round(round_index + 1, tuple(pairings), bye))
        slots = [slots[0], slots[-1], *slots[1:-1]]
    return tuple(rounds)
