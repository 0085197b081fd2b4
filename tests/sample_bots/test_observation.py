"""kahuna_bot.observation: what the SDK hands to ``choose`` is the engine's observation.

Games are played in-process through the real ``kahuna.v1`` messages the
referee builds (history sent incrementally); at every decision the SDK's
reassembled observation must equal ``arena.kahuna.observe(state, seat)``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest
from kahuna_bot import (
    Action,
    Bot,
    Clock,
    HistoryBuffer,
    Observation,
    ProtocolError,
    observation_from_proto,
)
from kahuna_bot._gen import game_pb2
from kahuna_bot.observation import VIEW_FIELDS

from arena import kahuna
from arena.protocol.convert import observation_to_pb

from .harness import load_module, play_local_game


def _comparable(observation: Observation | kahuna.Observation) -> dict[str, object]:
    fields = {
        name: getattr(observation, name)
        for name in (
            "seat", "round", "to_move", "points", "supply", "hand", "opponent_hand_size",
            "open_cards", "faceup", "deck_size", "played_cards", "own_facedown_discards",
            "opponent_facedown_count", "final_turns", "opponent_passed", "turn_played_card",
            "turn_discarded", "is_finished",
        )
    }  # fmt: skip
    fields["variant"] = (observation.variant.strategic, observation.variant.tactical)
    fields["bridges"] = dict(observation.bridges)
    fields["controlled"] = dict(observation.controlled)
    fields["history"] = [
        (e.seat, str(e.type), e.card, e.cards, e.line, e.drawn, e.hidden)
        for e in observation.history
    ]
    outcome = observation.outcome
    fields["outcome"] = (
        None if outcome is None else (outcome.winner, str(outcome.termination), outcome.points)
    )
    return fields


@dataclass
class RecordingBot(Bot):
    """Plays like the sample random bot and keeps every observation it got."""

    seen: list[Observation] = field(default_factory=list)

    def choose(self, observation: Observation, legal_actions: tuple[Action, ...]) -> Action:
        self.seen.append(observation)
        random_bot = load_module("python_random/bot.py", "sample_python_random")
        action: Action = random_bot.choose(observation, legal_actions)
        return action


@pytest.mark.parametrize(
    "variant",
    [
        pytest.param(kahuna.Variant(), id="standard"),
        pytest.param(kahuna.Variant(tactical=True), id="tactical"),
        pytest.param(kahuna.Variant(strategic=True), id="strategic"),
    ],
)
@pytest.mark.parametrize("seed", [3, 17])
def test_sdk_observation_equals_the_engines_at_every_decision(
    variant: kahuna.Variant, seed: int
) -> None:
    bots = (RecordingBot(), RecordingBot())
    expected: list[list[dict[str, object]]] = [[], []]

    engine_views: list[list[kahuna.Observation]] = [[], []]

    def remember(state: kahuna.State, seat: int) -> None:
        engine_views[seat].append(kahuna.observe(state, seat))
        expected[seat].append(_comparable(engine_views[seat][-1]))

    game = play_local_game(bots, seed, variant=variant, before_request=remember)
    assert game.actions > 50
    for seat, bot in enumerate(bots):
        assert [_comparable(seen) for seen in bot.seen] == expected[seat]
        assert [seen.engine() for seen in bot.seen] == engine_views[seat]  # engine terms
        assert all(seen.seat == seat for seen in bot.seen)
        assert len(bot.seen[-1].history) > 0


def test_the_sdk_observation_is_the_engines_seat_view_plus_the_game_and_clock() -> None:
    names = [field.name for field in dataclasses.fields(Observation)]
    assert names == ["game_index", *VIEW_FIELDS, "clock"]


def _first_observation(seed: int) -> game_pb2.Observation:
    state = kahuna.new_game(kahuna.deal_from_seed(seed))
    return observation_to_pb(state, 0, [], 0)


def test_history_increment_that_skips_events_is_refused() -> None:
    message = _first_observation(1)
    message.history_start = 4
    with pytest.raises(ProtocolError, match="starts at event 4, but 0 events"):
        observation_from_proto(message, game_index=0, history=HistoryBuffer(), clock=Clock(1, 1))


def test_empty_strings_become_none_and_clock_is_kept() -> None:
    message = _first_observation(2)
    message.faceup[1] = ""
    observation = observation_from_proto(
        message, game_index=5, history=HistoryBuffer(), clock=Clock(2000, 1234)
    )
    assert observation.faceup[1] is None
    assert observation.faceup[0] is not None
    assert observation.clock == Clock(2000, 1234)
    assert observation.game_index == 5
    assert observation.opponent == 1
    assert observation.outcome is None


@pytest.mark.parametrize(
    ("mutate", "error"),
    [
        pytest.param(lambda m: m.ClearField("points"), "points needs one entry", id="no-points"),
        pytest.param(lambda m: m.faceup.append("ALOA"), "3 slots, got 4", id="four-faceup"),
        pytest.param(lambda m: m.supply.append(3), "supply needs one entry", id="three-supply"),
    ],
)
def test_malformed_observations_are_named(mutate: object, error: str) -> None:
    message = _first_observation(3)
    assert callable(mutate)
    mutate(message)
    with pytest.raises(ProtocolError, match=error):
        observation_from_proto(message, game_index=0, history=HistoryBuffer(), clock=Clock(1, 1))
