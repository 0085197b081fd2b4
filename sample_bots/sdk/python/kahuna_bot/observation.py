"""What a seat may know (docs/reference/RULES.md R9), as typed Python objects.

``Observation`` mirrors ``kahuna.v1.Observation`` with the history already
reassembled: the referee sends only the events since the previous request
of the game (``history_start``), and ``HistoryBuffer`` joins them back into
the full history. Empty protobuf strings become ``None``. ``Variant``,
``Outcome``, ``Termination`` and ``SeenEvent`` are the engine's types
(``arena.kahuna``); ``Observation.engine()`` is the engine's observation, for
bots that search with the engine (``kahuna_bot.sampling``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from arena.kahuna.actions import ActionType
from arena.kahuna.observe import Observation as EngineObservation
from arena.kahuna.observe import SeenEvent
from arena.kahuna.state import Outcome, Termination, Variant
from kahuna_bot._gen import game_pb2
from kahuna_bot._memo import MessageMemo

_ACTION_TYPES: dict[int, ActionType] = {
    game_pb2.ACTION_TYPE_PLACE: ActionType.PLACE,
    game_pb2.ACTION_TYPE_REMOVE: ActionType.REMOVE,
    game_pb2.ACTION_TYPE_DISCARD: ActionType.DISCARD,
    game_pb2.ACTION_TYPE_DRAW: ActionType.DRAW,
    game_pb2.ACTION_TYPE_PASS: ActionType.PASS,
}


_TERMINATIONS: dict[int, Termination] = {
    game_pb2.TERMINATION_POINTS: Termination.POINTS,
    game_pb2.TERMINATION_FINAL_POINTS: Termination.FINAL_POINTS,
    game_pb2.TERMINATION_BRIDGES: Termination.BRIDGES,
    game_pb2.TERMINATION_DRAW: Termination.DRAW,
    game_pb2.TERMINATION_NO_BRIDGES: Termination.NO_BRIDGES,
}


class ProtocolError(RuntimeError):
    """The referee sent something this SDK cannot make sense of."""


@dataclass(frozen=True, slots=True)
class Clock:
    """The time this request allows: the per-action limit, then the bank."""

    action_deadline_ms: int
    time_bank_ms: int


@dataclass(frozen=True, slots=True)
class Observation:
    """Everything this seat may know when asked to act, history complete."""

    game_index: int
    seat: int
    variant: Variant
    round: int
    to_move: int | None
    points: tuple[int, int]
    bridges: Mapping[str, int]  # occupied line -> seat
    controlled: Mapping[str, int]  # controlled island -> seat
    supply: tuple[int, int]  # bridges not on the board, per seat
    hand: tuple[str, ...]  # sorted
    opponent_hand_size: int
    open_cards: tuple[tuple[str, ...], tuple[str, ...]]  # Tactical only
    faceup: tuple[str | None, str | None, str | None]
    deck_size: int
    played_cards: tuple[str, ...]
    own_facedown_discards: tuple[str, ...]
    opponent_facedown_count: int
    final_turns: bool
    opponent_passed: bool
    turn_played_card: bool
    turn_discarded: bool
    history: tuple[SeenEvent, ...]
    is_finished: bool
    outcome: Outcome | None
    clock: Clock

    @property
    def opponent(self) -> int:
        return 1 - self.seat

    def engine(self) -> EngineObservation:
        """The same observation in engine terms (``arena.kahuna.Observation``)."""
        return EngineObservation(**{name: getattr(self, name) for name in VIEW_FIELDS})


VIEW_FIELDS = tuple(field.name for field in dataclasses.fields(EngineObservation))
"""The engine's seat view, field for field (``Observation`` adds the game and the clock)."""


def _pair(values: Sequence[int], what: str) -> tuple[int, int]:
    if len(values) != 2:
        raise ProtocolError(f"{what} needs one entry per seat, got {len(values)}")
    return int(values[0]), int(values[1])


