"""The turn loop: replies settled in the reader thread until something unusual hands the
game over to the main thread, which then settles everything in order.

Real endpoints (never connected: what the referee sends goes nowhere) and the
real queue; the test thread plays the bots' stream readers by delivering
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
from arena.testing.waiting import wait_until

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
        wait_until(condition, "the game loop's next state", 5, interval_s=0.001)

    def put(self, kind: ArrivalKind, message: referee_pb2.PlayRequest | None = None) -> None:
        slot = self.game.open_slot
        assert slot is not None
        generation = self.slots[slot].endpoint.generation
        arrival = Arrival(slot, generation, kind, time.monotonic_ns(), message, 10)
        self.slots[slot].endpoint.deliver(arrival)

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
        assert not t.turn_loop.handed_over
    assert not t.failures


def test_a_bots_messages_are_judged_in_order(table: object) -> None:
    """Bytes that are no message, then a good reply: the failure wins, the reply is not played."""
    t: Table = table()  # type: ignore[operator]
    t.reply()
    t.put(ArrivalKind.UNDECODABLE)
    t.reply()
    t.finish()
    assert t.turn_loop.handed_over
    assert len(t.game.turns.events) == 1
    assert [status for status, _ in t.failures.values()] == [BotStatus.MALFORMED_MESSAGE]


class _FirstGetHook(ArrivalQueue):
    """The real queue, running ``hook`` once as the main thread first waits on it."""

    hook: Callable[[], None] | None = None

    def get(self, block: bool = True, timeout: float | None = None) -> Arrival:
        hook, self.hook = self.hook, None
        if hook is not None:
            hook()
        return super().get(block, timeout)


def test_an_arrival_waiting_as_a_game_starts_is_judged_before_any_reply(tmp_path: Path) -> None:
    """Bytes that are no message, queued between games, then the first reply, read before
    the main thread looks at its queue: the game is handed over to the main thread at
    once, so the failure is settled first and the reply is not played."""
    arrivals = _FirstGetHook()
    spec = BotSpec("x", "v", tmp_path, ("true",), "native")
    slots = tuple(
        BotSlot(index, spec, f"bot{index}", BotEndpoint(index, tmp_path / f"{index}.sock",
                arrivals), tmp_path)
        for index in (0, 1)
    )  # fmt: skip
    for slot in slots:
        slot.ready = True
        slot.expect.phase = Phase.IDLE
    loop = TurnLoop(arrivals, slots)
    failures: Failures = {}
    game = GameDriver(
        index=0, seed=1, turns=RefereeState(new_game(deal_from_seed(1))), slot_at_seat=(0, 1),
        log=GameTiming.start(5000, 0), failures=failures, slots=slots,
        fail=lambda who, verdict, failed: failed.setdefault(who, (verdict.status, "")),
    )  # fmt: skip

    def reply_first() -> None:  # the reader thread, before the main thread reads
        expect = slots[0].expect
        action = game_pb2.Action.FromString(next(iter(expect.legal)))
        reply = referee_pb2.ActionReply(request_id=expect.request_id, action=action)
        message = referee_pb2.PlayRequest(action_reply=reply)
        arrival = Arrival(0, 0, ArrivalKind.MESSAGE, time.monotonic_ns(), message)
        reader = threading.Thread(target=slots[0].endpoint.deliver, args=(arrival,))
        reader.start()
        reader.join(5)

    slots[0].endpoint.deliver(Arrival(0, 0, ArrivalKind.UNDECODABLE, time.monotonic_ns()))
    arrivals.hook = reply_first
    try:
        loop.play(game)
    finally:
        for slot in slots:
            slot.endpoint.stop()
    assert [status for status, _ in failures.values()] == [BotStatus.MALFORMED_MESSAGE]
    assert not game.turns.events


def test_one_late_reply_to_an_expired_request_is_no_fault_and_keeps_the_game_plain(
    table: MakeTable,
) -> None:
    """The other bot's late reply to its request that timed out is used up in the reader
    thread (the game goes on there); a second one is a protocol violation."""
    t = table()
    t.reply()
    waiting = t.game.open_slot or 0
    other = t.slots[1 - waiting]
    other.expect.expired_request_ids.add(77)
    late = referee_pb2.ActionReply(
        request_id=77, action=game_pb2.Action(type=game_pb2.ACTION_TYPE_PASS)
    )
    message = referee_pb2.PlayRequest(action_reply=late)
    arrival = Arrival(other.index, other.endpoint.generation, ArrivalKind.MESSAGE,
                      time.monotonic_ns(), message, 10)  # fmt: skip
    other.endpoint.deliver(arrival)
    assert not t.turn_loop.handed_over and not t.failures
    assert not other.expect.expired_request_ids
    t.reply()
    assert len(t.game.turns.events) == 2
    other.endpoint.deliver(arrival)
    t.finish()
    assert t.turn_loop.handed_over
    assert [status for status, _ in t.failures.values()] == [BotStatus.PROTOCOL_VIOLATION]


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
