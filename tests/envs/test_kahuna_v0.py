"""kahuna_v0: PettingZoo's own API and seed tests, the seat views, rewards and refusals."""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from arena.envs import kahuna_v0
from arena.envs.kahuna_v0 import public_text
from arena.kahuna import Variant, deal_from_seed, new_game, observe
from arena.kahuna.encoding import ACTION_COUNT, ACTIONS, encode_observation
from arena.kahuna.view_public import spectate
from arena.testing.worlds import other_worlds

POLICY_FILE = Path(__file__).resolve().parents[2] / "sample_bots" / "python_policy" / "policy.py"
VARIANTS = [
    pytest.param({}, id="base"),
    pytest.param({"strategic": True}, id="strategic"),
    pytest.param({"tactical": True}, id="tactical"),
    pytest.param({"strategic": True, "tactical": True}, id="both"),
]


# The observation is PettingZoo's action-mask dict ({"observation", "action_mask"}), as
# in its own classic games; api_test warns about a dict space in any game outside its
# own list of those.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize("variant", VARIANTS)
def test_pettingzoo_api_test(variant: dict[str, bool]) -> None:
    api_test(kahuna_v0.env(**variant), num_cycles=1000)


@pytest.mark.parametrize("variant", VARIANTS[:2])
def test_pettingzoo_seed_test(variant: dict[str, bool]) -> None:
    seed_test(lambda: kahuna_v0.env(**variant), num_cycles=1000)


def test_the_seed_is_the_arena_deal() -> None:
    env = kahuna_v0.raw_env(tactical=True)
    env.reset(seed=7)
    arena = new_game(deal_from_seed(7), Variant(tactical=True))
    assert (env.game.hands, env.game.faceup, env.game.deck) == (
        arena.hands, arena.faceup, arena.deck
    )
    env.reset(seed=8)
    assert env.game.hands != arena.hands


def _seeds_after(env: Any, seed: int | None, games: int) -> list[int]:
    if seed is not None:
        env.reset(seed=seed)
    seeds = []
    for _ in range(games):
        env.reset()
        seeds.append(env.unwrapped.seed)
    return seeds


def test_a_run_seeded_once_deals_the_same_games_again() -> None:
    """Gymnasium's convention, which training loops and vector environments follow: seed
    the first reset, then reset() without a seed. Each later game came from the system's
    entropy, so the run could not be repeated."""
    first = _seeds_after(kahuna_v0.env(), 5, 4)
    assert first == _seeds_after(kahuna_v0.env(), 5, 4)
    assert 5 not in first and len(set(first)) == 4
    assert all(0 <= seed < 2**63 for seed in first)
    assert first != _seeds_after(kahuna_v0.env(), 6, 4)
    env = kahuna_v0.env()
    _seeds_after(env, 9, 2)
    assert _seeds_after(env, 5, 4) == first  # a new seed starts its sequence again


def test_a_run_never_seeded_deals_from_entropy() -> None:
    assert _seeds_after(kahuna_v0.env(), None, 3) != _seeds_after(kahuna_v0.env(), None, 3)


@pytest.mark.parametrize(
    "seed", [-1, 2**63, 2**64 + 7, 3.7, "12", True, np.float64(2.0)],
    ids=["negative", "2**63", "aliases-7", "float", "text", "bool", "numpy-float"],
)  # fmt: skip
def test_a_seed_that_is_not_an_arena_seed_is_refused(seed: object) -> None:
    """The engine reads seeds modulo 2**64: 2**64 + 7 would deal seed 7's game again,
    -1 that of 2**64 - 1, and 3.7 that of 3, each without a word."""
    env = kahuna_v0.env()
    with pytest.raises(ValueError, match=r"the seed must be an integer in \[0, 2\*\*63\)"):
        env.reset(seed=seed)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", [0, 2**63 - 1, np.int64(9), np.uint64(2**63 - 1)])
def test_every_arena_seed_is_taken(seed: int) -> None:
    env = kahuna_v0.raw_env()
    env.reset(seed=seed)
    assert env.seed == int(seed) and type(env.seed) is int
    assert env.game.hands == new_game(deal_from_seed(int(seed))).hands


def _play(env: Any, choose: Callable[[dict[str, np.ndarray]], int], seed: int) -> dict[str, float]:
    env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        raw = env.unwrapped
        seat = raw.possible_agents.index(agent)
        expected = encode_observation(observe(raw.game, seat))
        assert observation["observation"].tolist() == expected
        assert raw.game.to_move == seat
        env.step(choose(observation))
    return totals


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_whole_game_shows_each_seat_its_own_view_and_ends_zero_sum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    totals = _play(
        kahuna_v0.env(), lambda o: int(rng.choice(np.flatnonzero(o["action_mask"]))), seed
    )
    assert sorted(totals.values()) in ([-1.0, 1.0], [0.0, 0.0])


def test_the_waiting_seat_has_an_empty_mask_and_its_own_hand() -> None:
    env = kahuna_v0.raw_env()
    env.reset(seed=3)
    waiting = env.observe("player_1")
    assert not waiting["action_mask"].any()
    assert waiting["observation"].tolist() == encode_observation(observe(env.game, 1))
    assert env.observe("player_0")["observation"].tolist() != waiting["observation"].tolist()


