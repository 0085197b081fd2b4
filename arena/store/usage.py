"""The runner time a ladder's games used: what its fair share of time is kept in.

Pure arithmetic, shared by the running totals (``arena.store.totals``), the schema step
that fills them from the stored games (``arena.store.schema``) and the ladder's scheduler.
Time is counted in ladder rounds (each ladder match is its own round), so the same
store gives the same figures, after a restart too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

USAGE_HALF_LIFE = 100
"""The ladder's runner time used halves every this many ladder matches (rounds): an old
burst is forgotten, the recent ones count (``LadderUsage``)."""


@dataclass(frozen=True, slots=True)
class LadderUsage:
    """The runner time a version's ladder games used, what the fair share of time reads.

    Each game charges each seat its own thinking time plus half the game's time that
    neither thought (``game_charges``), as of the round of its match; ``used_ms`` is the
    sum of those charges as of round ``used_round``, each halved every
    ``USAGE_HALF_LIFE`` rounds before it (``decayed`` gives it at a later round);
    ``charged_ms`` is their plain sum over its ``games`` games.
    """

    used_ms: float = 0.0
    used_round: int = 0
    charged_ms: float = 0.0
    games: int = 0

    def at(self, round_no: int) -> float:
        """``used_ms`` as of round ``round_no`` (at or after ``used_round``)."""
        return decayed(self.used_ms, self.used_round, round_no)

    @property
    def game_ms(self) -> float | None:
        """Its mean charge per game (None before its first game)."""
        return self.charged_ms / self.games if self.games else None


def decayed(used_ms: float, since: int, round_no: int) -> float:
    """``used_ms`` counted as of round ``since``, as of round ``round_no``: halved every
    ``USAGE_HALF_LIFE`` rounds (never grown: an earlier ``round_no`` leaves it)."""
    return used_ms * math.pow(0.5, max(0, round_no - since) / USAGE_HALF_LIFE)


def add_charge(used_ms: float, since: int, charge_ms: float, round_no: int) -> tuple[float, int]:
    """``used_ms`` (as of round ``since``) with ``charge_ms`` of round ``round_no`` added, as
    of the later of the two: the same whatever order the charges come in."""
    at = max(since, round_no)
    return decayed(used_ms, since, at) + decayed(charge_ms, round_no, at), at


def _ms_between(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() * 1000


def game_charges(
    time_ms: tuple[float, float], started_at: str | None, finished_at: str
) -> tuple[float, float]:
    """What a stored game charges each seat: its own thinking time (``time_ms``) plus half
    of the game's wall time (``started_at`` to ``finished_at``, ISO) that neither seat
    thought, the game's fixed cost; without a start (no live view) its thinking only."""
    first, second = (max(0.0, float(t)) if math.isfinite(t) else 0.0 for t in time_ms)
    fixed = 0.0
    if started_at is not None:
        try:
            fixed = max(0.0, _ms_between(started_at, finished_at) - first - second)
        except ValueError:
            fixed = 0.0
    return first + fixed / 2, second + fixed / 2
