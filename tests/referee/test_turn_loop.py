"""The game loop's two paths: replies applied in the reader thread, the rest in the main thread.

Real endpoints (never connected: what the referee sends goes nowhere) and the
real queue; the test thread plays the bots' stream readers by putting
arrivals, exactly as ``BotEndpoint`` does, while ``TurnLoop.play`` runs the game
in another thread as the match's main thread would.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from arena.kahuna import deal_from_seed, new_game
from arena.protocol.gen.kahuna.v1 import game_pb2, referee_pb2
from arena.referee.endpoint import Arrival, ArrivalKind, BotEndpoint
from arena.referee.game import GameTiming, RefereeState
from arena.referee.judge import Phase, Verdict
from arena.referee.play import GameDriver
from arena.referee.results import Failures
from arena.referee.slots import BotSlot
from arena.referee.turn_loop import GAME_ENDED, ArrivalQueue, TurnLoop
from arena.referee.types import BotSpec, BotStatus

pytestmark = pytest.mark.slow  # every test here starts a process or a server


class Table:
    """Two ready bots, a game in play in a 'main' thread, and the arrivals queue."""

    def __init__(self, work: Path, action_ms: int) -> None:
        self.arrivals = ArrivalQueue()
        spec = BotSpec("x", "v", work, ("true",), "native")
        self.slots = tuple(
            BotSlot(index, spec, f"bot{index}", self._endpoint(index, work), work)
            for index in (0, 1)
        )
        for slot in self.slots:
            slot.ready = True
            slot.expect.phase = Phase.IDLE
        self.turn_loop = TurnLoop(self.arrivals, self.slots)
        self.failures: Failures = {}
        self.game = GameDriver(
            index=0, seed=1, turns=RefereeState(new_game(deal_from_seed(1))), slot_at_seat=(0, 1),
            log=GameTiming.start(action_ms, 0), failures=self.failures, slots=self.slots,
            fail=self._fail,
        )  # fmt: skip
        self.main = threading.Thread(target=self.turn_loop.play, args=(self.game,))
        self.main.start()
        self._wait(lambda: self.game.open_slot is not None)

    def _endpoint(self, index: int, work: Path) -> BotEndpoint:
        return BotEndpoint(index, work / f"{index}.sock", self.arrivals)

    def _fail(self, who: int, verdict: Verdict, failures: Failures) -> None:
        failures.setdefault(who, (verdict.status, verdict.reason))

    @staticmethod
    def _wait(condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 5
        while not condition():
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.001)

    def put(self, kind: ArrivalKind, message: referee_pb2.PlayRequest | None = None) -> None:
        slot = self.game.open_slot
        assert slot is not None
        generation = self.slots[slot].endpoint.generation
        self.arrivals.put(Arrival(slot, generation, kind, time.monotonic_ns(), message, 10))

    def reply(self, request_id: int | None = None) -> None:
        slot = self.slots[self.game.open_slot or 0]
        expect = slot.expect
        action = game_pb2.Action.FromString(next(iter(expect.legal)))
        chosen = expect.request_id if request_id is None else request_id
        reply = referee_pb2.ActionReply(request_id=chosen, action=action)
        self.put(ArrivalKind.MESSAGE, referee_pb2.PlayRequest(action_reply=reply))

    def finish(self) -> None:
        self.main.join(5)
        assert not self.main.is_alive()


MakeTable = Callable[..., Table]


@pytest.fixture
def table(tmp_path: Path) -> Iterator[MakeTable]:
    made: list[Table] = []

    def make(action_ms: int = 5000) -> Table:
        made.append(Table(tmp_path, action_ms))
        return made[-1]

    yield make
    for each in made:  # a game a failed test left running: end it
        with each.turn_loop.lock:
            each.failures.setdefault(0, (BotStatus.CRASH, "test over"))
        each.arrivals.put(GAME_ENDED)
        each.main.join(5)


def test_a_plain_reply_is_applied_in_the_reader_thread(table: MakeTable) -> None:
    t = table()
    for applied in range(1, 6):
        t.reply()
        assert len(t.game.turns.events) == applied  # done before put() returned
        assert t.turn_loop.unsettled == 0
    assert not t.failures


def test_a_bots_messages_are_judged_in_order(table: object) -> None:
    """Bytes that are no message, then a good reply: the failure wins, the reply is not played."""
    t: Table = table()  # type: ignore[operator]
    t.reply()
    t.put(ArrivalKind.UNDECODABLE)
    t.reply()
    t.finish()
    assert len(t.game.turns.events) == 1
    assert [status for status, _ in t.failures.values()] == [BotStatus.MALFORMED_MESSAGE]


def test_a_reply_to_another_request_is_a_protocol_violation(table: MakeTable) -> None:
    t = table()
    t.reply()
    t.reply(request_id=999)
    t.finish()
    assert [status for status, _ in t.failures.values()] == [BotStatus.PROTOCOL_VIOLATION]
    assert len(t.game.turns.events) == 1


def test_no_reply_in_time_is_a_timeout_charged_once(table: MakeTable) -> None:
    t = table(action_ms=50)
    waiting = t.game.open_slot
    t.finish()
    assert list(t.failures) == [waiting]
    assert t.failures[waiting or 0][0] is BotStatus.TIMEOUT
    assert t.game.open_slot is None
