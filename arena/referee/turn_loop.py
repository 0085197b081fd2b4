"""A match's turns: each game one task in the endpoints' event loop, settling every
occurrence in order.

A game's turn, top to bottom (docs/design/ARCHITECTURE.md has the picture):

1. ``GameDriver.advance`` (``arena.referee.play``) writes the request for the seat to
   move and starts that seat's ``Clock`` (``arena.referee.game``, the one place that
   knows deadlines); the ``Freezer`` stops the other bot if it was seen busy on its
   opponent's time.
2. The endpoints (``arena.referee.endpoint``) read what the bots send, in the same
   loop thread, and hand it to the game: a message's bytes (``_take_raw``), or an
   ``Arrival`` (``_arrive``: a closed stream, a refused call). Each goes on the game's
   inbox, in the order it came.
3. The game's task (``_play``) awaits the next item of its inbox against the open
   request's deadline and judges it: a message by its bytes where they are a legal,
   timely echo (``judge_echo``; one that comes while the task waits with an empty
   inbox is handled at once by ``_take_raw``, the same code with no wake-up), else
   parsed and ``judge``d; a closed stream as
   ``Ended``, with the bot thawed and its exit awaited (a crash or a disconnect); a
   deadline that passes (``DeadlinePassed``) or a process that dies (``Ended``) are
   found by one timer (``_tick``). The verdict goes to ``GameDriver.settle``, the one
   decision, which sends the next request (step 1).

Only the game's task touches a game in play, so nothing is locked. It settles a
failure in a worker thread while it waits for it (the bot is cut off: its process
tree killed, which would stall every stream the loop serves, other matches' too);
meanwhile whatever comes waits on the inbox. The match's main thread starts a game
(``play``) and waits for its end; between games it judges what the bots sent from
``arrivals`` (``wait``: Hellos, failures).
"""

from __future__ import annotations

import asyncio
import collections
import queue
import time
from collections.abc import Sequence
from dataclasses import dataclass

from arena.referee.endpoint import Arrival, ArrivalKind, call_on_loop, parse_arrival, run_on_loop
from arena.referee.freezer import Freezer
from arena.referee.heap import frozen_for_game
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


class ArrivalQueue(queue.SimpleQueue[Arrival]):
    """What the main thread is to judge: the bots' arrivals between games."""


@dataclass(frozen=True, slots=True)
class RawMessage:
    """A message's bytes as read (within the size limit, not yet parsed)."""

    slot: int
    generation: int
    raw: bytes
    received_ns: int

    def fields(self) -> tuple[int, int, bytes, int]:
        return self.slot, self.generation, self.raw, self.received_ns


Item = RawMessage | Occurrence


