"""The state of one game as the referee plays it: turns, history, clocks.

``RefereeState`` owns the true state and the events applied so far, so that the
observation sent for a decision carries only the events the seat has not
been sent yet (O(1) per decision in the game's length). ``GameTiming`` keeps the
seats' clocks (``Clock``, the one place that knows deadlines and what a reply
costs) and what the record will say about time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from arena.kahuna import Action, ActionType, Event, State, apply_legal, legal_actions
from arena.protocol.wire import action_request_frame, legal_set, observation_bytes


class RefereeState:
    """The true state of a game and what each seat has been told of it."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.events: list[Event] = []
        self._sent = [0, 0]

    @property
    def to_move(self) -> int:
        seat = self.state.to_move
        if seat is None:
            raise RuntimeError("no seat to move in a finished game")
        return seat

    def request_for_mover(
        self, *, request_id: int, game_index: int, action_deadline_ms: int, time_bank_ms: int
    ) -> tuple[bytes, Mapping[bytes, Action]]:
        """The serialised ActionRequest for the seat to move, and its legal actions
        keyed by their serialised form (so a reply that echoes one is found at once).

        The observation carries only the events this seat has not been sent yet.
        """
        seat = self.to_move
        legal = legal_set(legal_actions(self.state))
        start = self._sent[seat]
        observation = observation_bytes(self.state, seat, self.events[start:], start)
        self._sent[seat] = len(self.events)
        frame = action_request_frame(
            request_id=request_id,
            game_index=game_index,
            observation=observation,
            legal=legal,
            action_deadline_ms=action_deadline_ms,
            time_bank_ms=time_bank_ms,
        )
        return frame, legal.by_bytes

    def apply(self, action: Action, seat: int) -> None:
        """Play ``action`` for ``seat``, the seat to move: one of the legal actions of the
        last request (the judge accepts no other), so the rules need not check it again."""
        drawn = None
        if action.type is ActionType.DRAW and action.card is None:
            drawn = self.state.deck[0]
        self.state = apply_legal(self.state, action)
        self.events.append(Event(seat, action, drawn))

    def start_round(self, state: State) -> None:
        self.state = state


NS_PER_MS = 1_000_000


@dataclass(slots=True)
class Clock:
    """A bot's time for what it is asked: a per-action limit plus a bank for time beyond
    it (``TimeControl``); the one place that knows deadlines and what a reply costs.

    Each seat has one for the whole game (``GameTiming.clocks``); the wait for a launched
    bot's Hello is a clock of its own, without a bank. ``start`` it as the request goes
    out; the judge reads the time a reply took from it, the referee its deadline."""

    action_ms: int
    bank_ms: float = 0.0
    used_ms: float = 0.0
    """Everything charged: the time of each answered request, the whole allowance of
    one that expired."""
    started_ns: int = 0

    @property
    def allowance_ms(self) -> float:
        """The longest a reply may take now: the per-action limit plus what is in the bank."""
        return self.action_ms + self.bank_ms

    def start(self, now_ns: int) -> None:
        self.started_ns = now_ns

    def sent(self, wire_ns: int, free_ns: int) -> None:
        """The request ``start``ed earlier went on the wire at ``wire_ns``, its stream free
        for it since ``free_ns``: the clock starts again at the wire, less the time the
        stream was still busy with earlier frames (a bot that does not read its stream
        is charged for that), so that only the referee's own delay is taken off."""
        busy_ns = max(0, free_ns - self.started_ns)
        self.started_ns = max(self.started_ns, wire_ns - busy_ns)

    @property
    def deadline_ns(self) -> int:
        return self.started_ns + int(self.allowance_ms * NS_PER_MS)

    def elapsed_ms(self, at_ns: int) -> float:
        """The time from ``start`` to ``at_ns`` (a reply's arrival)."""
        return (at_ns - self.started_ns) / NS_PER_MS

    def charge(self, elapsed_ms: float) -> None:
        """An answered request: time beyond the per-action limit leaves the bank."""
        self.bank_ms = max(0.0, self.bank_ms - max(0.0, elapsed_ms - self.action_ms))
        self.used_ms += elapsed_ms

    def charge_expired(self) -> None:
        """A request that expired unanswered: its whole allowance was used."""
        self.used_ms += self.allowance_ms

    def charge_failed(self, at_ns: int) -> None:
        """A request its bot failed (a crash, an illegal or malformed reply) at ``at_ns``:
        the time it took is its own (at most its allowance), not the game's."""
        self.used_ms += min(self.allowance_ms, max(0.0, self.elapsed_ms(at_ns)))


@dataclass
class GameTiming:
    """The seats' clocks in one game and what the record will say about time."""

    clocks: tuple[Clock, Clock]
    reshuffles: list[tuple[str, ...]] = field(default_factory=list)
    timings: list[dict[str, object]] = field(default_factory=list)
    cpu_ms: list[float | None] = field(default_factory=lambda: [None, None])
    """CPU time of each seat's whole process tree during the game, where the sandbox
    reports it (read at the start and end of the game: a cgroup read per action
    would cost more than the decision itself)."""

    @classmethod
    def start(cls, action_ms: int, bank_ms: int) -> GameTiming:
        return cls(clocks=(Clock(action_ms, float(bank_ms)), Clock(action_ms, float(bank_ms))))

    def answered(self, seat: int, elapsed_ms: float) -> None:
        """Seat ``seat`` answered its request after ``elapsed_ms``: charged and recorded."""
        self.clocks[seat].charge(elapsed_ms)
        self.timings.append({"seat": seat, "wall_ms": round(elapsed_ms, 3)})
