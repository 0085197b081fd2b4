"""The runner time a ladder's games used: what its fair share of time is kept in.

Pure arithmetic, shared by the running totals (``arena.store.totals``), the schema step
that fills them from the stored games (``arena.store.schema``) and the ladder's scheduler.
Its clock is the ladder's own work: the sum of every charge of its games so far (``clock``),
so the same store gives the same figures, after a restart too, and a burst is forgotten
as the runner works on, not while it stands still. An owner who joins the ladder, or comes
back to it, starts from the least-used owner's time (``joining_lifts``), not from nothing.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

USAGE_HALF_LIFE_MS = 7_200_000.0
"""An owner's runner time used counts half as much once the ladder has charged this much
more (two hours of its games' time, everyone's together): an old burst is forgotten, the
recent ones count (``LadderUsage``)."""


@dataclass(frozen=True, slots=True)
class LadderUsage:
    """The runner time a version's ladder games used, what the fair share of time reads.

    Each game charges each seat its own thinking time and start-up plus half the game's
    time that neither thought (``game_charges``), as of the ladder's clock when it is stored (the
    charges of every game before it); ``used_ms`` is the sum of those charges as of clock
    ``used_at``, each halved for every ``USAGE_HALF_LIFE_MS`` the clock went on since
    (``at`` gives it at a later clock); ``charged_ms`` is their plain sum over its
    ``games`` games.
    """

    used_ms: float = 0.0
    used_at: float = 0.0
    charged_ms: float = 0.0
    games: int = 0

    def at(self, now: float) -> float:
        """``used_ms`` as of clock ``now`` (at or after ``used_at``)."""
        return decayed(self.used_ms, self.used_at, now)

    @property
    def game_ms(self) -> float | None:
        """Its mean charge per game (None before its first game)."""
        return self.charged_ms / self.games if self.games else None


def clock(usage: Iterable[LadderUsage]) -> float:
    """A ladder's clock: every charge of its games so far (``usage``: all its versions')."""
    return sum(kept.charged_ms for kept in usage)


def decayed(used_ms: float, since: float, now: float) -> float:
    """``used_ms`` counted as of clock ``since``, as of clock ``now``: halved every
    ``USAGE_HALF_LIFE_MS`` (never grown: an earlier ``now`` leaves it)."""
    return used_ms * math.pow(0.5, max(0.0, now - since) / USAGE_HALF_LIFE_MS)


def add_charge(
    used_ms: float, since: float, charge_ms: float, now: float
) -> tuple[float, float]:
    """``used_ms`` (as of clock ``since``) with ``charge_ms`` of clock ``now`` added, as of
    the later of the two: the same whatever order the charges come in."""
    at = max(since, now)
    return decayed(used_ms, since, at) + decayed(charge_ms, now, at), at


K = TypeVar("K", bound=Hashable)


def joining_lifts(
    used: Mapping[K, float], present: Collection[K], active: Collection[K]
) -> dict[K, float]:
    """How much each owner joining the ladder now is lifted by, as the Linux scheduler lifts a
    waking task's vruntime to min_vruntime: an owner ``active`` now (it has an entrant) but
    not ``present`` (the owners active at the last look; a new owner, or one back after
    having none) is raised to the lowest time (``used``, as of now) among the owners active
    then and still, if below it. Without the lift its time, nothing or what the half-life left
    of it, would be the least by far, and it would play first in every match until it caught
    up: the others' matches among themselves starved, and a burst banked by anyone who
    withdraws and returns. Nobody is lifted when nobody stayed (the ladder's first owners)."""
    stayed = [used.get(key, 0.0) for key in active if key in present]
    if not stayed:
        return {}
    floor = min(stayed)
    return {
        key: floor - used.get(key, 0.0)
        for key in active
        if key not in present and used.get(key, 0.0) < floor
    }


def _ms_between(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() * 1000


def _ms(value: float) -> float:
    return max(0.0, float(value)) if math.isfinite(value) else 0.0


def game_charges(
    time_ms: tuple[float, float],
    started_at: str | None,
    finished_at: str,
    startup_ms: tuple[float, float] = (0.0, 0.0),
) -> tuple[float, float]:
    """What a stored game charges each seat: its own thinking time (``time_ms``) and its own
    start-up before the game (``startup_ms``: launch to Hello, the referee's measure), plus
    half of the game's wall time (``started_at`` to ``finished_at``, ISO) that neither seat
    thought, the game's fixed cost; without a start (no live view) no fixed cost."""
    first, second = (_ms(t) for t in time_ms)
    launch = tuple(_ms(t) for t in startup_ms)
    fixed = 0.0
    if started_at is not None:
        try:
            fixed = max(0.0, _ms_between(started_at, finished_at) - first - second)
        except ValueError:
            fixed = 0.0
    return first + launch[0] + fixed / 2, second + launch[1] + fixed / 2
