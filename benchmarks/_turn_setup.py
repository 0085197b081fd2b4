"""The referee's turn driven by hand: two slots ready for requests, and a game of them.

``referee_turn.py`` (real endpoints, never connected) and ``transport_floor.py``'s
``rust_referee`` (a stand-in endpoint on the compiled transport) feed replies to
the turn loop themselves; what a match would have done before its first request
(the bots' Hello taken, a game dealt from its seed with both seats' clocks) is
made here, once for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.kahuna import deal_from_seed, new_game
from arena.referee.game import GameTiming, RefereeState
from arena.referee.judge import Phase, Verdict
from arena.referee.play import GameDriver
from arena.referee.results import Failures
from arena.referee.slots import BotSlot
from arena.referee.types import BotSpec


def ready_slots(
    specs: Sequence[BotSpec], endpoints: Sequence[Any], work: Path
) -> tuple[BotSlot, ...]:
    """One slot per endpoint, its bot taken as connected and idle (its Hello read)."""
    pairs = enumerate(zip(specs, endpoints, strict=True))
    slots = tuple(
        BotSlot(index, spec, f"bot{index}", endpoint, work) for index, (spec, endpoint) in pairs
    )
    for slot in slots:
        slot.ready = True
        slot.expect.phase = Phase.IDLE
    return slots


def _fail(who: int, verdict: Verdict, failures: Failures) -> None:
    failures.setdefault(who, (verdict.status, ""))


def game_of(slots: tuple[BotSlot, ...], index: int, seed: int, action_ms: int,
            bank_ms: int) -> GameDriver:  # fmt: skip
    """Game ``index`` of a match between ``slots``, dealt from ``seed``, seats swapped in
    odd games as a match swaps them; a bot's failure is recorded, never raised."""
    return GameDriver(
        index=index, seed=seed, turns=RefereeState(new_game(deal_from_seed(seed))),
        slot_at_seat=(0, 1) if index % 2 == 0 else (1, 0),
        log=GameTiming.start(action_ms, bank_ms), failures={}, slots=slots, fail=_fail,
    )  # fmt: skip
