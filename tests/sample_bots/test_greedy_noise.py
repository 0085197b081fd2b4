"""python_greedy's noise setting (noise.py): parsing, reproducibility, frequency.

The real sandboxed match of a noisy greedy bot is in test_matches.py.
"""

from __future__ import annotations

import dataclasses

import greedy_eval
import pytest
from kahuna_bot import Action, Observation, parse_action
from noise import NoiseError, NoiseSettings, noisy, settings

from .test_greedy import _observation

SETTINGS_CASES = [
    pytest.param([], {}, NoiseSettings(0.0, "0"), id="defaults"),
    pytest.param(["--noise", "0.25"], {}, NoiseSettings(0.25, "0"), id="argument"),
    pytest.param([], {"KAHUNA_GREEDY_NOISE": "0.1"}, NoiseSettings(0.1, "0"), id="environment"),
    pytest.param(
        ["--noise", "0.3", "--seed", "7"],
        {"KAHUNA_GREEDY_NOISE": "0.9", "KAHUNA_RANDOM_SEED": "5"},
        NoiseSettings(0.3, "7"),
        id="arguments-beat-environment",
    ),
    pytest.param([], {"KAHUNA_RANDOM_SEED": "42"}, NoiseSettings(0.0, "42"), id="seed-env"),
    pytest.param(["--noise=1"], {}, NoiseSettings(1.0, "0"), id="equals-form"),
]


@pytest.mark.parametrize(("argv", "environ", "expected"), SETTINGS_CASES)
def test_settings(argv: list[str], environ: dict[str, str], expected: NoiseSettings) -> None:
    assert settings(argv, environ) == expected


BAD_CASES = [
    pytest.param(["--noise", "1.5"], {}, "--noise: noise must be a probability", id="above-1"),
    pytest.param(["--noise", "-0.1"], {}, "probability in [0, 1]", id="negative"),
    pytest.param(["--noise", "nan"], {}, "probability in [0, 1]", id="nan"),
    pytest.param(["--noise", "lots"], {}, "must be a number", id="not-a-number"),
    pytest.param([], {"KAHUNA_GREEDY_NOISE": "2"}, "KAHUNA_GREEDY_NOISE", id="bad-env"),
    pytest.param(["--temperature", "1"], {}, "unrecognized arguments", id="unknown-argument"),
]


@pytest.mark.parametrize(("argv", "environ", "message"), BAD_CASES)
def test_bad_settings_name_the_problem(
    argv: list[str], environ: dict[str, str], message: str
) -> None:
    with pytest.raises(NoiseError, match=message.replace("[", r"\[").replace("]", r"\]")):
        settings(argv, environ)


LEGAL = tuple(
    parse_action(text)
    for text in (
        "draw deck",
        "draw ALOA",
        "draw BARI",
        "draw COCO",
        "place ALOA ALOA-BARI",
        "place ALOA ALOA-HUNA",
        "discard ALOA",
    )
)


def _observations(count: int) -> list[Observation]:
    base = _observation({}, ("ALOA",))
    return [dataclasses.replace(base, game_index=i) for i in range(count)]


def _picks(config: NoiseSettings, observations: list[Observation]) -> list[Action | str]:
    choose = noisy(greedy_eval.choose, config)
    return [choose(obs, LEGAL) for obs in observations]


def test_no_noise_is_the_greedy_bot_itself() -> None:
    assert noisy(greedy_eval.choose, NoiseSettings()) is greedy_eval.choose


def test_noise_is_reproducible_from_the_seed() -> None:
    observations = _observations(200)
    first = _picks(NoiseSettings(0.5, "3"), observations)
    assert first == _picks(NoiseSettings(0.5, "3"), observations)
    assert first != _picks(NoiseSettings(0.5, "4"), observations)


@pytest.mark.slow  # long: a simulation or many generated cases
@pytest.mark.parametrize("noise", [0.1, 0.5, 1.0])
def test_random_actions_come_at_the_set_rate(noise: float) -> None:
    observations = _observations(2000)
    greedy = [greedy_eval.choose(obs, LEGAL) for obs in observations]
    picks = _picks(NoiseSettings(noise, "0"), observations)
    assert all(pick in LEGAL for pick in picks)
    # a random pick equals the greedy one 1/7 of the time: off-greedy rate is noise * 6/7
    off = sum(pick != want for pick, want in zip(picks, greedy, strict=True)) / len(picks)
    expected = noise * (len(LEGAL) - 1) / len(LEGAL)
    assert abs(off - expected) < 4 * (expected * (1 - expected) / len(picks)) ** 0.5 + 1e-9
    if noise == 1.0:
        counts = {action.text(): picks.count(action) for action in LEGAL}
        assert min(counts.values()) > 200, counts  # uniform: about 286 each