def test_an_illegal_action_ends_the_game_against_its_player() -> None:
    env = kahuna_v0.env()
    env.reset(seed=5)
    mask = env.observe("player_0")["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    env.step(illegal)
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": -1.0, "player_1": 0.0}
    assert env.infos["player_0"] == {"illegal_action": True}
    assert not env.observe("player_0")["action_mask"].any()


def test_the_rendered_text_says_an_illegal_action_ended_the_game() -> None:
    """The engine's position stays as before the illegal action: its text read
    'player_0 to move' in a game that was over."""
    env = kahuna_v0.env(render_mode="ansi")
    env.reset(seed=5)
    illegal = int(np.flatnonzero(env.observe("player_0")["action_mask"] == 0)[0])
    env.step(illegal)
    text = env.render()
    assert text.startswith("round 1, finished: player_0 played an illegal action;"), text
    assert "to move" not in text
    env.reset(seed=5)
    assert env.render().startswith("round 1, player_0 to move;")


@pytest.mark.parametrize("wrapped", [True, False], ids=["env", "raw_env"])
def test_the_global_state_is_not_offered_and_says_so(wrapped: bool) -> None:
    """PettingZoo's ``state()`` (a centralised critic's input) is named as not implemented,
    not shadowed by the engine's position ("'State' object is not callable")."""
    env = kahuna_v0.env() if wrapped else kahuna_v0.raw_env()
    env.reset(seed=4)
    with pytest.raises(NotImplementedError, match="kahuna_v0"):
        env.state()
    assert env.unwrapped.game.hands == new_game(deal_from_seed(4)).hands


@pytest.mark.parametrize("action", [-1, ACTION_COUNT, 2.5, "pass", None, True])
def test_an_action_outside_the_space_is_refused(action: object) -> None:
    env = kahuna_v0.env()
    env.reset(seed=5)
    with pytest.raises(ValueError, match=r"integer in \[0, 161\)"):
        env.step(action)


@pytest.mark.parametrize(
    ("variant", "shown"),
    [
        pytest.param({"tactical": "false"}, "tactical must be True or False, not 'false'",
                     id="text-false"),
        pytest.param({"strategic": "no"}, "strategic must be True or False, not 'no'", id="text"),
        pytest.param({"strategic": 1}, "strategic must be True or False, not 1", id="int"),
        pytest.param({"tactical": None}, "tactical must be True or False, not None", id="none"),
    ],
)  # fmt: skip
def test_a_variant_flag_that_is_not_a_bool_is_refused_naming_it(
    variant: dict[str, object], shown: str
) -> None:
    """A flag read as text from a config ("false") would have turned the variant on."""
    with pytest.raises(ValueError, match=shown):
        kahuna_v0.env(**variant)  # type: ignore[arg-type]


def test_a_numpy_bool_is_a_variant_flag() -> None:
    env = kahuna_v0.raw_env(strategic=np.bool_(True), tactical=np.False_)  # type: ignore[arg-type]
    assert env.variant == Variant(strategic=True, tactical=False)


def test_each_agent_s_spaces_sample_on_their_own_seed() -> None:
    """Seeding one agent's action space (as PettingZoo's seed_test does, 42 and 43) leaves
    the other agent's samples as its own seed gives them."""
    env = kahuna_v0.env()
    env.reset(seed=1)

    def samples(other_seed: int) -> list[int]:
        env.action_space("player_0").seed(42)
        env.observation_space("player_0").seed(42)
        env.action_space("player_1").seed(other_seed)
        env.observation_space("player_1").seed(other_seed)
        drawn = [int(env.action_space("player_0").sample()) for _ in range(20)]
        observed = env.observation_space("player_0").sample()["observation"]
        return [*drawn, *observed.tolist()]

    assert samples(43) == samples(7)
    assert env.action_space("player_0") is not env.action_space("player_1")


def test_the_example_policy_plays_in_the_environment_unchanged() -> None:
    spec = importlib.util.spec_from_file_location("python_policy_policy", POLICY_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    totals = _play(kahuna_v0.env(tactical=True), module.policy, seed=11)
    assert sorted(totals.values()) in ([-1.0, 1.0], [0.0, 0.0])
    assert ACTIONS[module.policy({"observation": [0.0] * 200, "action_mask": [0] * 160 + [1]})]


def test_the_learning_guide_s_example_runs_as_written() -> None:
    """The guide's first Python block, pasted into a fresh interpreter, plays a game to
    its end (it called a my_policy that nothing defined)."""
    guide = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "learning.md").read_text()
    block = guide.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, Any] = {}
    exec(compile(block, "learning.md", "exec"), namespace)
    env = namespace["env"]
    assert not env.agents and env.unwrapped.game.is_finished


def test_the_render_modes_pass_pettingzoo_s_render_test() -> None:
    render_test(kahuna_v0.env)


@pytest.mark.parametrize("mode", ["rgb_array", "ANSI", ""])
def test_an_unknown_render_mode_is_refused_naming_the_modes(mode: str) -> None:
    with pytest.raises(ValueError, match="render_mode must be one of ansi, human or None"):
        kahuna_v0.env(render_mode=mode)


def test_the_rendered_text_is_the_public_position_the_same_in_every_world_a_seat_cannot_tell(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Rendering shows no hidden card: the text is the same in every world either seat
    cannot rule out (the spectator leak test of tests/kahuna/test_spectate.py)."""
    env = kahuna_v0.raw_env(render_mode="ansi")
    env.reset(seed=21)
    rng = random.Random(21)
    worlds = 0
    while env.agents and worlds < 60:
        text = env.render()
        assert isinstance(text, str) and f"{env.agent_selection} to move" in text
        state = env.game
        for seat in (0, 1):
            for world in other_worlds(state, seat, rng, 2):
                worlds += 1
                assert public_text(spectate(world, history=False)) == text
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    assert worlds >= 60
    human = kahuna_v0.raw_env(render_mode="human")
    human.reset(seed=21)
    assert human.render() is None
    assert capsys.readouterr().out.startswith("round 1, player_")
