"""What crosses the wire to each bot is its seat's observation and no more (R9).

A wire tap records every byte the referee sends; the test replays each game's
record and checks every ActionRequest, decoded, against
``arena.kahuna.observe`` for the bot's seat and ``legal_actions`` for the
state, and that the hidden record reaches a bot only in GameOver.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from arena.kahuna import (
    Action,
    SeenEvent,
    State,
    Variant,
    apply,
    legal_actions,
    new_game,
    observe,
    parse_record,
    start_round,
)
from arena.protocol.convert import action_from_pb
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee import GameReport, MatchConfig, TimeControl, run_match
from arena.referee.results import deal_replayed_in_half
from arena.testing.protocol import observation_from_pb

from .conftest import MakeBot, assert_no_process_left

pytestmark = pytest.mark.slow

REQUEST_FIELDS = {
    "request_id", "game_index", "observation", "legal_actions", "action_deadline_ms",
    "time_bank_ms",
}


def _decision_states(record: dict[str, object]) -> list[State]:
    """The state before each action of a recorded game."""
    parsed = parse_record(json.dumps(record))
    state = new_game(parsed.deal, parsed.variant)
    reshuffles = list(parsed.reshuffles)
    states = []
    for seat, action in parsed.actions:
        if state.needs_reshuffle:
            state = start_round(state, reshuffles.pop(0))
        states.append(state)
        state = apply(state, action, seat)
    return states


def _check_game(game: GameReport, requests: list[tuple[int, referee_pb2.ActionRequest]],
                names: tuple[str, str]) -> None:
    states = _decision_states(game.record)
    assert len(requests) == len(states) == game.actions
    known: dict[int, list[SeenEvent]] = {0: [], 1: []}
    for (slot, request), state in zip(requests, states, strict=True):
        seat = game.bots_by_seat.index(names[slot])
        assert state.to_move == seat
        assert {field.name for field, _ in request.ListFields()} <= REQUEST_FIELDS
        decoded = observation_from_pb(request.observation, known[seat])
        assert decoded == observe(state, seat)
        known[seat] = list(decoded.history)
        sent: list[Action] = [action_from_pb(action) for action in request.legal_actions]
        assert sent == sorted(legal_actions(state), key=Action.text)


@pytest.mark.parametrize(
    "variant",
    [Variant(), Variant(tactical=True), Variant(strategic=True, tactical=True)],
    ids=["basic", "tactical", "strategic-tactical"],
)
def test_every_request_is_exactly_the_seats_observation(
    make_bot: MakeBot, variant: Variant
) -> None:
    bot_a, bot_b = make_bot("random", name="a"), make_bot("random", name="b")
    wire: list[tuple[int, bytes]] = []
    config = MatchConfig(games=2, seed=5, variant=variant, time_control=TimeControl(2000, 2000))
    report = run_match(config, bot_a, bot_b, wire_tap=lambda slot, raw: wire.append((slot, raw)))
    messages = [(slot, referee_pb2.PlayResponse.FromString(raw)) for slot, raw in wire]
    requests: dict[int, list[tuple[int, referee_pb2.ActionRequest]]] = defaultdict(list)
    seen_record: dict[int, set[int]] = defaultdict(set)
    for slot, message in messages:
        kind = message.WhichOneof("kind")
        assert kind is not None
        assert message.FindInitializationErrors() == []
        if kind == "action_request":
            game_index = message.action_request.game_index
            assert slot not in seen_record[game_index], "request after the record was revealed"
            requests[game_index].append((slot, message.action_request))
        if kind == "game_over":
            seen_record[message.game_over.game_index].add(slot)
            game = report.games[message.game_over.game_index]
            if deal_replayed_in_half(config, game.index):  # this half plays the deal again
                assert message.game_over.record_json == ""
            else:
                assert json.loads(message.game_over.record_json) == game.record
        if kind in ("welcome", "game_start"):
            assert "deal" not in str(message)
    assert [kind for _, kind in _kinds(messages, 0)][:2] == ["welcome", "game_start"]
    for game in report.games:
        assert game.reason != "forfeit"
        _check_game(game, requests[game.index], ("a", "b"))
        assert seen_record[game.index] == {0, 1}
    assert_no_process_left(bot_a, bot_b)


def _kinds(
    messages: list[tuple[int, referee_pb2.PlayResponse]], slot: int
) -> list[tuple[int, str]]:
    return [(s, str(m.WhichOneof("kind"))) for s, m in messages if s == slot]
