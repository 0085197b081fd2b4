"""The turn loop: every arrival of a match judged and its verdict settled, in order.

Arrivals from a connection that was already cut off (an old launch
generation) are dropped; a stream that closes becomes ``Ended`` with the
process's exit status if it exits within a short grace; a process found
dead while the referee waits becomes ``Ended`` too; the awaited bot's
deadline becomes ``DeadlinePassed``. Each is judged with what that bot is
expected to send right now.

Every path ends the same way: ``judge`` (or ``judge_echo``, the same verdict
told from a message's bytes) gives a verdict, and ``GameDriver.settle`` does
what it says. During a game most replies never reach the queue: the
endpoints' event loop thread, which reads both bots' streams, offers each
message's bytes to ``_take_raw`` and then each arrival to ``_fast``, and these
settle an accepted action of the awaited bot themselves, under ``lock`` (which
sends the next request), only while ``unsettled`` is 0: the number of
arrivals queued for the main thread and not yet judged and dealt with, so
that a bot's messages keep their order. The main thread judges everything
else. ``GAME_ENDED`` tells a waiting main thread that a game ended in the loop
thread.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence

from arena.referee.endpoint import Arrival, ArrivalKind
from arena.referee.judge import (
    DeadlinePassed,
    Ended,
    Occurrence,
    Phase,
    Verdict,
    VerdictKind,
    judge,
    judge_echo,
)
from arena.referee.play import GameDriver
from arena.referee.slots import BotSlot

POLL_S = 0.1
"""How often a waiting referee checks that the bot processes still run."""
POLL_NS = int(POLL_S * 1e9)
GAME_ENDED = Arrival(slot=-1, generation=-1, kind=ArrivalKind.STREAM_CLOSED, received_ns=0)
"""Not from a bot: the game in play ended in the endpoints' loop thread."""


class ArrivalQueue(queue.SimpleQueue[Arrival]):
    """The match's arrival queue; ``take_at_once`` may settle an arrival instead of
    queueing it (``TurnLoop._fast``)."""

    def __init__(self) -> None:
        self.take_at_once: Callable[[Arrival], bool] | None = None

    def put(self, item: Arrival, block: bool = True, timeout: float | None = None) -> None:
        take = self.take_at_once
        if item is GAME_ENDED or take is None or not take(item):
            super().put(item, block, timeout)


