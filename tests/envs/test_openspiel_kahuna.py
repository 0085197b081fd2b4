"""python_kahuna in OpenSpiel: its own random-simulation test, seat views, resampling, ISMCTS."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")  # open_spiel ships wheels for few platforms

from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

from arena.envs import openspiel_kahuna  # noqa: E402
from arena.kahuna import (  # noqa: E402
    ISLANDS,
    deal_from_seed,
    new_game,
    observation_to_json,
    observe,
)
from arena.kahuna.determinize import Completion  # noqa: E402
from arena.kahuna.encoding import encode_observation  # noqa: E402
from tests.kahuna.util import proven_cards_position  # noqa: E402


def _load(**params: object) -> object:
    return pyspiel.load_game(openspiel_kahuna.SHORT_NAME, {"deals": 50, **params})


@pytest.mark.slow  # long: a simulation or many generated cases
@pytest.mark.parametrize("params", [{}, {"tactical": True, "strategic": True}])
def test_openspiel_random_simulation_test(params: dict[str, bool]) -> None:
    pyspiel.random_sim_test(_load(**params), num_sims=3, serialize=False, verbose=False)


def _played(seed: int, moves: int) -> object:
    state = _load().new_initial_state()
    state.apply_action(seed)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def test_the_chance_move_is_the_arena_deal() -> None:
    state = _played(7, 0)
    arena = new_game(deal_from_seed(7))
    assert (state.engine.hands, state.engine.deck) == (arena.hands, arena.deck)
    fresh = _load().new_initial_state()
    assert fresh.is_chance_node() and len(fresh.chance_outcomes()) == 50


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_seat_sees_its_observation_and_resampled_worlds_look_the_same_to_it(seed: int) -> None:
    state = _played(seed, 12)
    player = state.current_player()
    view = state.information_state_string(player)
    assert json.loads(view) == observation_to_json(observe(state.engine, player))
    assert state.observation_tensor(player) == encode_observation(observe(state.engine, player))
    worlds = [state.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(0.0, 1.0))
              for _ in range(5)]  # fmt: skip
    for world in worlds:
        assert world.information_state_string(player) == view
        assert world.legal_actions() == state.legal_actions()
    opponent = 1 - player
    hidden = {(w.engine.hands[opponent], w.engine.deck) for w in [state, *worlds]}
    assert len(hidden) > 1


def test_a_resampled_world_keeps_the_cards_the_history_proves() -> None:
    """Even where almost no shuffle of the unseen cards keeps them in the opponent's hand
    or face-down discards: a world without them is one the player can rule out."""
    real, player = proven_cards_position()
    state = _played(0, 0)
    state.engine = real
    held = Counter(Completion(observe(real, player)).places.held)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    for _ in range(20):
        world = state.resample_from_infostate(player, sampler)
        engine, opp = world.engine, 1 - player
        hidden = Counter(
            ISLANDS.index(c) for c in (*engine.hands[opp], *engine.facedown_discards[opp])
        )
        assert not held - hidden
        assert world.information_state_string(player) == state.information_state_string(player)


def _finished() -> object:
    state = _played(6, 0)
    rng = np.random.default_rng(6)
    while not state.is_terminal():
        state.apply_action(int(rng.choice(state.legal_actions())))
    return state


@pytest.mark.parametrize(
    ("state", "action", "refusal"),
    [
        (lambda: _load().new_initial_state(), 50, r"chance outcomes 0 to 49, not 50"),
        (lambda: _load().new_initial_state(), -2, r"chance outcomes 0 to 49, not -2"),
        (lambda: _played(1, 0), 161, r"an index in \[0, 161\), not 161"),
        (lambda: _played(1, 0), 0, r"action 0 \(place ALOA ALOA-BARI\) is not legal here"),
        (_finished, 160, r"action 160 \(pass\) is not legal here: R7: the game is over"),
    ],
    ids=["deal-too-high", "deal-negative", "index-too-high", "card-not-held", "game-over"],
)
def test_an_action_not_legal_is_refused_and_changes_nothing(
    state: object, action: int, refusal: str
) -> None:
    """An agent's illegal action never becomes a position the rules cannot reach (a
    third ALOA in a hand)."""
    position = state()  # type: ignore[operator]
    before = str(position)
    with pytest.raises(ValueError, match=refusal):
        position.apply_action(action)
    assert str(position) == before


@pytest.mark.parametrize(
    "deals",
    [0, -3, openspiel_kahuna.MAX_DEALS + 1, 2**31 - 1],
    ids=["none", "negative", "one-too-many", "int-max"],
)
def test_a_number_of_deals_outside_the_limit_is_refused_naming_it(deals: int) -> None:
    """OpenSpiel lists every deal as a chance outcome: 2**31 - 1 deals (its largest
    integer parameter) built that list at the first chance node until memory ran out."""
    with pytest.raises(ValueError, match=rf"deals must be 1 to 1048576 .*, not {deals}"):
        pyspiel.load_game(openspiel_kahuna.SHORT_NAME, {"deals": deals})


def test_the_most_deals_are_taken() -> None:
    game = pyspiel.load_game(openspiel_kahuna.SHORT_NAME, {"deals": openspiel_kahuna.MAX_DEALS})
    outcomes = game.new_initial_state().chance_outcomes()
    assert len(outcomes) == openspiel_kahuna.MAX_DEALS and outcomes[-1][0] == 2**20 - 1


def test_ismcts_plays_a_legal_action() -> None:
    game = _load()
    bot = ismcts.ISMCTSBot(
        game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(1)), 2.0, 20,
        random_state=np.random.RandomState(2),
    )  # fmt: skip
    state = _played(4, 10)
    assert bot.step(state) in state.legal_actions()
