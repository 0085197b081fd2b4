"""The greedy bot's optional noise: with probability p, a uniformly random legal action.

A noisy greedy bot is a bot of close but lower strength than the greedy bot,
for measuring statistics on real games (benchmarks/pairing_variance.py).
The settings come from the command line, so a bot directory sets them in its
``bot.toml`` (``command = ["python3", "bot.py", "--noise", "0.1"]``), else
from the environment (``KAHUNA_GREEDY_NOISE``, ``KAHUNA_RANDOM_SEED``) when
the bot is run by hand; the sandbox clears the environment, so a sandboxed
bot reads only its command line. The default is no noise: the plain greedy bot.

Reproducible like python_random: each decision's draw comes from a generator
seeded with the seed, the game index and the number of events seen so far.
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kahuna_bot import Action, Choose, Observation

NOISE_ENV = "KAHUNA_GREEDY_NOISE"
SEED_ENV = "KAHUNA_RANDOM_SEED"


class NoiseError(ValueError):
    """A noise setting that is not a probability, or an unknown argument."""


@dataclass(frozen=True)
class NoiseSettings:
    noise: float = 0.0
    """Probability of a uniformly random legal action instead of the greedy one."""
    seed: str = "0"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.noise) and 0.0 <= self.noise <= 1.0):
            raise NoiseError(f"noise must be a probability in [0, 1], got {self.noise!r}")


def _probability(text: str, source: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise NoiseError(f"{source}: noise must be a number in [0, 1], got {text!r}") from None
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise NoiseError(f"{source}: noise must be a probability in [0, 1], got {text!r}")
    return value


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise NoiseError(message)


def settings(argv: Sequence[str], environ: Mapping[str, str]) -> NoiseSettings:
    """The settings from the arguments (``--noise P``, ``--seed S``), else the environment."""
    parser = _Parser(prog="python_greedy", add_help=False)
    parser.add_argument("--noise")
    parser.add_argument("--seed")
    args = parser.parse_args(list(argv))
    if args.noise is not None:
        noise = _probability(args.noise, "--noise")
    elif environ.get(NOISE_ENV, "").strip():
        noise = _probability(environ[NOISE_ENV].strip(), NOISE_ENV)
    else:
        noise = 0.0
    seed = args.seed if args.seed is not None else environ.get(SEED_ENV, "0")
    return NoiseSettings(noise=noise, seed=seed)


def noisy(choose: Choose, config: NoiseSettings) -> Choose:
    """``choose``, replaced by a random legal action with probability ``config.noise``."""
    if config.noise == 0.0:
        return choose

    def pick(observation: Observation, legal_actions: tuple[Action, ...]) -> Action | str:
        key = f"{config.seed}:{observation.game_index}:{len(observation.history)}"
        rng = random.Random(key)
        if rng.random() < config.noise:
            return rng.choice(legal_actions)
        return choose(observation, legal_actions)

    return pick