def _read_seen_event(message: game_pb2.SeenEvent) -> SeenEvent:
    kind = _ACTION_TYPES.get(message.type)
    if kind is None:
        raise ProtocolError(f"history event with unknown action type {message.type}")
    cards = tuple(message.cards)
    return SeenEvent(
        seat=message.seat,
        type=kind,
        card=message.card or None,
        cards=(cards[0], cards[1]) if len(cards) == 2 else None,
        line=message.line or None,
        drawn=message.drawn or None,
        hidden=message.hidden,
    )


_EVENTS_READ = MessageMemo(_read_seen_event)


def seen_event_from_proto(message: game_pb2.SeenEvent) -> SeenEvent:
    """The typed event; events are immutable, so each distinct message is read once."""
    return _EVENTS_READ(message)


def outcome_from_proto(message: game_pb2.Outcome) -> Outcome:
    termination = _TERMINATIONS.get(message.termination)
    if termination is None:
        raise ProtocolError(f"outcome with unknown termination {message.termination}")
    winner = message.winner if message.HasField("winner") else None
    return Outcome(winner, termination, _pair(message.points, "Outcome.points"))


class HistoryBuffer:
    """The full history of one game, grown by each observation's increment."""

    def __init__(self) -> None:
        self._events: list[SeenEvent] = []

    def __len__(self) -> int:
        return len(self._events)

    def extend(self, history_start: int, events: Sequence[game_pb2.SeenEvent]) -> None:
        """Append an increment; ProtocolError if it does not start where we are."""
        if history_start != len(self._events):
            raise ProtocolError(
                f"history increment starts at event {history_start}, "
                f"but {len(self._events)} events were received before"
            )
        self._events.extend(map(seen_event_from_proto, events))

    def events(self) -> tuple[SeenEvent, ...]:
        return tuple(self._events)


def observation_from_proto(
    message: game_pb2.Observation, *, game_index: int, history: HistoryBuffer, clock: Clock
) -> Observation:
    """The typed observation; ``history`` is extended with the increment first."""
    history.extend(message.history_start, message.history)
    faceup = [card or None for card in message.faceup]
    if len(faceup) != 3:
        raise ProtocolError(f"the face-up row has 3 slots, got {len(faceup)}")
    open_cards = [tuple(cards.cards) for cards in message.open_cards] or [(), ()]
    if len(open_cards) != 2:
        raise ProtocolError(f"open_cards needs one entry per seat, got {len(open_cards)}")
    return Observation(
        game_index=game_index,
        seat=message.seat,
        variant=Variant(message.variant.strategic, message.variant.tactical),
        round=message.round,
        to_move=message.to_move if message.HasField("to_move") else None,
        points=_pair(message.points, "Observation.points"),
        bridges=MappingProxyType({owner.line: owner.seat for owner in message.bridges}),
        controlled=MappingProxyType({owner.island: owner.seat for owner in message.controlled}),
        supply=_pair(message.supply, "Observation.supply"),
        hand=tuple(message.hand),
        opponent_hand_size=message.opponent_hand_size,
        open_cards=(open_cards[0], open_cards[1]),
        faceup=(faceup[0], faceup[1], faceup[2]),
        deck_size=message.deck_size,
        played_cards=tuple(message.played_cards),
        own_facedown_discards=tuple(message.own_facedown_discards),
        opponent_facedown_count=message.opponent_facedown_count,
        final_turns=message.final_turns,
        opponent_passed=message.opponent_passed,
        turn_played_card=message.turn_played_card,
        turn_discarded=message.turn_discarded,
        history=history.events(),
        is_finished=message.is_finished,
        outcome=outcome_from_proto(message.outcome) if message.HasField("outcome") else None,
        clock=clock,
    )


__all__ = [
    "Clock",
    "HistoryBuffer",
    "Observation",
    "Outcome",
    "ProtocolError",
    "SeenEvent",
    "Termination",
    "Variant",
    "observation_from_proto",
    "outcome_from_proto",
    "seen_event_from_proto",
]