class TurnLoop:
    """Plays a match's games (``play``) and waits for its bots between them (``wait``)."""

    def __init__(
        self, arrivals: ArrivalQueue, slots: Sequence[BotSlot], freezer: Freezer | None = None
    ) -> None:
        self.arrivals = arrivals
        self.slots = slots
        self.freezer = freezer
        self.game: GameDriver | None = None
        """The game in play (set and read in the loop thread only)."""
        self._inbox: collections.deque[Item] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._tick: asyncio.TimerHandle | None = None
        for slot in slots:
            slot.endpoint.take_raw = self._take_raw
            slot.endpoint.deliver = self._arrive

    # ------------------------------------------------------------ endpoints' loop thread

    def _take_raw(self, slot: int, generation: int, raw: bytes, received_ns: int) -> bool:
        """A message's bytes: taken (True) by the game in play; else (False, between
        games) the endpoint parses it and ``_arrive`` queues it.

        While the game's task waits with nothing before this message, it is handled here
        and now as the task would handle it next (``_settle_echo``): the bulk of a
        match, with no wake-up of the task per decision."""
        game = self.game
        if game is None:
            return False
        waiter = self._waiter
        if (
            self._inbox
            or waiter is None
            or waiter.done()
            or not self._settle_echo(game, slot, generation, raw, received_ns)
        ):
            self._post(RawMessage(slot, generation, raw, received_ns))
        elif game.waiting:
            self._arm(game)
        else:
            waiter.set_result(None)  # the game is over: its task ends it
        return True

    def _arrive(self, arrival: Arrival) -> None:
        """Every arrival (from any thread): the game's, or the main thread's between
        games; what an old connection still sends is dropped."""
        if arrival.generation < self.slots[arrival.slot].endpoint.generation:
            return  # from a connection already cut off
        call_on_loop(lambda: self._route(arrival))

    def _route(self, arrival: Arrival) -> None:
        if self.game is None:
            self.arrivals.put(arrival)
        else:
            self._post(arrival)

    def _post(self, item: Item) -> None:
        self._inbox.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # ------------------------------------------------------------ the game's task

    def play(self, game: GameDriver) -> None:
        """Play ``game`` until it is over (finished or forfeited); main thread. The heap
        alive as it begins is out of the garbage collector's walks meanwhile
        (``arena.referee.heap``)."""
        with frozen_for_game():
            run_on_loop(self._play(game))

    async def _play(self, game: GameDriver) -> None:
        self.game = game
        while True:  # what came before the game, first and in order
            try:
                self._inbox.append(self.arrivals.get_nowait())
            except queue.Empty:
                break
        try:
            game.advance()
            while game.waiting:
                if not self._inbox:
                    await self._wait(game)
                    continue
                item: Item = self._inbox.popleft()
                if isinstance(item, RawMessage):
                    if self._settle_echo(game, *item.fields()):
                        continue
                    item = parse_arrival(item.slot, item.generation, item.raw, item.received_ns)
                occurrence = await self._live_in_game(game, item)
                if occurrence is None:
                    continue
                verdict = self._judge(occurrence)
                if verdict.failed:  # a cut-off kills a process tree: not in the loop thread
                    await asyncio.to_thread(game.settle, occurrence.slot, verdict)
                elif verdict.kind is not VerdictKind.IGNORED:
                    game.settle(occurrence.slot, verdict)
        finally:
            self.game = None
            if self._tick is not None:
                self._tick.cancel()
                self._tick = None
            while self._inbox:  # for the main thread, judged between games
                left = self._inbox.popleft()
                if isinstance(left, RawMessage):
                    left = parse_arrival(left.slot, left.generation, left.raw, left.received_ns)
                if isinstance(left, Arrival):
                    self.arrivals.put(left)

    async def _wait(self, game: GameDriver) -> None:
        """Wait until something is posted (the timer armed for the open request)."""
        self._arm(game)
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        try:
            await waiter
        finally:
            self._waiter = None

    def _arm(self, game: GameDriver) -> None:
        """Have ``_tick`` run by the open request's deadline and within ``POLL_S``."""
        slot = game.open_slot
        if slot is None or game.over:
            return
        deadline_s = self.slots[slot].expect.clock.deadline_ns / 1e9
        tick = self._tick
        if tick is not None:
            if tick.when() <= deadline_s:
                return  # it comes first, and arms again
            tick.cancel()
        loop = asyncio.get_running_loop()
        self._tick = loop.call_at(min(deadline_s, loop.time() + POLL_S), self._on_tick, game)

    def _on_tick(self, game: GameDriver) -> None:
        """The timer: a deadline that passed, a process that died, go on the inbox."""
        self._tick = None
        if self.game is not game:
            return
        current = game.open_request()
        dead = self._dead_slot()
        if dead is not None:
            self._post(dead)  # the task arms the timer again as it next waits
        elif current is not None and time.monotonic_ns() >= current.deadline_ns:
            slot = self.slots[current.slot]
            waited_ms = slot.expect.clock.allowance_ms
            limits = slot.limits_words()
            self._post(DeadlinePassed(current.slot, waited_ms, current.request_id, limits))
        else:
            self._arm(game)

    def _settle_echo(
        self, game: GameDriver, slot: int, generation: int, raw: bytes, received_ns: int
    ) -> bool:
        """Settled (True) if a message's bytes alone give the verdict: a legal, timely
        echo of the open request's (``judge_echo``: the bulk of a match, no parse)."""
        expect = game.answerable(slot, generation)
        if expect is None:
            return False
        verdict = judge_echo(raw, received_ns, expect)
        if verdict is None:
            return False
        game.settle(slot, verdict)
        return True

    async def _live_in_game(self, game: GameDriver, item: Occurrence) -> Occurrence | None:
        """``item`` as the game judges it; None if it no longer matters (a connection
        cut off, a deadline of a request answered meanwhile)."""
        if isinstance(item, DeadlinePassed):
            current = game.open_request()
            if current is None or current.request_id != item.request_id:
                return None  # answered meanwhile
            return item if time.monotonic_ns() >= current.deadline_ns else None
        if isinstance(item, Ended):
            return item if _watched(self.slots[item.slot]) else None
        slot = self.slots[item.slot]
        if item.generation != slot.endpoint.generation or not _watched(slot):
            return None
        if item.kind is ArrivalKind.STREAM_CLOSED:
            self._thaw(slot.index)  # a frozen bot (or its sandbox) cannot finish exiting
            # the exit awaited in a worker thread: the loop goes on serving the other bot
            return slot.ended(await asyncio.to_thread(slot.exit_code_soon))
        return item

    # ------------------------------------------------------------ between games

    def _judge(self, occurrence: Occurrence) -> Verdict:
        """The verdict, with what it uses up consumed."""
        expect = self.slots[occurrence.slot].expect
        verdict = judge(occurrence, expect)
        expect.consume(verdict)
        return verdict

    def wait(self, awaited: int | None, deadline_ns: int) -> tuple[int, Verdict] | None:
        """The first verdict that matters before ``deadline_ns`` (outside a game; main
        thread).

        That is any failure, any Hello, or the awaited slot's verdict; the
        awaited slot's deadline passing is a TIMEOUT verdict. With nothing
        awaited, None once the deadline has passed.
        """
        while True:
            occurrence = self._next_between(awaited, deadline_ns)
            if occurrence is None:
                return None
            verdict = self._judge(occurrence)
            if verdict.kind is VerdictKind.IGNORED:
                continue
            if verdict.failed or verdict.kind is VerdictKind.HELLO or occurrence.slot == awaited:
                return occurrence.slot, verdict

    def _next_between(self, awaited: int | None, deadline_ns: int) -> Occurrence | None:
        """The next occurrence; None, with nothing awaited, once the deadline has passed."""
        while True:
            remaining_s = (deadline_ns - time.monotonic_ns()) / 1e9
            try:
                if remaining_s <= 0:
                    arrival = self.arrivals.get_nowait()
                else:
                    arrival = self.arrivals.get(timeout=min(remaining_s, POLL_S))
            except queue.Empty:
                dead = self._dead_slot()
                if dead is not None:
                    return dead
                if remaining_s > 0:
                    continue
                if awaited is None:
                    return None
                slot = self.slots[awaited]
                allowance_ms = slot.expect.clock.allowance_ms
                return DeadlinePassed(awaited, allowance_ms, limits=slot.limits_words())
            slot = self.slots[arrival.slot]
            if arrival.generation != slot.endpoint.generation or not _watched(slot):
                continue  # from a connection already cut off
            if arrival.kind is ArrivalKind.STREAM_CLOSED:
                self._thaw(slot.index)
                return slot.ended(slot.exit_code_soon())
            return arrival

    def _thaw(self, slot_index: int) -> None:
        if self.freezer is not None:
            self.freezer.release(slot_index)

    def _dead_slot(self) -> Ended | None:
        for slot in self.slots:
            if _watched(slot) and slot.process is not None:
                code = slot.process.poll()
                if code is not None:
                    return slot.ended(code)
        return None


def _watched(slot: BotSlot) -> bool:
    """A bot whose connection the referee relies on (or is waiting for)."""
    return slot.ready or (slot.process is not None and slot.expect.phase is Phase.AWAIT_HELLO)
