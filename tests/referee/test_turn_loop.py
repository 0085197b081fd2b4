"""The turn loop: a game is one task in the endpoints' loop thread that judges and settles
everything the bots do, in the order it came.

Real endpoints (never connected: what the referee sends goes nowhere) and the
real loop; the test plays the bots' stream readers by handing the loop thread
what ``BotEndpoint`` would (a message's bytes, an ``Arrival``), while
``TurnLoop.play`` waits in another thread as the match's main thread would.
"""

from __future__ import annotations

import gc
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from arena.kahuna import deal_from_seed, new_game
from arena.protocol.gen.kahuna.v1 import game_pb2, referee_pb2
from arena.referee.endpoint import Arrival, ArrivalKind, BotEndpoint, call_on_loop
from arena.referee.game import GameTiming, RefereeState
from arena.referee.judge import Ended, Phase, Verdict
from arena.referee.live import ActionApplied, LiveEvent
from arena.referee.play import GameDriver
from arena.referee.results import Failures
from arena.referee.slots import EXIT_GRACE_S, BotSlot
from arena.referee.turn_loop import POLL_S, ArrivalQueue, TurnLoop
from arena.referee.types import BotSpec, BotStatus
from arena.testing.waiting import wait_until

pytestmark = pytest.mark.slow  # every test here starts a server (the bots' endpoints)


class Table:
    """Two ready bots and a game in play, waited for in a 'main' thread."""

    def __init__(self, work: Path, action_ms: int, *, start: bool = True) -> None:
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
        self.applied_in: list[str] = []  # the thread each action was applied in
        self.game = GameDriver(
            index=0, seed=1, turns=RefereeState(new_game(deal_from_seed(1))), slot_at_seat=(0, 1),
            log=GameTiming.start(action_ms, 0), failures=self.failures, slots=self.slots,
            fail=self._fail, on_event=self._on_event,
        )  # fmt: skip
        self.main = threading.Thread(target=self.turn_loop.play, args=(self.game,))
        if start:
            self.start()

    def start(self) -> None:
        self.main.start()
        self._wait(lambda: self.game.open_slot is not None)

    def _endpoint(self, index: int, work: Path) -> BotEndpoint:
        return BotEndpoint(index, work / f"{index}.sock", self.arrivals)

    def _fail(self, who: int, verdict: Verdict, failures: Failures) -> None:
        failures.setdefault(who, (verdict.status, verdict.reason))

    def _on_event(self, event: LiveEvent) -> None:
        if isinstance(event, ActionApplied):
            self.applied_in.append(threading.current_thread().name)

    @staticmethod
    def _wait(condition: Callable[[], bool]) -> None:
        wait_until(condition, "the game loop's next state", 5, interval_s=0.001)

    def put(self, kind: ArrivalKind, message: referee_pb2.PlayRequest | None = None) -> None:
        slot = self.game.open_slot
        assert slot is not None
        generation = self.slots[slot].endpoint.generation
        arrival = Arrival(slot, generation, kind, time.monotonic_ns(), message, 10)
        self.slots[slot].endpoint.deliver(arrival)

    def reply_bytes(self, request_id: int | None = None) -> tuple[int, bytes]:
        slot = self.slots[self.game.open_slot or 0]
        expect = slot.expect
        action = game_pb2.Action.FromString(next(iter(expect.legal)))
        chosen = expect.request_id if request_id is None else request_id
        reply = referee_pb2.ActionReply(request_id=chosen, action=action)
        return slot.index, referee_pb2.PlayRequest(action_reply=reply).SerializeToString()

    def reply(self, request_id: int | None = None) -> None:
        """The open request's bot sends a reply, read as the endpoint reads it."""
        who, raw = self.reply_bytes(request_id)
        endpoint = self.slots[who].endpoint
        generation = endpoint.generation

        def read() -> None:
            take = endpoint.take_raw
            assert take is not None
            assert take(who, generation, raw, time.monotonic_ns())

        call_on_loop(read)

    def applied(self, count: int) -> None:
        self._wait(lambda: len(self.game.turns.events) >= count)

    def finish(self) -> None:
        self.main.join(5)
        assert not self.main.is_alive()


MakeTable = Callable[..., Table]


class _Process(subprocess.Popen[bytes]):
    """A real process with ``BotProcess.wait``'s contract (None when it still runs) that
    says when the referee starts waiting for it."""

    waited = threading.Event()

    def wait(self, timeout: float | None = None) -> int | None:  # type: ignore[override]
        self.waited.set()
        try:
            return super().wait(timeout)
        except subprocess.TimeoutExpired:
            return None


@pytest.fixture
def table(tmp_path: Path) -> Iterator[MakeTable]:
    made: list[Table] = []

    def make(action_ms: int = 5000, start: bool = True) -> Table:
        made.append(Table(tmp_path, action_ms, start=start))
        return made[-1]

    yield make
    for each in made:  # a game a failed test left running: end it
        if each.main.is_alive():
            loop = each.turn_loop
            call_on_loop(lambda loop=loop: loop._post(Ended(0, 1)))  # type: ignore[misc]
            each.main.join(5)
        for slot in each.slots:
            slot.endpoint.stop()


def test_replies_are_applied_in_the_loop_thread_that_read_them(table: MakeTable) -> None:
    t = table()
    for applied in range(1, 6):
        t.reply()
        t.applied(applied)
    assert set(t.applied_in) == {"referee-grpc"}
    assert not t.failures


