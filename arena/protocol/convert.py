"""Game objects <-> ``kahuna.v1`` protobuf messages.

The only module that knows both ``arena.kahuna`` and the generated code.
Decoding validates at the edge: ``action_from_pb`` raises
``MalformedActionError`` naming what is wrong, never anything else.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.kahuna import (
    ISLANDS,
    LINES,
    PASS_ACTION,
    Action,
    ActionType,
    Event,
    MalformedActionError,
    Outcome,
    SeenEvent,
    State,
    Termination,
    Variant,
    discard,
    draw,
    place,
    remove,
)
from arena.kahuna.view import Observation, observe_since
from arena.protocol.gen.kahuna.v1 import game_pb2

ACTION_TYPE_TO_PB: dict[ActionType, game_pb2.ActionType.ValueType] = {
    ActionType.PLACE: game_pb2.ACTION_TYPE_PLACE,
    ActionType.REMOVE: game_pb2.ACTION_TYPE_REMOVE,
    ActionType.DISCARD: game_pb2.ACTION_TYPE_DISCARD,
    ActionType.DRAW: game_pb2.ACTION_TYPE_DRAW,
    ActionType.PASS: game_pb2.ACTION_TYPE_PASS,
}
ACTION_TYPE_FROM_PB = {value: key for key, value in ACTION_TYPE_TO_PB.items()}
TERMINATION_TO_PB: dict[Termination, game_pb2.Termination.ValueType] = {
    Termination.POINTS: game_pb2.TERMINATION_POINTS,
    Termination.FINAL_POINTS: game_pb2.TERMINATION_FINAL_POINTS,
    Termination.BRIDGES: game_pb2.TERMINATION_BRIDGES,
    Termination.DRAW: game_pb2.TERMINATION_DRAW,
    Termination.NO_BRIDGES: game_pb2.TERMINATION_NO_BRIDGES,
}
MAX_NAME_CHARS = 16


def variant_to_pb(variant: Variant) -> game_pb2.Variant:
    return game_pb2.Variant(strategic=variant.strategic, tactical=variant.tactical)


def action_to_pb(action: Action) -> game_pb2.Action:
    message = game_pb2.Action(type=ACTION_TYPE_TO_PB[action.type])
    if action.card is not None:
        message.card = action.card
    if action.cards is not None:
        message.cards.extend(action.cards)
    if action.line is not None:
        message.line = action.line
    return message


def action_from_pb(message: game_pb2.Action) -> Action:
    """The action a bot sent; ``MalformedActionError`` names what is wrong."""
    action_type = ACTION_TYPE_FROM_PB.get(message.type)
    if action_type is None:
        raise MalformedActionError(f"action type {message.type} is not an action type")
    for text in (message.card, message.line, *message.cards):
        if len(text) > MAX_NAME_CHARS:
            raise MalformedActionError(f"name of {len(text)} characters in action")
    _refuse_extra_fields(message, action_type)
    if action_type is ActionType.PLACE:
        card = _required(message.card, "place", "card")
        return place(card, _required(message.line, "place", "line"))
    if action_type is ActionType.REMOVE:
        if len(message.cards) != 2:
            raise MalformedActionError(f"remove needs exactly 2 cards, got {len(message.cards)}")
        return remove(message.cards[0], message.cards[1], _required(message.line, "remove", "line"))
    if action_type is ActionType.DISCARD:
        return discard(_required(message.card, "discard", "card"))
    if action_type is ActionType.DRAW:
        return draw(message.card or None)
    return PASS_ACTION


def _required(value: str, kind: str, field: str) -> str:
    if not value:
        raise MalformedActionError(f"{kind} needs a {field}")
    return value


def _refuse_extra_fields(message: game_pb2.Action, action_type: ActionType) -> None:
    allowed = {
        ActionType.PLACE: {"card", "line"},
        ActionType.REMOVE: {"cards", "line"},
        ActionType.DISCARD: {"card"},
        ActionType.DRAW: {"card"},
        ActionType.PASS: set(),
    }[action_type]
    fields = (("card", message.card), ("line", message.line), ("cards", message.cards))
    present = {name for name, value in fields if value}
    extra = sorted(present - allowed)
    if extra:
        raise MalformedActionError(f"{action_type.value} takes no {extra[0]}")


def outcome_to_pb(outcome: Outcome) -> game_pb2.Outcome:
    message = game_pb2.Outcome(
        termination=TERMINATION_TO_PB[outcome.termination], points=list(outcome.points)
    )
    if outcome.winner is not None:
        message.winner = outcome.winner
    return message


def event_to_pb(event: SeenEvent) -> game_pb2.SeenEvent:
    message = game_pb2.SeenEvent(
        seat=event.seat, type=ACTION_TYPE_TO_PB[event.type], hidden=event.hidden
    )
    if event.card is not None:
        message.card = event.card
    if event.cards is not None:
        message.cards.extend(event.cards)
    if event.line is not None:
        message.line = event.line
    if event.drawn is not None:
        message.drawn = event.drawn
    return message


def observation_to_pb(
    state: State, seat: int, new_events: Sequence[Event], history_start: int
) -> game_pb2.Observation:
    """``seat``'s view of ``state`` (``arena.kahuna.view.observe_since``), history sent
    incrementally: ``new_events`` are ``state.history[history_start:]`` (the caller
    keeps them, so a decision costs O(1) in the game's length)."""
    return observation_pb(observe_since(state, seat, new_events), history_start)


def observation_pb(obs: Observation, history_start: int) -> game_pb2.Observation:
    """The ``Observation`` message of a seat's view, field for field; ``obs.history``
    holds the events from ``history_start`` on."""
    bridges = obs.bridges
    controlled = obs.controlled
    message = game_pb2.Observation(
        seat=obs.seat,
        variant=variant_to_pb(obs.variant),
        round=obs.round,
        points=list(obs.points),
        bridges=[
            game_pb2.LineOwner(line=line, seat=bridges[line]) for line in LINES if line in bridges
        ],
        controlled=[
            game_pb2.IslandOwner(island=island, seat=controlled[island])
            for island in ISLANDS
            if island in controlled
        ],
        supply=list(obs.supply),
        hand=list(obs.hand),
        opponent_hand_size=obs.opponent_hand_size,
        open_cards=[game_pb2.CardList(cards=list(cards)) for cards in obs.open_cards],
        faceup=[card or "" for card in obs.faceup],
        deck_size=obs.deck_size,
        played_cards=list(obs.played_cards),
        own_facedown_discards=list(obs.own_facedown_discards),
        opponent_facedown_count=obs.opponent_facedown_count,
        final_turns=obs.final_turns,
        opponent_passed=obs.opponent_passed,
        turn_played_card=obs.turn_played_card,
        turn_discarded=obs.turn_discarded,
        history_start=history_start,
        history=[event_to_pb(event) for event in obs.history],
        is_finished=obs.is_finished,
    )
    if obs.to_move is not None:
        message.to_move = obs.to_move
    if obs.outcome is not None:
        message.outcome.CopyFrom(outcome_to_pb(obs.outcome))
    return message


def actions_to_pb(actions: Sequence[Action]) -> list[game_pb2.Action]:
    """Legal actions as sent in a request: sorted by text notation."""
    return [action_to_pb(action) for action in sorted(actions, key=Action.text)]
