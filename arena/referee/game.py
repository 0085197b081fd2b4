"""The state of one game as the referee plays it: turns, history, clocks.

``GameTurns`` owns the true state and the events applied so far, so that the
observation sent for a decision carries only the events the seat has not
been sent yet (O(1) per decision in the game's length). ``GameLog`` keeps the
clocks and what the record will say about time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arena.kahuna import Action, ActionType, Event, State, apply, legal_actions
from arena.protocol.convert import action_to_pb, observation_to_pb
from arena.protocol.gen.kahuna.v1 import game_pb2

_ACTION_PB: dict[Action, game_pb2.Action] = {}
"""Actions are few and immutable: their messages are built once."""


def _action_pb(action: Action) -> game_pb2.Action:
    message = _ACTION_PB.get(action)
    if message is None:
        message = _ACTION_PB[action] = action_to_pb(action)
    return message


class GameTurns:
    """The true state of a game and what each seat has been told of it."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.events: list[Event] = []
        self._sent = [0, 0]
        self._legal: tuple[Action, ...] = ()

    @property
    def to_move(self) -> int:
        seat = self.state.to_move
        if seat is None:
            raise RuntimeError("no seat to move in a finished game")
        return seat

    def observation_for_mover(self) -> tuple[game_pb2.Observation, frozenset[Action]]:
        """The mover's observation (new events only) and its legal actions."""
        seat = self.to_move
        self._legal = tuple(sorted(legal_actions(self.state), key=Action.text))
        start = self._sent[seat]
        observation = observation_to_pb(self.state, seat, self.events[start:], start)
        self._sent[seat] = len(self.events)
        return observation, frozenset(self._legal)

    def legal_pb(self) -> list[game_pb2.Action]:
        """The legal actions of the last observation, sorted by text notation."""
        return [_action_pb(action) for action in self._legal]

    def apply(self, action: Action, seat: int) -> None:
        drawn = None
        if action.type is ActionType.DRAW and action.card is None:
            drawn = self.state.deck[0]
        self.state = apply(self.state, action, seat)
        self.events.append(Event(seat, action, drawn))

    def start_round(self, state: State) -> None:
        self.state = state


@dataclass
class GameLog:
    """Clocks and timings of one game, per seat."""

    action_ms: int
    bank_ms: list[float]
    reshuffles: list[tuple[str, ...]] = field(default_factory=list)
    timings: list[dict[str, object]] = field(default_factory=list)
    time_ms: list[float] = field(default_factory=lambda: [0.0, 0.0])
    cpu_ms: list[float | None] = field(default_factory=lambda: [0.0, 0.0])

    @classmethod
    def start(cls, action_ms: int, bank_ms: int) -> GameLog:
        return cls(action_ms=action_ms, bank_ms=[float(bank_ms), float(bank_ms)])

    def allowance_ms(self, seat: int) -> float:
        return self.action_ms + self.bank_ms[seat]

    def charge(self, seat: int, wall_ms: float, cpu_ms: float | None) -> None:
        """Record one answered request; time beyond the per-action limit leaves the bank."""
        self.bank_ms[seat] = max(0.0, self.bank_ms[seat] - max(0.0, wall_ms - self.action_ms))
        self.time_ms[seat] += wall_ms
        total = self.cpu_ms[seat]
        self.cpu_ms[seat] = None if total is None or cpu_ms is None else total + cpu_ms
        timing: dict[str, object] = {"seat": seat, "wall_ms": round(wall_ms, 3)}
        if cpu_ms is not None:
            timing["cpu_ms"] = round(cpu_ms, 3)
        self.timings.append(timing)
