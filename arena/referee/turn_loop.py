"""A match's turns: every arrival settled in order, in one of two places.

A game's turn, top to bottom (docs/design/ARCHITECTURE.md has the picture):

1. ``GameDriver.advance`` (``arena.referee.play``) writes the request for the seat to
   move and starts that seat's ``Clock`` (``arena.referee.game``, the one place that
   knows deadlines); the ``Freezer`` stops the other bot if it was seen busy on its
   opponent's time.
2. The endpoints' event loop thread (``arena.referee.endpoint``) reads the reply and
   offers it here: its bytes to ``_take_raw``, else the ``Arrival`` to ``_arrive``.
3. While the game runs plainly, the awaited bot's accepted action (``judge_echo`` or
   ``judge``) is settled right there (``GameDriver.settle``: applied, and the next
   request goes out, step 1): no thread hand-off per decision. A late reply to a
   request that timed out (no fault, once) is used up there too.
4. Anything else during a game (a failure, a message out of turn, a closed stream)
   *hands the game over* to the match's main thread: from then on every arrival of
   that game is queued, and the main thread judges (``judge`` is pure: again, where
   the loop thread looked at it first) and settles each in order. What an old
   connection still sends is dropped. A game is handed over at most once, and only when it is
   about to be forfeited (or arrivals were already waiting as it started), so this
   costs nothing in the bulk of a match.
5. The main thread waits on that queue, watching the clock and the processes: a
   deadline that passes (``DeadlinePassed``) and a process that dies or closes its
   stream (``Ended``, judged with the bot thawed) are settled there the same way.

Every settle runs under ``lock``. Between games the main thread judges everything
(``wait``: Hellos, failures).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Sequence

from arena.referee.endpoint import Arrival, ArrivalKind
from arena.referee.freezer import Freezer
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
    """What the main thread is to judge: arrivals between games, and a handed-over
    game's (``TurnLoop``)."""


