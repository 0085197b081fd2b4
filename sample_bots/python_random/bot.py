"""A Kahuna bot that plays a uniformly random legal action.

Reproducible: each decision is drawn from a generator seeded with the
KAHUNA_RANDOM_SEED environment variable (default 0), the game index and
the number of events seen so far, so a restarted bot plays the same way.
"""

import os
import random

from kahuna_bot import Action, Observation, run

SEED = os.environ.get("KAHUNA_RANDOM_SEED", "0")


def choose(observation: Observation, legal_actions: tuple[Action, ...]) -> Action:
    rng = random.Random(f"{SEED}:{observation.game_index}:{len(observation.history)}")
    return rng.choice(legal_actions)


if __name__ == "__main__":
    raise SystemExit(run(choose, name="python_random", version="1"))
