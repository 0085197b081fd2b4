"""The data directory's spectator delay: what `arena serve` runs with, kept for every
local reader that publishes games (`arena export`).

`arena serve --spectator-delay-s S` stores S; a server started without the flag
runs with the stored delay, and `arena export` leaves out the games that ended
within it unless told otherwise. Asking for a shorter delay than the stored one
is refused, naming it, unless the caller says so explicitly (``allow_shorter``):
a second server on the same directory, or an export, cannot quietly show what
the running server hides. A server that lowers the delay leaves the longer one
held (``held_s``) until every game played under it is past it (``held_until``):
an export keeps those games out as long as the longer delay promised.

Kept in ``user_limits`` under scope ``SERVE_SCOPE`` (no user can have that name,
and the per-user limits read only their own names), in whole milliseconds,
rounded up: the stored delay is never shorter than the one served.
"""

from __future__ import annotations

import math
import sqlite3
import time
from dataclasses import dataclass

from arena.store.db import Store, utc_now

SERVE_SCOPE = "#serve"
"""The ``user_limits`` scope of the server's settings (not a user name: ``#`` is refused)."""
_DELAY, _HELD, _UNTIL = "spectator_delay_ms", "held_delay_ms", "held_until_ms"


class ShorterDelayError(ValueError):
    """A delay shorter than the data directory's, asked for without saying so."""


@dataclass(frozen=True, slots=True)
class ServedDelay:
    """The delay the last `arena serve` ran with, and a longer one before it still held
    for the games played under it until ``held_until`` (epoch seconds)."""

    delay_s: float = 0.0
    held_s: float = 0.0
    held_until: float = 0.0

    def in_force(self, now: float) -> float:
        """The delay a publisher of games must keep at ``now``."""
        return max(self.delay_s, self.held_s if now < self.held_until else 0.0)


def _ms(seconds: float) -> int:
    return math.ceil(round(seconds * 1000, 6))


def shorter_problem(asked_s: float, stored_s: float, flag: str) -> str | None:
    """Why ``asked_s`` may not be used over the stored ``stored_s`` (None: it may)."""
    if _ms(asked_s) >= _ms(stored_s):
        return None
    return (
        f"--spectator-delay-s {asked_s:g} is shorter than this data directory's spectator"
        f" delay of {stored_s:g} seconds (stored by arena serve): games that ended within"
        f" it are not public yet; ask for {stored_s:g} or more, or give {flag} to use"
        f" {asked_s:g} anyway"
    )


def _refuse_shorter(asked_s: float, stored_s: float, allow_shorter: bool, flag: str) -> None:
    """ShorterDelayError (``shorter_problem``'s words) for ``asked_s`` under ``stored_s``,
    unless ``allow_shorter``."""
    problem = None if allow_shorter else shorter_problem(asked_s, stored_s, flag)
    if problem is not None:
        raise ShorterDelayError(problem)


def export_delay(
    asked_s: float | None,
    stored: ServedDelay,
    now: float,
    *,
    allow_shorter: bool = False,
    flag: str = "--allow-shorter-delay",
) -> float:
    """The delay an export keeps: ``asked_s``, or the stored one in force when None;
    ShorterDelayError naming the stored one for a shorter ``asked_s`` without
    ``allow_shorter``."""
    in_force = stored.in_force(now)
    if asked_s is None:
        return in_force
    _refuse_shorter(asked_s, in_force, allow_shorter, flag)
    return asked_s


def next_served(
    asked_s: float | None,
    stored: ServedDelay,
    now: float,
    *,
    allow_shorter: bool = False,
    flag: str = "--allow-shorter-delay",
) -> ServedDelay:
    """What a server started at ``now`` runs with (``delay_s``) and leaves stored:
    ``asked_s`` (None: the stored delay); ShorterDelayError for one shorter than the
    stored delay without ``allow_shorter``. Lowering it holds the old delay until the
    games played under it are past it; holds that ran out, or that the new delay
    covers, are dropped (two holds are kept as one, the longer delay to the later end)."""
    if asked_s is None:
        asked_s = stored.delay_s
    _refuse_shorter(asked_s, stored.delay_s, allow_shorter, flag)
    holds = [(stored.delay_s, now + stored.delay_s), (stored.held_s, stored.held_until)]
    holds = [(d, until) for d, until in holds if d > asked_s and until > now]
    if not holds:
        return ServedDelay(asked_s)
    return ServedDelay(asked_s, max(d for d, _ in holds), max(until for _, until in holds))


def _read(db: sqlite3.Connection) -> ServedDelay:
    rows = db.execute(
        "SELECT name, value FROM user_limits WHERE scope = ?", (SERVE_SCOPE,)
    ).fetchall()
    values = {row[0]: int(row[1]) for row in rows}
    return ServedDelay(
        values.get(_DELAY, 0) / 1000, values.get(_HELD, 0) / 1000, values.get(_UNTIL, 0) / 1000
    )


def served_delay(store: Store) -> ServedDelay:
    """The data directory's stored delay (all 0 when no server has stored one)."""
    with store.reading() as db:
        return _read(db)


def serve_with_delay(
    store: Store,
    asked_s: float | None,
    *,
    allow_shorter: bool = False,
    flag: str = "--allow-shorter-delay",
    now: float | None = None,
) -> float:
    """Check ``asked_s`` against the stored delay and store what the server will run
    with (``next_served``), in one transaction: two servers starting at once are
    checked one after the other. The delay to serve with; ShorterDelayError as
    ``next_served``."""
    with store.transaction() as db:
        at = time.time() if now is None else now
        served = next_served(asked_s, _read(db), at, allow_shorter=allow_shorter, flag=flag)
        stamp = utc_now()
        for name, seconds in (
            (_DELAY, served.delay_s),
            (_HELD, served.held_s),
            (_UNTIL, served.held_until),
        ):
            db.execute(
                "INSERT INTO user_limits (scope, name, value, set_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (scope, name) DO UPDATE SET value = excluded.value,"
                " set_at = excluded.set_at",
                (SERVE_SCOPE, name, _ms(seconds), stamp),
            )
    return served.delay_s
