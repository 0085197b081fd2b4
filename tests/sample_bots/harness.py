"""Play games between SDK bots in this process, through real protocol messages.

The arena's engine keeps the true state; every decision is sent to the bot's
``kahuna_bot.Session`` as the ``PlayResponse`` the referee would send (built
with ``arena.protocol.convert``), and the reply is decoded the way the
referee decodes it. No sockets and no sandbox: this checks the SDK and the
bots' play, while the tests that use ``arena match`` check the real path.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from kahuna_bot import Bot, Session

from arena.kahuna import (
    Action,
    ActionType,
    Event,
    Outcome,
    State,
    Variant,
    apply,
    deal_from_seed,
    legal_actions,
    new_game,
    reshuffle_from_seed,
    start_round,
)
from arena.protocol.convert import action_from_pb, actions_to_pb, observation_to_pb
from arena.protocol.gen.kahuna.v1 import referee_pb2

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"


def load_module(relative_path: str, module_name: str) -> ModuleType:
    """Import a sample bot's file (not a package) under a unique module name."""
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, SAMPLE_BOTS / relative_path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class LocalGame:
    outcome: Outcome
    actions: int


def play_local_game(
    bots: tuple[Bot, Bot],
    seed: int,
    game_index: int = 0,
    *,
    variant: Variant = Variant(),  # noqa: B008 (frozen)
    before_request: Callable[[State, int], None] | None = None,
) -> LocalGame:
    """One game, bots[0] in seat 0; the engine's outcome.

    ``before_request(state, seat)`` sees the true state before each request.
    """
    sessions = [Session(bot, token="local") for bot in bots]
    for seat, session in enumerate(sessions):
        start = referee_pb2.GameStart(game_index=game_index, seat=seat, opponent_name="other")
        session.handle(referee_pb2.PlayResponse(game_start=start))
    state = new_game(deal_from_seed(seed), variant)
    events: list[Event] = []
    sent = [0, 0]
    request_id = 0
    while not state.is_finished:
        if state.needs_reshuffle:
            order = reshuffle_from_seed(seed, state.round + 1, state.reshuffle_cards)
            state = start_round(state, order)
            continue
        seat = state.to_move
        assert seat is not None
        if before_request is not None:
            before_request(state, seat)
        request_id += 1
        legal = sorted(legal_actions(state), key=Action.text)
        observation = observation_to_pb(state, seat, events[sent[seat] :], sent[seat])
        sent[seat] = len(events)
        request = referee_pb2.ActionRequest(
            request_id=request_id,
            game_index=game_index,
            observation=observation,
            legal_actions=actions_to_pb(legal),
            action_deadline_ms=2000,
            time_bank_ms=30000,
        )
        reply = sessions[seat].handle(referee_pb2.PlayResponse(action_request=request))
        assert reply is not None and reply.action_reply.request_id == request_id
        action = action_from_pb(reply.action_reply.action)
        drawn = state.deck[0] if action.type is ActionType.DRAW and action.card is None else None
        state = apply(state, action, seat)
        events.append(Event(seat, action, drawn))
    assert state.outcome is not None
    return LocalGame(state.outcome, len(events))