class TurnLoop:
    """Plays a match's games (``play``) and waits for its bots between them (``wait``):
    each arrival judged and settled, plain replies in the endpoints' loop thread."""

    def __init__(self, arrivals: ArrivalQueue, slots: Sequence[BotSlot]) -> None:
        self.arrivals = arrivals
        self.slots = slots
        self.lock = threading.Lock()
        self.unsettled = 0
        self.game: GameDriver | None = None
        arrivals.take_at_once = self._fast
        for slot in slots:
            slot.endpoint.take_raw = self._take_raw

    # ------------------------------------------------------------ endpoints' loop thread

    def _take_raw(self, slot: int, generation: int, raw: bytes, received_ns: int) -> bool:
        """Before a message is parsed: settled at once (True) if its bytes alone give the
        verdict (``judge_echo``: a legal, timely reply to the open request); anything
        else (False) is parsed and offered to ``_fast``."""
        with self.lock:
            game = self.game
            if game is None or self.unsettled:
                return False
            expect = game.answerable(slot, generation)
            if expect is None:
                return False
            verdict = judge_echo(raw, received_ns, expect)
            if verdict is None:
                return False
            self._settle_at_once(game, slot, verdict)
            return True

    def _fast(self, arrival: Arrival) -> bool:
        """An arrival settled at once (True) if it is the awaited bot's accepted action;
        anything else is queued (False) and the main thread judges it again (``judge``
        is pure: the same verdict) and deals with it."""
        with self.lock:
            game = self.game
            if game is not None and self.unsettled == 0:
                expect = game.answerable(arrival.slot, arrival.generation)
                if expect is not None:
                    verdict = judge(arrival, expect)
                    if verdict.kind is VerdictKind.ACTION:
                        self._settle_at_once(game, arrival.slot, verdict)
                        return True
            self.unsettled += 1
            return False

    def _settle_at_once(self, game: GameDriver, slot: int, verdict: Verdict) -> None:
        """Loop thread, under ``lock``: the decision, made here; wake the main thread if
        it ended the game."""
        game.settle(slot, verdict)
        if not game.waiting:
            queue.SimpleQueue.put(self.arrivals, GAME_ENDED)

    # ------------------------------------------------------------ main thread

    def play(self, game: GameDriver) -> None:
        """Play ``game`` until it is over (finished or forfeited)."""
        with self.lock:
            self.game = game
            game.advance()
        try:
            while True:
                with self.lock:
                    current = game.open_request()
                if current is None:
                    return
                deadline_ns = min(current.deadline_ns, time.monotonic_ns() + POLL_NS)
                found = self._next(current.slot, deadline_ns, current.request_id)
                if found is None:
                    continue
                occurrence, queued = found
                with self.lock:
                    try:
                        self._settle_in_game(game, occurrence)
                    finally:
                        self.unsettled -= queued
        finally:
            with self.lock:
                self.game = None

    def _settle_in_game(self, game: GameDriver, occurrence: Occurrence) -> None:
        current = game.open_request()
        if isinstance(occurrence, DeadlinePassed):
            if current is None or current.request_id != occurrence.request_id:
                return  # answered in a reader thread meanwhile
            if time.monotonic_ns() < current.deadline_ns:
                return  # only the poll interval passed
        verdict = self._judge(occurrence)
        if verdict.kind is not VerdictKind.IGNORED:
            game.settle(occurrence.slot, verdict)

    def _judge(self, occurrence: Occurrence) -> Verdict:
        """Main thread, under ``lock``: the verdict, with what it uses up consumed."""
        expect = self.slots[occurrence.slot].expect
        verdict = judge(occurrence, expect)
        expect.consume(verdict)
        return verdict

    def wait(self, awaited: int | None, deadline_ns: int) -> tuple[int, Verdict] | None:
        """The first verdict that matters before ``deadline_ns`` (outside a game).

        That is any failure, any Hello, or the awaited slot's verdict; the
        awaited slot's deadline passing is a TIMEOUT verdict. With nothing
        awaited, None once the deadline has passed.
        """
        while True:
            found = self._next(awaited, deadline_ns, 0, stop_at_wake=False)
            if found is None:
                if awaited is None:
                    return None
                continue
            occurrence, queued = found
            with self.lock:
                self.unsettled -= queued
                verdict = self._judge(occurrence)
            if verdict.kind is VerdictKind.IGNORED:
                continue
            if verdict.failed or verdict.kind is VerdictKind.HELLO or occurrence.slot == awaited:
                return occurrence.slot, verdict

    def _next(
        self, awaited: int | None, deadline_ns: int, request_id: int, stop_at_wake: bool = True
    ) -> tuple[Occurrence, int] | None:
        """The next occurrence and 1 if it came off the queue (0 otherwise); None when woken
        (``stop_at_wake``) or, with nothing awaited, when the deadline has passed."""
        while True:
            remaining_s = (deadline_ns - time.monotonic_ns()) / 1e9
            if remaining_s <= 0:
                try:
                    arrival = self.arrivals.get_nowait()
                except queue.Empty:
                    dead = self._dead_slot()
                    if dead is not None:
                        return dead, 0
                    if awaited is None:
                        return None
                    allowance_ms = self.slots[awaited].expect.clock.allowance_ms
                    return DeadlinePassed(awaited, allowance_ms, request_id), 0
            else:
                try:
                    arrival = self.arrivals.get(timeout=min(remaining_s, POLL_S))
                except queue.Empty:
                    dead = self._dead_slot()
                    if dead is not None:
                        return dead, 0
                    continue
            if arrival is GAME_ENDED:
                if stop_at_wake:
                    return None
                continue
            occurrence = self._live(arrival)
            if occurrence is not None:
                return occurrence, 1
            with self.lock:
                self.unsettled -= 1

    def _live(self, arrival: Arrival) -> Occurrence | None:
        slot = self.slots[arrival.slot]
        if arrival.generation != slot.endpoint.generation or not _watched(slot):
            return None  # from a connection already cut off
        if arrival.kind is ArrivalKind.STREAM_CLOSED:
            return Ended(slot.index, slot.exit_code_soon())
        return arrival

    def _dead_slot(self) -> Ended | None:
        for slot in self.slots:
            if _watched(slot) and slot.process is not None:
                code = slot.process.poll()
                if code is not None:
                    return Ended(slot.index, code)
        return None


def _watched(slot: BotSlot) -> bool:
    """A bot whose connection the referee relies on (or is waiting for)."""
    return slot.ready or (slot.process is not None and slot.expect.phase is Phase.AWAIT_HELLO)
