"""One game in play: requests out, replies judged and applied, reshuffles.

The main thread starts a game and deals with everything unusual (timeouts,
failures, processes that die). A plain reply to the open request, the bulk of
a match, is judged and applied right in the endpoints' event loop thread that
read it (``answer_at_once``), which then writes the next request itself: no
thread hand-off per decision. Every method runs under the match's lock
(``Inbox.lock``), so the two paths never interleave; the loop takes the fast
path only while the main thread has no arrival in hand
(``Inbox.unsettled == 0``), so a bot's messages are still judged in order.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.kahuna import Action, reshuffle_from_seed, start_round
from arena.referee.endpoint import Arrival, ArrivalKind
from arena.referee.freezer import Freezer
from arena.referee.game import GameLog, GameTurns
from arena.referee.judge import Phase, Verdict, VerdictKind, judge, judge_echo
from arena.referee.live import ActionApplied, LiveHook, RoundStarted
from arena.referee.results import Failures
from arena.referee.slots import BotSlot
from arena.referee.types import BotStatus

NS_PER_MS = 1_000_000

FailHook = Callable[[int, Verdict, Failures], None]


@dataclass(frozen=True, slots=True)
class OpenRequest:
    slot: int
    request_id: int
    deadline_ns: int


@dataclass
class GameInPlay:
    index: int
    seed: int
    turns: GameTurns
    slot_at_seat: tuple[int, int]
    log: GameLog
    failures: Failures
    slots: Sequence[BotSlot]
    fail: FailHook
    on_event: LiveHook | None = None
    open_slot: int | None = None
    freezer: Freezer | None = None  # freezes the bot that is not to move

    @property
    def over(self) -> bool:
        return bool(self.failures) or self.turns.state.is_finished

    def advance(self) -> None:
        """Reshuffle where a round ends, then request the next action (if any)."""
        while not self.over:
            state = self.turns.state
            if not state.needs_reshuffle:
                self._request()
                return
            order = reshuffle_from_seed(self.seed, state.round + 1, state.reshuffle_cards)
            self.log.reshuffles.append(order)
            self.turns.start_round(start_round(state, order))
            if self.on_event is not None:
                self.on_event(RoundStarted(self.index, state.round + 1, tuple(order)))

    def _request(self) -> None:
        seat = self.turns.to_move
        slot = self.slots[self.slot_at_seat[seat]]
        request_id = slot.take_request_id()
        frame, legal = self.turns.request_for_mover(
            request_id=request_id,
            game_index=self.index,
            action_deadline_ms=self.log.action_ms,
            time_bank_ms=int(self.log.bank_ms[seat]),
        )
        expect = slot.expect
        expect.phase = Phase.AWAIT_REPLY
        expect.request_id = request_id
        expect.allowance_ms = self.log.allowance_ms(seat)
        expect.state = self.turns.state
        expect.legal = legal
        self.open_slot = slot.index
        if self.freezer is not None:  # before the clock starts: the referee's time
            self.freezer.to_move(slot.index)
        expect.sent_ns = time.monotonic_ns()
        slot.send(frame)

    @property
    def waiting(self) -> bool:
        """Whether a request is open (``open_request`` is not None), without building it."""
        return self.open_slot is not None and not self.over

    def open_request(self) -> OpenRequest | None:
        """The request the game waits for; None once it is over."""
        if self.over or self.open_slot is None:
            return None
        expect = self.slots[self.open_slot].expect
        deadline_ns = expect.sent_ns + int(expect.allowance_ms * NS_PER_MS)
        return OpenRequest(self.open_slot, expect.request_id, deadline_ns)

    def answer_at_once(self, arrival: Arrival) -> bool:
        """Endpoints' loop thread: apply a legal, timely reply to the open request and send the next
        request (True); anything else is left to the main thread (False)."""
        if arrival.kind is not ArrivalKind.MESSAGE:
            return False
        slot = self._answering(arrival.slot, arrival.generation)
        if slot is None:
            return False
        message = arrival.message
        expect = slot.expect
        if (
            message is None
            or expect.phase is not Phase.AWAIT_REPLY
            or message.WhichOneof("kind") != "action_reply"
            or message.action_reply.request_id != expect.request_id
        ):
            return False
        verdict = judge(arrival, expect)  # no side effect for a reply to the open request
        if verdict.kind is not VerdictKind.ACTION:
            return False
        assert verdict.action is not None
        self.accept(slot, verdict.action, verdict.elapsed_ms)
        return True

    def answer_raw(self, slot_index: int, generation: int, raw: bytes, received_ns: int) -> bool:
        """Endpoints' loop thread, before any parse: ``answer_at_once`` for a reply whose
        bytes are exactly the canonical encoding of a legal, timely answer to the open
        request (``judge_echo``); anything else (False) goes the usual way."""
        slot = self._answering(slot_index, generation)
        if slot is None:
            return False
        judged = judge_echo(raw, received_ns, slot.expect)
        if judged is None:
            return False
        self.accept(slot, *judged)
        return True

    def _answering(self, slot_index: int, generation: int) -> BotSlot | None:
        """The slot whose reply the game waits for, if ``slot_index`` is it and the message
        came from its current, connected process; else None (the main thread judges)."""
        if slot_index != self.open_slot:
            return None
        slot = self.slots[slot_index]
        if generation != slot.endpoint.generation or not slot.ready:
            return None
        return slot

    def accept(self, slot: BotSlot, action: Action, elapsed_ms: float) -> None:
        """Apply ``action``, accepted from ``slot`` after ``elapsed_ms``, and go on."""
        expect = slot.expect
        expect.phase = Phase.IDLE
        expect.state = None
        self.open_slot = None
        seat = self.slot_at_seat.index(slot.index)
        self.log.charge(seat, elapsed_ms)
        self.turns.apply(action, seat)
        if self.on_event is not None:
            self.on_event(ActionApplied(self.index, seat, action, elapsed_ms))
        self.advance()

    def settle(self, who: int, verdict: Verdict) -> None:
        """Main thread: what ``who`` did while the open request waited."""
        if self.open_slot is None:
            if not verdict.failed:
                return
            self.fail(who, verdict, self.failures)  # e.g. a crash as the game ended
            return
        if verdict.kind is VerdictKind.ACTION and who == self.open_slot:
            assert verdict.action is not None
            self.accept(self.slots[who], verdict.action, verdict.elapsed_ms)
            return
        slot = self.slots[self.open_slot]
        expect = slot.expect
        if expect.phase is Phase.AWAIT_REPLY:
            expect.phase = Phase.IDLE
        expect.state = None
        if who != slot.index or verdict.status is BotStatus.TIMEOUT:
            expect.expired_request_ids.add(expect.request_id)  # its late reply is not a fault
        if who == slot.index and verdict.status is BotStatus.TIMEOUT:
            self.log.time_ms[self.turns.to_move] += expect.allowance_ms
        self.open_slot = None
        self.fail(who, verdict, self.failures)
