"""Which bot may run: a bot seen busy on its opponent's time is frozen then.

A bot's activity while its opponent is to move must not cost the opponent
time (benchmarks/noisy_neighbour.py measures what a spinning neighbour costs).
A freeze is not free, though: the kernel wakes every thread of the group to
stop it, and again to thaw it, on every change of turn. A bot that waits on
its stream for its next request costs its opponent nothing, and freezing it
buys nothing. So ``Freezer`` watches: each bot's CPU time (its cgroup's, one
read) and the time are taken as its opponent's turn starts and again as its
own starts. A bot that waits is still charged a little in between (the end of
its reply; its runtime's timers, which wake it however long it waits), a bot
that thinks about the whole turn; so a turn's CPU beyond ``BUSY_CPU_MS`` plus
``BUSY_SHARE`` of its wall time goes into a bucket that the turns under that
allowance drain (``next_level``), and a bot whose bucket holds more than
``BUSY_LEVEL_MS`` is *busy*: from then on (for the rest of that launch) it is
frozen whenever its opponent is to move, before the opponent's clock starts.
One slow wake-up does not fill the bucket; thinking a few ms on every opponent
turn does within a few turns (benchmarks/RESULTS.md has the charges measured).
A bot takes of its opponent's turns at most the allowance of each, and
``BUSY_LEVEL_MS`` more, and the whole of the one turn after which it is busy.

``to_move`` is told, before each request, which slot is to move, and acts only
when that changes (a seat often acts several times in a row). ``release``
thaws a bot whose stream closed (it must be able to exit to be judged), and
``thaw_all`` lets both run (the first game, GameOver, MatchOver, teardown).
``hold`` freezes a bot that is ready while the other starts up (each launch's
start-up is charged to its bot, so the ready one must not take its CPU), and
``hold_all`` freezes both once they have said Hello, until the first game: a
half launched ahead of its turn (``arena.referee.prestart``) waits while
another half plays, on CPUs that half's bots may share, and nothing is the
waiting bots' to run meanwhile. With
``MatchConfig.ponder`` the freezer does nothing. Remote and unsandboxed bots
(no cgroup) can be neither watched nor frozen.

A freeze the kernel does not report complete within ``FREEZE_TIMEOUT_S`` is
counted, and the match reports the count once, at its end (``report``). Each
task of the group stops itself the next time it is scheduled, before it runs
any more of the bot's code; so on a machine so loaded that a busy bot's
runnable tasks wait longer than that for a CPU, the freeze is late to be
reported but the bot does not run; a task asleep in the kernel (disk, swap)
stops when it wakes.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from arena.logs import get_logger
from arena.referee.slots import BotSlot
from arena.sandbox import BotProcess

BUSY_CPU_MS = 0.1
"""CPU a bot is allowed per turn of its opponent's (the end of its own reply, its
runtime's housekeeping) before the excess counts towards being busy."""

BUSY_SHARE = 0.02
"""CPU a bot is allowed per ms of its opponent's turn (its runtime's timers: they
wake it however long the turn), beside ``BUSY_CPU_MS``."""

BUSY_LEVEL_MS = 4.0
"""Excess CPU over the allowances, summed over turns and drained by turns under
them, beyond which a bot is busy."""


def next_level(level_ms: float, cpu_ms: float, wall_ms: float) -> float:
    """The bucket after a turn of the opponent's in which the bot used ``cpu_ms`` of
    CPU over ``wall_ms``: its excess over the turn's allowance added, never below 0."""
    return max(0.0, level_ms + cpu_ms - BUSY_CPU_MS - BUSY_SHARE * wall_ms)


