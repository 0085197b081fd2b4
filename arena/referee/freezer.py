"""Which bot may run: the bot that is not to move is frozen.

A bot's activity while its opponent is to move must not cost the opponent
time (issue 10.6: six spinning children made the opponent's decisions 1.5-2x
slower). ``Freezer`` is told, before each request, which slot is to move; only
when that changes does it thaw the mover and freeze the other bot's whole
cgroup (in Kahuna a seat often acts several times in a row, and a freeze costs
the referee a write and a wait). ``thaw_all`` lets both bots run again (GameOver,
MatchOver, shutdown) so that they can read and exit. With ``MatchConfig.ponder``
the freezer does nothing. Remote and unsandboxed bots (no cgroup) cannot be
frozen: for them ``freeze`` is a no-op.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.logs import get_logger
from arena.referee.slots import BotSlot
from arena.sandbox import BotProcess


class Freezer:
    """Freezes the sandboxed bot that is not to move; owned by the match."""

    def __init__(self, slots: Sequence[BotSlot], *, enabled: bool) -> None:
        self.slots = slots
        self.enabled = enabled
        self._frozen: dict[int, BotProcess] = {}  # slot -> the process this froze
        self.freezes = 0  # how many times a bot was frozen (for tests and logs)

    def to_move(self, slot_index: int) -> None:
        """``slot_index`` is about to get a request: let it run, freeze the other."""
        if not self.enabled:
            return
        mover = self.slots[slot_index].process
        if self._frozen.get(slot_index) is mover and mover is not None:
            self._thaw(slot_index)
        else:
            self._frozen.pop(slot_index, None)  # a relaunched bot was never frozen
        other = 1 - slot_index
        process = self.slots[other].process
        if not isinstance(process, BotProcess) or self._frozen.get(other) is process:
            return  # remote, gone, or already frozen: nothing to do
        if not process.freeze(True):
            get_logger(bot=self.slots[other].name).warning("bot_freeze_incomplete")
        self._frozen[other] = process
        self.freezes += 1

    def thaw_all(self) -> None:
        """Both bots run again (before GameOver, MatchOver and teardown)."""
        for slot_index in list(self._frozen):
            self._thaw(slot_index)

    def _thaw(self, slot_index: int) -> None:
        process = self._frozen.pop(slot_index)
        if process is self.slots[slot_index].process:
            process.freeze(False)
