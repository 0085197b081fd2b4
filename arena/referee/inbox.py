"""Waiting for bots: turns the match's arrival queue into judged verdicts.

Arrivals from a connection that was already cut off (an old launch
generation) are dropped; a stream that closes becomes ``Ended`` with the
process's exit status if it exits within a short grace; a process found
dead while the referee waits becomes ``Ended`` too; the awaited bot's
deadline becomes ``DeadlinePassed``. Each is judged with what that bot is
expected to send right now.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Sequence

from arena.referee.judge import (
    DeadlinePassed,
    Ended,
    Occurrence,
    Phase,
    Verdict,
    VerdictKind,
    judge,
)
from arena.referee.slots import BotSlot
from arena.server.referee_service import Arrival, ArrivalKind

POLL_S = 0.1
"""How often a waiting referee checks that the bot processes still run."""


class Inbox:
    def __init__(self, arrivals: queue.SimpleQueue[Arrival], slots: Sequence[BotSlot]) -> None:
        self.arrivals = arrivals
        self.slots = slots

    def wait(self, awaited: int | None, deadline_ns: int) -> tuple[int, Verdict] | None:
        """The first verdict that matters before ``deadline_ns``.

        That is any failure, any Hello, or the awaited slot's verdict; the
        awaited slot's deadline passing is a TIMEOUT verdict. With nothing
        awaited, None once the deadline has passed.
        """
        while True:
            occurrence = self._next(awaited, deadline_ns)
            if occurrence is None:
                return None
            verdict = judge(occurrence, self.slots[occurrence.slot].expect)
            if verdict.kind is VerdictKind.IGNORED:
                continue
            if verdict.failed or verdict.kind is VerdictKind.HELLO or occurrence.slot == awaited:
                return occurrence.slot, verdict

    def _next(self, awaited: int | None, deadline_ns: int) -> Occurrence | None:
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
                    return DeadlinePassed(awaited, self.slots[awaited].expect.allowance_ms)
            else:
                try:
                    arrival = self.arrivals.get(timeout=min(remaining_s, POLL_S))
                except queue.Empty:
                    dead = self._dead_slot()
                    if dead is not None:
                        return dead
                    continue
            occurrence = self._live(arrival)
            if occurrence is not None:
                return occurrence

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