class TurnLoop:
    """Plays a match's games (``play``) and waits for its bots between them (``wait``)."""

    def __init__(
        self, arrivals: ArrivalQueue, slots: Sequence[BotSlot], freezer: Freezer | None = None
    ) -> None:
        self.arrivals = arrivals
        self.slots = slots
        self.freezer = freezer
        self.lock = threading.Lock()
        self.game: GameDriver | None = None
        self.handed_over = False
        """The game's arrivals go to the main thread (step 4 of the module's docstring)."""
        for slot in slots:
            slot.endpoint.take_raw = self._take_raw
            slot.endpoint.deliver = self._arrive

    # ------------------------------------------------------------ endpoints' loop thread

    def _take_raw(self, slot: int, generation: int, raw: bytes, received_ns: int) -> bool:
        """Before a message is parsed: settled (True) if its bytes alone give the verdict
        (``judge_echo``: a legal, timely reply to the open request); else (False) it is
        parsed and comes to ``_arrive``."""
        with self.lock:
            game = self.game
            if game is None or self.handed_over:
                return False
            expect = game.answerable(slot, generation)
            if expect is None:
                return False
            verdict = judge_echo(raw, received_ns, expect)
            if verdict is None:
                return False
            self._settle_here(game, slot, verdict)
            return True

    def _arrive(self, arrival: Arrival) -> None:
        """Every arrival: the awaited bot's accepted action settled here, and a late
        reply that is no fault (``IGNORED``) used up here; an old connection's leftovers
        dropped; anything else queued for the main thread (and, during a game, the game
        handed over to it)."""
        slot = self.slots[arrival.slot]
        if arrival.generation < slot.endpoint.generation:
            return  # from a connection already cut off
        with self.lock:
            game = self.game
            if game is not None and not self.handed_over and self._plain(game, arrival):
                return
            if game is not None:
                self.handed_over = True
            self.arrivals.put(arrival)

    def _plain(self, game: GameDriver, arrival: Arrival) -> bool:
        """Loop thread, under ``lock``: settled here (True) if ``arrival`` is a message of
        a connected bot that the game takes in its stride."""
        slot = self.slots[arrival.slot]
        if arrival.kind is not ArrivalKind.MESSAGE or not slot.ready:
            return False
        if arrival.generation != slot.endpoint.generation:
            return False
        verdict = judge(arrival, slot.expect)
        if verdict.kind is VerdictKind.IGNORED:
            slot.expect.consume(verdict)
            return True
        if verdict.kind is VerdictKind.ACTION and game.answerable(slot.index, arrival.generation):
            self._settle_here(game, slot.index, verdict)
            return True
        return False

    def _settle_here(self, game: GameDriver, slot: int, verdict: Verdict) -> None:
        """Loop thread, under ``lock``: an accepted action; wake the main thread if it
        ended the game."""
        game.settle(slot, verdict)
        if not game.waiting:
            self.arrivals.put(GAME_ENDED)

    # ------------------------------------------------------------ main thread

    def play(self, game: GameDriver) -> None:
        """Play ``game`` until it is over (finished or forfeited)."""
        with self.lock:
            self.game = game
            self.handed_over = not self.arrivals.empty()  # judged first, in order
            game.advance()
        try:
            while True:
                with self.lock:
                    current = game.open_request()
                if current is None:
                    return
                deadline_ns = min(current.deadline_ns, time.monotonic_ns() + POLL_NS)
                occurrence = self._next(current.slot, deadline_ns, current.request_id)
                if occurrence is None:
                    continue
                with self.lock:
                    self._settle_in_game(game, occurrence)
        finally:
            with self.lock:
                self.game = None

    def _settle_in_game(self, game: GameDriver, occurrence: Occurrence) -> None:
        current = game.open_request()
        if isinstance(occurrence, DeadlinePassed):
            if current is None or current.request_id != occurrence.request_id:
                return  # answered in the loop thread meanwhile
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
            occurrence = self._next(awaited, deadline_ns, 0, stop_at_wake=False)
            if occurrence is None:
                if awaited is None:
                    return None
                continue
            with self.lock:
                verdict = self._judge(occurrence)
            if verdict.kind is VerdictKind.IGNORED:
                continue
            if verdict.failed or verdict.kind is VerdictKind.HELLO or occurrence.slot == awaited:
                return occurrence.slot, verdict

    def _next(
        self, awaited: int | None, deadline_ns: int, request_id: int, stop_at_wake: bool = True
    ) -> Occurrence | None:
        """The next occurrence; None when woken (``stop_at_wake``) or, with nothing
        awaited, when the deadline has passed."""
        while True:
            remaining_s = (deadline_ns - time.monotonic_ns()) / 1e9
            if remaining_s <= 0:
                try:
                    arrival = self.arrivals.get_nowait()
                except queue.Empty:
                    dead = self._dead_slot()
                    if dead is not None:
                        return dead
                    if awaited is None:
                        return None
                    allowance_ms = self.slots[awaited].expect.clock.allowance_ms
                    return DeadlinePassed(awaited, allowance_ms, request_id)
            else:
                try:
                    arrival = self.arrivals.get(timeout=min(remaining_s, POLL_S))
                except queue.Empty:
                    dead = self._dead_slot()
                    if dead is not None:
                        return dead
                    continue
            if arrival is GAME_ENDED:
                if stop_at_wake:
                    return None
                continue
            occurrence = self._live(arrival)
            if occurrence is not None:
                return occurrence

    def _live(self, arrival: Arrival) -> Occurrence | None:
        slot = self.slots[arrival.slot]
        if arrival.generation != slot.endpoint.generation or not _watched(slot):
            return None  # from a connection already cut off
        if arrival.kind is ArrivalKind.STREAM_CLOSED:
            self._thaw(slot.index)  # a frozen bot (or its sandbox) cannot finish exiting
            return Ended(slot.index, slot.exit_code_soon())
        return arrival

    def _thaw(self, slot_index: int) -> None:
        if self.freezer is not None:
            with self.lock:
                self.freezer.release(slot_index)

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
