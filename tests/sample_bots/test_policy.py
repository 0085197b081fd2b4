"""kahuna_bot.from_policy: the bot feeds a policy what kahuna_v0 feeds it, and plays it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kahuna_bot import Clock, Observation, PolicyError, from_policy, policy_input

from arena.envs import kahuna_v0
from arena.kahuna import legal_actions, observe
from arena.kahuna.encoding import ACTION_COUNT, ACTIONS, action_index
from tests.kahuna.util import playout

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"


def _sdk_observation(seat_view: object) -> Observation:
    return Observation(game_index=0, clock=Clock(1000, 1000), **dict(vars(seat_view)))


@pytest.mark.parametrize("seed", [1, 2])
def test_the_policy_sees_in_the_bot_what_it_sees_in_the_environment(seed: int) -> None:
    env = kahuna_v0.raw_env()
    for state, action, _ in playout(seed):
        if action is None:
            continue
        seat = state.to_move
        assert seat is not None
        env.game = state
        env._after_move()  # the environment at this position
        in_env = env.observe(kahuna_v0.AGENTS[seat])
        in_bot = policy_input(_sdk_observation(observe(state, seat)), legal_actions(state))
        assert in_bot["observation"] == in_env["observation"].tolist()
        assert in_bot["action_mask"] == in_env["action_mask"].tolist()
        index = action_index(action)
        chosen = from_policy(lambda _obs, i=index: i)  # type: ignore[misc]
        assert chosen(_sdk_observation(observe(state, seat)), legal_actions(state)) is action


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        pytest.param(ACTION_COUNT, r"not an index in \[0, 161\)", id="too-big"),
        pytest.param(-1, r"not an index in \[0, 161\)", id="negative"),
        pytest.param("pass", "not an action index", id="text"),
        pytest.param(1.5, "not an action index", id="fraction"),
    ],
)
def test_a_policy_answer_that_is_no_legal_index_is_refused_by_name(
    returned: object, message: str
) -> None:
    *_, (state, _, _) = list(playout(1))[:1]
    seat = state.to_move or 0
    choose = from_policy(lambda _obs: returned)  # type: ignore[arg-type,return-value]
    with pytest.raises(PolicyError, match=message):
        choose(_sdk_observation(observe(state, seat)), legal_actions(state))


def test_an_illegal_index_is_refused_naming_the_action() -> None:
    *_, (state, _, _) = list(playout(1))[:1]
    legal = set(legal_actions(state))
    illegal = next(i for i, a in enumerate(ACTIONS) if a not in legal)
    choose = from_policy(lambda _obs: illegal)
    expected = rf"chose {ACTIONS[illegal]} \(index {illegal}\), not legal"
    with pytest.raises(PolicyError, match=expected):
        choose(_sdk_observation(observe(state, state.to_move or 0)), tuple(legal))


def test_a_numpy_integer_is_an_index() -> None:
    np = pytest.importorskip("numpy")
    *_, (state, _, _) = list(playout(1))[:1]
    legal = legal_actions(state)
    choose = from_policy(lambda _obs: np.int64(action_index(legal[0])))
    assert choose(_sdk_observation(observe(state, 0)), legal) is legal[0]
    assert ACTIONS[action_index(legal[0])] is legal[0]


@pytest.mark.slow
def test_the_example_policy_bot_plays_a_sandboxed_arena_match(tmp_path: Path) -> None:
    """sample_bots/python_policy in `arena match` (sandboxed, no numpy there): clean games."""
    bot = tmp_path / "python_policy"
    shutil.copytree(
        SAMPLE_BOTS / "python_policy", bot, ignore=shutil.ignore_patterns("__pycache__")
    )
    for path in (tmp_path, *tmp_path.rglob("*")):
        path.chmod(path.stat().st_mode | 0o755 if path.is_dir() else 0o644)
    done = subprocess.run(
        [sys.executable, "-m", "arena", "match", str(bot), str(SAMPLE_BOTS / "python_random"),
         "--games", "2", "--seed", "5", "--json"],
        capture_output=True, text=True, timeout=180, env=os.environ.copy(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    games = summary["games"]
    assert len(games) == 2
    for game in games:
        assert game["status"] == {"python_policy": "ok", "python_random": "ok"}, game
        assert game["failures"] == [], game
    assert summary["score"]["python_policy"] + summary["score"]["python_random"] == 2