def test_a_game_is_played_with_the_heap_it_began_with_frozen(table: MakeTable) -> None:
    """The collector walks only what the game made while it is played (the loop thread
    serves both bots: a full collection of the whole heap is time neither asked for), and
    the heap is thawed once it is over (``arena.referee.heap``)."""
    gc.unfreeze()
    t = table()
    t.reply()
    t.applied(1)
    frozen_in_play = gc.get_freeze_count()
    call_on_loop(lambda: t.turn_loop._post(Ended(0, 1)))
    t.finish()
    assert frozen_in_play > 0
    assert gc.get_freeze_count() == 0


def test_a_bots_messages_are_judged_in_order(table: MakeTable) -> None:
    """Bytes that are no message, then a good reply: the failure wins, the reply is not played."""
    t = table()
    t.reply()
    t.applied(1)
    t.put(ArrivalKind.UNDECODABLE)
    t.reply()
    t.finish()
    assert len(t.game.turns.events) == 1
    assert [status for status, _ in t.failures.values()] == [BotStatus.MALFORMED_MESSAGE]


def test_an_arrival_waiting_as_a_game_starts_is_judged_before_any_reply(
    table: MakeTable,
) -> None:
    """Bytes that are no message, queued between games: the game judges them first, so
    the failure is settled and the first reply is not played."""
    t = table(start=False)
    t.slots[0].endpoint.deliver(Arrival(0, 0, ArrivalKind.UNDECODABLE, time.monotonic_ns()))
    wait_until(lambda: not t.arrivals.empty(), "the arrival queued for the main thread", 5)
    t.main.start()
    t.finish()
    assert [status for status, _ in t.failures.values()] == [BotStatus.MALFORMED_MESSAGE]
    assert not t.game.turns.events


def test_one_late_reply_to_an_expired_request_is_no_fault(table: MakeTable) -> None:
    """The other bot's late reply to its request that timed out is used up (the game goes
    on); a second one is a protocol violation."""
    t = table()
    t.reply()
    t.applied(1)
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
    wait_until(lambda: not other.expect.expired_request_ids, "the late reply used up", 5)
    assert not t.failures
    t.reply()
    t.applied(2)
    other.endpoint.deliver(arrival)
    t.finish()
    assert [status for status, _ in t.failures.values()] == [BotStatus.PROTOCOL_VIOLATION]


def test_a_reply_to_another_request_is_a_protocol_violation(table: MakeTable) -> None:
    t = table()
    t.reply()
    t.applied(1)
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


def test_a_closed_stream_is_judged_after_the_exit_grace_without_stopping_the_loop(
    table: MakeTable,
) -> None:
    """While the game's task waits for the process of a closed stream to exit, the loop
    thread goes on serving (here: a call on the loop runs at once); a process still
    running after the grace is a disconnect."""
    t = table()
    who = t.game.open_slot or 0
    process = _Process(["sleep", "30"])
    t.slots[who].process = process  # type: ignore[assignment]  # poll() and wait() it needs
    try:
        process.waited = threading.Event()
        t.put(ArrivalKind.STREAM_CLOSED)
        assert process.waited.wait(5)
        ran = threading.Event()
        call_on_loop(ran.set)
        assert ran.wait(EXIT_GRACE_S / 2)
        assert t.main.is_alive()  # still waiting for the exit
        t.finish()
    finally:
        process.kill()
        process.wait()
    assert t.failures[who][0] is BotStatus.DISCONNECT


def test_a_process_that_dies_without_closing_its_stream_is_found_by_the_timer(
    table: MakeTable,
) -> None:
    """No arrival at all: the game's timer looks at the processes every ``POLL_S``, so a
    death a few polls into a request is judged a crash with its exit status."""
    t = table()
    who = t.game.open_slot or 0
    process = subprocess.Popen(["sh", "-c", f"sleep {3 * POLL_S}; exit 3"])
    t.slots[who].process = process  # type: ignore[assignment]  # poll() is all it needs
    try:
        t.finish()
    finally:
        process.wait()
    assert t.failures[who] == (BotStatus.CRASH, "process exited with status 3")
    assert t.game.log.clocks[who].used_ms >= 3 * POLL_S * 1000  # its time to the crash


def test_a_bad_reply_is_charged_the_time_it_took(table: MakeTable) -> None:
    t = table()
    who = t.game.open_slot or 0
    opened = t.game.log.clocks[who].started_ns
    t.reply(request_id=999)
    t.finish()
    assert t.failures[who][0] is BotStatus.PROTOCOL_VIOLATION
    assert 0 < t.game.log.clocks[who].used_ms <= (time.monotonic_ns() - opened) / 1e6


def test_a_failure_is_settled_without_stopping_the_loop(table: MakeTable) -> None:
    """Settling a failure cuts the bot off (its process tree killed, here a slow hook):
    the loop thread goes on serving meanwhile (other bots, other matches)."""
    t = table()
    settling, release = threading.Event(), threading.Event()

    def slow_fail(who: int, verdict: Verdict, failures: Failures) -> None:
        settling.set()
        release.wait(5)
        failures.setdefault(who, (verdict.status, verdict.reason))

    t.game.fail = slow_fail
    t.reply(request_id=999)
    assert settling.wait(5)
    ran = threading.Event()
    call_on_loop(ran.set)
    try:
        assert ran.wait(1)
    finally:
        release.set()
    t.finish()
    assert [status for status, _ in t.failures.values()] == [BotStatus.PROTOCOL_VIOLATION]