class Freezer:
    """Freezes the sandboxed bot that is not to move, once seen busy; owned by the match."""

    def __init__(self, slots: Sequence[BotSlot], *, enabled: bool) -> None:
        self.slots = slots
        self.enabled = enabled
        self.mover: int | None = None
        self._frozen: dict[int, BotProcess] = {}  # slot -> the process this froze
        self._busy: dict[int, BotProcess] = {}  # slot -> its launch seen busy off its turn
        self._off_turn_from: dict[int, tuple[BotProcess, float, float]] = {}
        """slot -> its process, its CPU ms and the time (s) as its opponent's turn started."""
        self._level: dict[int, tuple[BotProcess, float]] = {}
        """slot -> its process and its bucket (ms, ``next_level``)."""
        self.freezes = 0
        self.incomplete = [0, 0]  # per slot: freezes not reported complete in time

    def to_move(self, slot_index: int) -> None:
        """``slot_index`` is about to get a request: let it run; freeze the other if busy."""
        if not self.enabled or slot_index == self.mover:
            return
        self.mover = slot_index
        if slot_index in self._frozen:
            self._thaw(slot_index)
        else:
            self._judge_off_turn(slot_index)
        other = 1 - slot_index
        process = self.slots[other].process
        if not isinstance(process, BotProcess):
            return  # remote or gone: nothing to watch or freeze
        if self._busy.get(other) is process:
            if not process.freeze(True):
                self.incomplete[other] += 1
            self._frozen[other] = process
            self.freezes += 1
            return
        cpu_ms = process.cpu_time_ms()
        if cpu_ms is not None:
            self._off_turn_from[other] = (process, cpu_ms, time.monotonic())

    def _judge_off_turn(self, slot_index: int) -> None:
        """The mover's CPU during its opponent's turn that just ended, into its bucket:
        over ``BUSY_LEVEL_MS``, it is frozen on its opponent's turns from now on."""
        started = self._off_turn_from.pop(slot_index, None)
        process = self.slots[slot_index].process
        if started is None or started[0] is not process or not isinstance(process, BotProcess):
            return
        cpu_ms = process.cpu_time_ms()
        if cpu_ms is None:
            return
        cpu_ms -= started[1]
        wall_ms = (time.monotonic() - started[2]) * 1000
        held = self._level.get(slot_index)
        level = held[1] if held is not None and held[0] is process else 0.0
        level = next_level(level, cpu_ms, wall_ms)
        self._level[slot_index] = (process, level)
        if level > BUSY_LEVEL_MS:
            self._busy[slot_index] = process
            get_logger(bot=self.slots[slot_index].name).info(
                "bot_busy_off_turn",
                cpu_ms=round(cpu_ms, 3),
                wall_ms=round(wall_ms, 3),
                level_ms=round(level, 3),
            )

    def is_busy(self, slot_index: int) -> bool:
        """Whether the slot's current launch was seen busy on its opponent's time."""
        process = self.slots[slot_index].process
        return process is not None and self._busy.get(slot_index) is process

    def release(self, slot_index: int) -> None:
        """The slot's bot is ending (its stream closed): it runs, and is not watched."""
        self._off_turn_from.pop(slot_index, None)
        if slot_index in self._frozen:
            self._thaw(slot_index)

    def hold_all(self) -> None:
        """Freeze every sandboxed bot until ``thaw_all`` (launched, said Hello, waiting for
        the first game of its half)."""
        for slot in self.slots:
            self.hold(slot.index)

    def hold(self, slot_index: int) -> None:
        """Freeze ``slot_index``'s sandboxed bot until ``thaw_all``: it is ready while the
        other starts up, whose start-up time is charged to it, so it must not take the CPU
        that start-up needs."""
        process = self.slots[slot_index].process
        if self.enabled and isinstance(process, BotProcess) and slot_index not in self._frozen:
            process.freeze(True)
            self._frozen[slot_index] = process

    def thaw_all(self) -> None:
        """Both bots run again (before GameOver, MatchOver and teardown)."""
        self.mover = None
        self._off_turn_from.clear()
        for slot_index in list(self._frozen):
            self._thaw(slot_index)

    def _thaw(self, slot_index: int) -> None:
        process = self._frozen.pop(slot_index)
        if process is self.slots[slot_index].process:
            process.freeze(False)

    def report(self) -> None:
        """Log, once, the freezes the kernel did not report complete in time, in words
        an operator can act on."""
        for slot_index, count in enumerate(self.incomplete):
            if count:
                get_logger(bot=self.slots[slot_index].name).warning(
                    "bot_freeze_incomplete",
                    incomplete=count,
                    freezes=self.freezes,
                    meaning="on some of its opponent's turns the bot's tasks had not all "
                    "stopped 50 ms after the freeze (each stops when next scheduled, "
                    "before running more of its code; the referee waited those 50 ms): "
                    "the machine is overloaded, run fewer matches at once "
                    "(--concurrency, fewer workers), or the bot sleeps in the kernel "
                    "(disk, swap)",
                )
