"""Matches played one after the other by one worker: a chain, each next match prestarted.

A worker that plays several matches in turn may launch each next match's first
half while the current match's last half plays (``play_in_turn``'s ``first`` and
``then``, ``arena.referee.halves``): its bots say Hello meanwhile, so that their
launch costs no wall time where the CPUs are idle during a match (a ping-pong
between the referee and one bot at a time), and the match starts at once when
its turn comes. Whether a launch goes ahead of its turn, the next half's or the
next match's, is ``arena.referee.prestart``'s to say, from the CPUs this worker
may use and the bots to launch. A finished half's processes are shut down while
the next one plays, whatever match it is of; ``play_chain`` returns once they
are all gone.

Two players use it: the local executor's single worker, with its whole batch
(``arena.tournament.execution.local_executor``), and a Ray task, with the chain of matches
the driver gave it (``arena.tournament.execution.ray_executor``), whose bots come from
its node's cache (``resolve``).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence

from arena.logs import get_logger
from arena.referee import GameReport
from arena.referee.halves import Launched, play_in_turn
from arena.referee.live import LiveHook
from arena.referee.match import StartedMatch, start_match
from arena.referee.prestart import Prestart, decide_prestart
from arena.referee.remote import SeatOffer
from arena.referee.types import BotSpec
from arena.tournament.execution.cpu_placement import usable_cpus
from arena.tournament.execution.executor import GameFinished, JobDone, MatchJob, SeatOffered
from arena.tournament.execution.live_feed import LiveSender

Put = Callable[[object], None]
"""Where a chain's events go (typed messages of ``arena.tournament.execution.executor``)."""

Resolve = Callable[[MatchJob], tuple[BotSpec, BotSpec]]
"""A match's two bots as this worker runs them (e.g. from a node's bot cache)."""

OnTurn = Callable[[tuple[MatchJob, ...], bool], None]
"""Called as a match's turn comes, with its jobs and whether its first half was prestarted."""


class MatchHooks:
    """What one match's halves report through ``put`` (games, jobs done, live events, seat
    offers), made before its first half is launched (a prestart binds them)."""

    def __init__(self, jobs: tuple[MatchJob, ...], put: Put, resolve: Resolve | None) -> None:
        self.jobs = jobs
        self.match_id = jobs[0].match_id
        self.put = put
        self.sender = LiveSender(self.match_id, put) if jobs[0].live else None
        self._resolve = resolve
        self._bots: tuple[BotSpec, BotSpec] | Exception | None = None

    def bots(self) -> tuple[BotSpec, BotSpec]:
        """The match's bots, resolved once (its prestart and its halves use the same)."""
        if self._bots is None:
            job = self.jobs[0]
            try:
                self._bots = (
                    (job.first, job.second) if self._resolve is None else self._resolve(job)
                )
            except Exception as failure:  # each of the match's halves fails with it
                self._bots = failure
        if isinstance(self._bots, Exception):
            raise self._bots
        return self._bots

    def on_game(self, report: GameReport) -> None:
        if self.sender is not None:
            self.sender.flush()
        self.put(GameFinished(self.match_id, report))

    def on_done(self, number: int, _report: object, failure: BaseException | None) -> None:
        if self.sender is not None:
            self.sender.flush()
        error = None if failure is None else f"{type(failure).__name__}: {failure}"
        self.put(JobDone(self.match_id, self.jobs[number].half, error))

    @property
    def on_event(self) -> LiveHook | None:
        return None if self.sender is None else self.sender.event

    def on_seat_offer(self, offer: SeatOffer) -> None:
        self.put(SeatOffered(self.match_id, offer))

    def start_first(self) -> StartedMatch:
        """Launch the match's first half (a prestart while the match before it plays)."""
        first, second = self.bots()
        return start_match(self.jobs[0].config, first, second,
                           on_seat_offer=self.on_seat_offer, on_event=self.on_event)  # fmt: skip

    def close(self) -> None:
        if self.sender is not None:
            self.sender.close()


def play_chain(
    groups: Sequence[tuple[MatchJob, ...]],
    put: Put,
    *,
    resolve: Resolve | None = None,
    on_turn: OnTurn | None = None,
    prestart: bool = True,
    cpus: int | None = None,
) -> None:
    """Play matches (each its jobs, one per half) one after the other: each match's halves
    in turn (``play_in_turn``), the next half's or the next match's first half launched
    while the current half plays where ``decide_prestart`` says so, for this worker's
    ``cpus`` (None: the CPUs this process may use) and the bots to launch; ``prestart``
    False turns that off (see the module docstring). A match whose bots cannot be had
    (``resolve`` raised) reports each of its halves failed, and the next match is played;
    returns once every process it launched is gone."""
    if not groups:
        return
    worker_cpus = len(usable_cpus()) if cpus is None else cpus
    log = get_logger(chain=groups[0][0].match_id)

    def decided(job: MatchJob) -> Prestart:
        decision = decide_prestart(cpus=worker_cpus, bots=(job.first, job.second), wanted=prestart)
        log.debug("prestart_decided", match_id=job.match_id, on=decision.on,
                  reason=decision.reason)  # fmt: skip
        return decision

    decisions = [decided(group[0]) for group in groups]  # each match's, once
    hooks = MatchHooks(groups[0], put, resolve)
    following: MatchHooks | None = None
    waiting: Launched = None
    closing: list[threading.Thread] = []  # finished halves shutting down, the next playing
    try:
        for number, group in enumerate(groups):
            following = (
                MatchHooks(groups[number + 1], put, resolve) if number + 1 < len(groups) else None
            )
            try:
                if on_turn is not None:
                    on_turn(group, isinstance(waiting, StartedMatch))
                try:
                    first, second = hooks.bots()
                except Exception as failure:
                    for half in range(len(group)):
                        hooks.on_done(half, None, failure)
                    waiting = None  # its prestart failed with the same error: nothing runs
                else:
                    ahead = number + 1 < len(groups) and decisions[number + 1].on
                    waiting = play_in_turn(
                        [job.config for job in group], first, second,
                        prestart=decisions[number],
                        on_done=hooks.on_done,
                        on_game=hooks.on_game,
                        on_event=hooks.on_event,
                        on_seat_offer=hooks.on_seat_offer,
                        first=waiting,
                        then=following.start_first if following is not None and ahead else None,
                        closing=closing,
                    )  # fmt: skip
            finally:
                hooks.close()
            if following is not None:
                hooks, following = following, None
    except BaseException:
        if isinstance(waiting, StartedMatch):
            waiting.close()
        if following is not None:
            following.close()
        raise
    finally:
        for thread in closing:
            thread.join()


def chain_length(waiting: int, slots: int, max_chain: int) -> int:
    """How many of the ``waiting`` matches the next task plays in turn: an even share of
    them over the cluster's ``slots`` (rounded up), at least 1 and at most ``max_chain``.
    The chains shorten as the queue drains (guided self-scheduling), so that the slots
    finish together; ``max_chain`` bounds how long a slot is kept from other tournaments
    on the cluster and how many matches wait behind one on a node."""
    return max(1, min(max_chain, math.ceil(waiting / max(1, slots))))
