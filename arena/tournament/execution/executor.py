"""What the tournament runner asks of whatever plays its matches: the executor interface.

The runner (``arena.tournament.orchestration.runner``) decides which matches are due and
stores what comes back; an executor plays them. It is handed a batch of
``MatchJob``, one per half of a match (``submit``), sends back what happens as
typed ``JobEvent`` messages (``next_event``) and can stop everything at once
(``cancel``). The local executor (``arena.tournament.execution.local_executor``:
worker processes on this machine, each on its own CPUs) is one; the Ray executor
(``arena.tournament.execution.ray_executor``) is another that implements the same
four methods, without touching the runner.

What the runner relies on:

- every submitted job ends with exactly one ``JobDone`` (its error, or None),
  also when whatever played it died without saying so;
- a ``GameFinished`` comes before its job's ``JobDone``, one per game played,
  in the order the games ended; a game may be reported twice across
  tournament runs (a resumed match): the store discards the second;
- ``LiveBatch`` and ``WorkerStarted`` are information only, best effort;
- ``GameRejected``: a game a node sent was refused and will be played again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.referee import GameReport, MatchConfig
from arena.referee.remote import SeatOffer
from arena.referee.types import BotSpec

LivePayload = tuple[int, str, dict[str, object]]
"""(game index, "start" | "entry", the record's head or one live entry)."""


@dataclass(frozen=True, slots=True)
class MatchJob:
    """A match's unit of work for an executor: one of its halves (``arena.referee.halves``:
    its even or odd games of paired deals, or all of an unpaired match), with its bots."""

    match_id: int
    config: MatchConfig
    first: BotSpec
    second: BotSpec
    half: int = 0  # which of the match's halves: 0 "even" or 1 "odd" (0: the only one)
    live: bool = True  # send LiveBatch events while it plays

    @property
    def key(self) -> tuple[int, int]:
        return self.match_id, self.half


@dataclass(frozen=True, slots=True)
class WorkerStarted:
    """A worker is ready: its pid and the CPUs it may run on (read back after pinning)."""

    pid: int
    cpus: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameFinished:
    """One game of a job is over (store it)."""

    match_id: int
    report: GameReport


@dataclass(frozen=True, slots=True)
class LiveBatch:
    """Live events of a job's games in progress, gathered for
    ``arena.tournament.execution.live_feed``."""

    match_id: int
    payloads: tuple[LivePayload, ...]


@dataclass(frozen=True, slots=True)
class SeatOffered:
    """A remote bot's seat in a job is open: the runner stores and publishes the offer."""

    match_id: int
    offer: SeatOffer


@dataclass(frozen=True, slots=True)
class JobDone:
    """A job is over: ``error`` is None when it played every game it was given."""

    match_id: int
    half: int
    error: str | None

    @property
    def key(self) -> tuple[int, int]:
        return self.match_id, self.half


@dataclass(frozen=True, slots=True)
class GameRejected:
    """A game a node reported failed the driver's check (``arena.tournament.execution.node_trust``):
    not stored; the executor plays it again elsewhere. The runner keeps who sent it."""

    match_id: int
    index: int
    node_ip: str
    node_id: str
    problem: str


JobEvent = WorkerStarted | GameFinished | LiveBatch | SeatOffered | GameRejected | JobDone


class MatchExecutor(Protocol):
    """Plays match jobs somewhere and reports back; the runner's only view of the workers."""

    def submit(self, jobs: Sequence[MatchJob]) -> None:
        """Start ``jobs`` (the due halves, longest expected first: start them in that order)."""

    def next_event(self, timeout_s: float) -> JobEvent | None:
        """The next event of any submitted job, waiting up to ``timeout_s``; None if none came."""

    def cancel(self) -> None:
        """Stop every job at once (Ctrl-C); their unstored games are played again on resume."""

    def close(self) -> None:
        """Wait for the workers to finish and let them go (the end of a run)."""
