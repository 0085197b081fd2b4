"""PettingZoo environment speed: env steps per CPU second with random legal actions.

    python3 benchmarks/env_steps.py [--steps N] [--seed S] [--profile]

One step is what a training loop does per action: ``env.last()`` (the acting
agent's observation vector and action mask), a uniform choice among the legal
actions of the mask, ``env.step``; a finished game is reset with the next seed.
Measured on the bare ``raw_env`` and on ``env()`` (PettingZoo's wrappers), in
one process on one core; CPU time, the fair figure on a shared machine.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from typing import Any

import numpy as np

from arena.envs import kahuna_v0


def run(environment: Any, steps: int, seed: int) -> tuple[float, int]:
    """(steps per CPU second, games finished) over ``steps`` steps."""
    rng = np.random.default_rng(seed)
    game_seed = seed
    environment.reset(seed=game_seed)
    games = 0
    started = time.process_time()
    for _ in range(steps):
        observation, _, termination, truncation, _ = environment.last()
        if termination or truncation:
            games += 1
            game_seed += 1
            environment.reset(seed=game_seed)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        environment.step(int(legal[rng.integers(len(legal))]))
    return steps / (time.process_time() - started), games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    for label, make in (("raw_env", kahuna_v0.raw_env), ("env (wrapped)", kahuna_v0.env)):
        if args.profile:
            profiler = cProfile.Profile()
            profiler.runcall(run, make(), args.steps, args.seed)
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(20)
            continue
        per_s, games = run(make(), args.steps, args.seed)
        print(f"{label:14} {per_s:10,.0f} steps/s per core ({args.steps:,} steps, {games} games)")


if __name__ == "__main__":
    main()
