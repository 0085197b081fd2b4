"""python_ismcts: the search's budget, its determinism under a seed, its choices."""

from __future__ import annotations

import random

import pytest
from bot import CLOCK_SHARE, IsmctsBot, candidates, parse_args, think_seconds
from ismcts import PLAYOUTS, reward, search
from kahuna_bot import Action, Clock, Observation, greedy

from arena.kahuna import legal_actions, observe, place
from tests.kahuna.util import playout, pos, run


def _sdk_observation(engine_obs: object, clock: Clock) -> Observation:
    fields = dict(vars(engine_obs))
    return Observation(game_index=0, clock=clock, **fields)


@pytest.mark.parametrize(
    ("think_ms", "deadline_ms", "bank_ms", "expected_s"),
    [
        pytest.param(200, 2000, 30000, 0.2, id="think-time"),
        pytest.param(5000, 2000, 0, CLOCK_SHARE * 2.0, id="capped-by-the-deadline"),
        pytest.param(5000, 100, 900, CLOCK_SHARE * 1.0, id="capped-by-what-is-left"),
    ],
)
def test_think_time_is_never_more_than_the_share_of_the_clock(
    think_ms: int, deadline_ms: int, bank_ms: int, expected_s: float
) -> None:
    *_, (state, _, _) = list(playout(1))[:10]
    obs = _sdk_observation(observe(state, state.to_move or 0), Clock(deadline_ms, bank_ms))
    assert think_seconds(obs, think_ms) == pytest.approx(expected_s)


@pytest.mark.parametrize("name", ["eager", "greedy"])
def test_a_fixed_number_of_iterations_is_deterministic_under_a_seed(name: str) -> None:
    *_, (state, _, _) = list(playout(4))[:30]
    obs = observe(state, state.to_move or 0)
    legal = legal_actions(state)
    chosen = PLAYOUTS[name]
    first = search(obs, legal, random.Random("7"), seconds=60.0, max_iterations=150, playout=chosen)
    again = search(obs, legal, random.Random("7"), seconds=60.0, max_iterations=150, playout=chosen)
    assert first.iterations == again.iterations == 150
    assert (first.action, first.root_visits) == (again.action, again.root_visits)
    assert first.action in legal


@pytest.mark.parametrize("name", sorted(PLAYOUTS))
def test_it_takes_the_island_that_wins_the_game(name: str) -> None:
    """Final turn of round 3 (C5): a place on a free HUNA line wins HUNA and the game
    (3 islands' worth of points to none); a pass or a discard loses on points."""
    state = pos(
        round=3, to_move=0, final_turn=2, opponent_passed=True, points=[3, 4], rest="played",
        hands=[["HUNA"], []], faceup=[None, None, None],
        bridges={"ALOA-HUNA": 0, "DUDA-HUNA": 0, "HUNA-LALE": 1, "BARI-COCO": 1},
    )  # fmt: skip
    legal = legal_actions(state)
    winning = {
        action for action in legal
        if reward(run(state, str(action), *([] if action.ends_turn else ["pass"])), 0) == 1.0
    }  # fmt: skip
    assert winning == {place("HUNA", "ELAI-HUNA"), place("HUNA", "HUNA-IFFI")}
    assert len(legal) > len(winning)
    result = search(
        observe(state, 0), legal, random.Random(1), seconds=60.0, max_iterations=60,
        playout=PLAYOUTS[name],
    )  # fmt: skip
    assert result.action in winning


def test_settings_come_from_the_command_line_over_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KAHUNA_ISMCTS_THINK_MS", "70")
    monkeypatch.setenv("KAHUNA_ISMCTS_PLAYOUT", "random")
    monkeypatch.setenv("KAHUNA_ISMCTS_WIDTH", "3")
    args = parse_args(["--think-ms", "30", "--bias", "0.5"])
    assert (args.think_ms, args.playout, args.iterations) == (30, "random", None)
    assert (args.width, args.bias) == (3, 0.5)
    for name in ("KAHUNA_ISMCTS_THINK_MS", "KAHUNA_ISMCTS_PLAYOUT", "KAHUNA_ISMCTS_WIDTH"):
        monkeypatch.delenv(name)
    defaults = parse_args([])
    assert (defaults.playout, defaults.width, defaults.bias) == ("greedy", 6, 0.0)
    with pytest.raises(ValueError, match="unknown playout"):
        IsmctsBot(100, "clever", "0")
    with pytest.raises(ValueError, match="width and the bias"):
        IsmctsBot(100, "greedy", "0", width=-1)
    with pytest.raises(ValueError, match="width and the bias"):
        IsmctsBot(100, "greedy", "0", bias=float("nan"))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("width", [1, 3, 6])
def test_the_root_width_keeps_legal_actions_and_the_greedy_choice(seed: int, width: int) -> None:
    """At every decision of a random game: the root choices are distinct legal actions,
    as many as the width allows, and they include what the greedy bot would play (so the
    search can always do at least what its playout policy's author would)."""
    for state, action, _ in playout(seed):
        if action is None:
            continue
        seat = state.to_move or 0
        obs = _sdk_observation(observe(state, seat), Clock(2000, 30000))
        legal = legal_actions(state)
        chosen = candidates(obs, legal, width)
        assert len(set(chosen)) == len(chosen) == min(width, len(legal))
        assert set(chosen) <= set(legal)
        assert greedy.choose(obs, legal) in chosen


def _biased_choice(obs: object, chosen: tuple[Action, ...], bias: float) -> Action:
    return search(
        obs, chosen, random.Random(5), seconds=60.0, max_iterations=40,  # type: ignore[arg-type]
        favourite=chosen[0], bias=bias,
    ).action  # fmt: skip


def test_a_strong_bias_keeps_the_favourite_where_the_search_prefers_another() -> None:
    """Progressive bias: at positions where 40 unbiased iterations pick another root
    action than greedy's, a bias of 100 keeps greedy's (it fades only as 100 / visits)."""
    differing = 0
    for state, action, _ in playout(3):
        if action is None or differing >= 3:
            continue
        obs = observe(state, state.to_move or 0)
        chosen = candidates(obs, legal_actions(state), 6)
        if len(chosen) >= 2 and _biased_choice(obs, chosen, 0.0) != chosen[0]:
            differing += 1
            assert _biased_choice(obs, chosen, 100.0) == chosen[0]
    assert differing >= 3
