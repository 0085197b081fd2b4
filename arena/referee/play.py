"""One game in play: requests out, replies judged and applied, reshuffles.

Whatever a bot did reaches the game as a verdict, through one method:
``settle``. A game in play is touched only by its task in the endpoints' event
loop thread (``arena.referee.turn_loop``), which judges each reply, timeout and
exit in order and settles it here; an accepted action writes the next request
from there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.kahuna import Action, reshuffle_from_seed, start_round
from arena.referee.freezer import Freezer
from arena.referee.game import GameTiming, RefereeState
from arena.referee.judge import Phase, ReplyWindow, Verdict, VerdictKind
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
class GameDriver:
    index: int
    seed: int
    turns: RefereeState
    slot_at_seat: tuple[int, int]
    log: GameTiming
    failures: Failures
    slots: Sequence[BotSlot]
    fail: FailHook
    on_event: LiveHook | None = None
    open_slot: int | None = None
    freezer: Freezer | None = None  # freezes the bot not to move, if seen busy then

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
        clock = self.log.clocks[seat]
        frame, legal = self.turns.request_for_mover(
            request_id=request_id,
            game_index=self.index,
            action_deadline_ms=clock.action_ms,
            time_bank_ms=int(clock.bank_ms),
        )
        expect = slot.expect
        expect.phase = Phase.AWAIT_REPLY
        expect.request_id = request_id
        expect.clock = clock
        expect.state = self.turns.state
        expect.legal = legal
        self.open_slot = slot.index
        if self.freezer is not None:  # before the clock starts: the referee's time
            self.freezer.to_move(slot.index)
        # The clock starts now, and again as the frame is handed to the transport (in the
        # endpoints' loop thread, which may first serve the other bot's traffic): the
        # bot's time is from the request on the wire to its reply (docs/reference/PROTOCOL.md).
        clock.start(time.monotonic_ns())
        slot.send(frame, on_wire=clock.sent)

    @property
    def waiting(self) -> bool:
        """Whether a request is open (``open_request`` is not None), without building it."""
        return self.open_slot is not None and not self.over

    def open_request(self) -> OpenRequest | None:
        """The request the game waits for; None once it is over."""
        if self.over or self.open_slot is None:
            return None
        expect = self.slots[self.open_slot].expect
        return OpenRequest(self.open_slot, expect.request_id, expect.clock.deadline_ns)

    def answerable(self, slot_index: int, generation: int) -> ReplyWindow | None:
        """What is expected of ``slot_index`` if the game waits for its reply and the
        message came from its current, connected process; else None (nothing a message
        of it could say would be a reply to take at once)."""
        if slot_index != self.open_slot:
            return None
        slot = self.slots[slot_index]
        if generation != slot.endpoint.generation or not slot.ready:
            return None
        return slot.expect

    def _accept(self, slot: BotSlot, action: Action, elapsed_ms: float) -> None:
        """Apply ``action``, accepted from ``slot`` after ``elapsed_ms``, and go on."""
        expect = slot.expect
        expect.phase = Phase.IDLE
        expect.state = None
        self.open_slot = None
        seat = self.slot_at_seat.index(slot.index)
        self.log.answered(seat, elapsed_ms)
        self.turns.apply(action, seat)
        if self.on_event is not None:
            self.on_event(ActionApplied(self.index, seat, action, elapsed_ms, time.time()))
        self.advance()

    def settle(self, who: int, verdict: Verdict) -> None:
        """The one decision: what ``verdict``, about what ``who`` did, does to the game.

        Every reply, timeout and exit of a game ends here: an action of the awaited
        bot is applied and the game goes on (and the next request goes out); a
        failure forfeits the game (the open request's late reply is then no fault).
        """
        if self.open_slot is None:
            if not verdict.failed:
                return
            self.fail(who, verdict, self.failures)  # e.g. a crash as the game ended
            return
        if verdict.kind is VerdictKind.ACTION and who == self.open_slot:
            assert verdict.action is not None
            self._accept(self.slots[who], verdict.action, verdict.elapsed_ms)
            return
        slot = self.slots[self.open_slot]
        expect = slot.expect
        if expect.phase is Phase.AWAIT_REPLY:
            expect.phase = Phase.IDLE
        expect.state = None
        if who != slot.index or verdict.status is BotStatus.TIMEOUT:
            expect.expired_request_ids.add(expect.request_id)  # its late reply is not a fault
        if who == slot.index and verdict.status is BotStatus.TIMEOUT:
            expect.clock.charge_expired()
        elif who == slot.index:  # it failed on its own turn: the time it took is its own
            expect.clock.charge_failed(time.monotonic_ns())
        self.open_slot = None
        self.fail(who, verdict, self.failures)
