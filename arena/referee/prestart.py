"""The prestart: whether the next bots launch while the current half plays, decided here only.

A launch costs a bot ~100 ms of CPU before its Hello. While a half plays, the
referee and one bot at a time ping-pong, so a second CPU is mostly idle:
launching the next half's bots (or the next match's first half's) then costs no
wall time, and the next half starts at once. ``decide_prestart`` says whether a
launch may go ahead of its turn, and why; ``halves``, ``match_chain`` and the
executors only carry out what it says.

- Off on one CPU: the launch would share that CPU with the game being played, and
  the bots' clocks (wall time) would pay for it.
- Off for a remote bot: its owner would be asked to serve two seats at once, and
  its process runs on the owner's machine, where there is no launch to hide.
- Off where the executor is told so (an A/B in a benchmark).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from arena.referee.botdir import REMOTE_RUNTIME
from arena.referee.types import BotSpec

ON = "a spare CPU: the launch overlaps the half being played at no wall time"
ONE_CPU = "one CPU: the launch would share it with the half being played and slow its bots' clocks"
REMOTE = "a remote bot: its owner would serve two seats at once, and it has no launch here to hide"
NOT_WANTED = "turned off for this executor"


@dataclass(frozen=True, slots=True)
class Prestart:
    """Whether a half's bots are launched while the half before it plays, and why."""

    on: bool
    reason: str


def decide_prestart(*, cpus: int, bots: Iterable[BotSpec] = (), wanted: bool = True) -> Prestart:
    """Whether ``bots`` (the half to launch) may be launched while another half plays,
    on a worker that may use ``cpus`` CPUs; ``wanted=False`` turns it off regardless."""
    if cpus < 1:
        raise ValueError(f"a worker has at least 1 CPU, not {cpus}")
    if not wanted:
        return Prestart(False, NOT_WANTED)
    if any(bot.runtime == REMOTE_RUNTIME for bot in bots):
        return Prestart(False, REMOTE)
    if cpus == 1:
        return Prestart(False, ONE_CPU)
    return Prestart(True, ON)
