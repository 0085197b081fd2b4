"""Decoders of what the referee sends, as a bot would read it: for tests only.

The referee only encodes observations and outcomes (``arena.protocol``); the
tests decode them again to check that a bot sees exactly what
``arena.kahuna.observe`` says.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.kahuna import Action, Observation, Outcome, SeenEvent, Variant
from arena.protocol.convert import ACTION_TYPE_TO_PB, TERMINATION_TO_PB
from arena.protocol.gen.kahuna.v1 import game_pb2

ACTION_TYPE_FROM_PB = {value: key for key, value in ACTION_TYPE_TO_PB.items()}
TERMINATION_FROM_PB = {value: key for key, value in TERMINATION_TO_PB.items()}
_TEXT: dict[tuple[int, int, int, int], str] = {}


def outcome_from_pb(message: game_pb2.Outcome) -> Outcome:
    winner = message.winner if message.HasField("winner") else None
    return Outcome(winner, TERMINATION_FROM_PB[message.termination], _pair(message.points))


def event_from_pb(message: game_pb2.SeenEvent) -> SeenEvent:
    return SeenEvent(
        seat=message.seat,
        type=ACTION_TYPE_FROM_PB[message.type],
        card=message.card or None,
        cards=(message.cards[0], message.cards[1]) if message.cards else None,
        line=message.line or None,
        drawn=message.drawn or None,
        hidden=message.hidden,
    )


def observation_from_pb(
    message: game_pb2.Observation, earlier_history: Sequence[SeenEvent] = ()
) -> Observation:
    """Decode an observation; ``earlier_history`` is what previous messages carried.

    Raises ValueError when ``history_start`` does not match ``earlier_history``.
    """
    if message.history_start != len(earlier_history):
        raise ValueError(
            f"history_start {message.history_start} but {len(earlier_history)} events known"
        )
    faceup = tuple(card or None for card in message.faceup)
    if len(faceup) != 3:
        raise ValueError(f"faceup has {len(faceup)} slots, not 3")
    return Observation(
        seat=message.seat,
        variant=Variant(message.variant.strategic, message.variant.tactical),
        round=message.round,
        to_move=message.to_move if message.HasField("to_move") else None,
        points=_pair(message.points),
        bridges={owner.line: owner.seat for owner in message.bridges},
        controlled={owner.island: owner.seat for owner in message.controlled},
        supply=_pair(message.supply),
        hand=tuple(message.hand),
        opponent_hand_size=message.opponent_hand_size,
        open_cards=(tuple(message.open_cards[0].cards), tuple(message.open_cards[1].cards)),
        faceup=(faceup[0], faceup[1], faceup[2]),
        deck_size=message.deck_size,
        played_cards=tuple(message.played_cards),
        own_facedown_discards=tuple(message.own_facedown_discards),
        opponent_facedown_count=message.opponent_facedown_count,
        final_turns=message.final_turns,
        opponent_passed=message.opponent_passed,
        turn_played_card=message.turn_played_card,
        turn_discarded=message.turn_discarded,
        history=(*earlier_history, *(event_from_pb(event) for event in message.history)),
        is_finished=message.is_finished,
        outcome=outcome_from_pb(message.outcome) if message.HasField("outcome") else None,
    )


def _pair(values: Sequence[int]) -> tuple[int, int]:
    if len(values) != 2:
        raise ValueError(f"expected one value per seat, got {len(values)}")
    return values[0], values[1]


def sort_by_text(actions: Iterable[Action]) -> list[Action]:
    """Actions sorted by text notation (texts cached)."""
    def text(action: Action) -> str:
        value = _TEXT.get(action.code)
        if value is None:
            value = _TEXT[action.code] = action.text()
        return value

    return sorted(actions, key=text)
