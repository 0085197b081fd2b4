"""An information-set MCTS Kahuna bot (see README.md and ismcts.py).

Strength settings, from the command line (``bot.toml``'s ``command``) or
the environment (the command line wins):

    --think-ms N      KAHUNA_ISMCTS_THINK_MS   thinking time per decision (default 200)
    --iterations N    KAHUNA_ISMCTS_ITERATIONS a fixed number of iterations instead
    --playout NAME    KAHUNA_ISMCTS_PLAYOUT    greedy (default), round, eager or random
    --width N         KAHUNA_ISMCTS_WIDTH      root candidates (default 6; 0: every action)
    --bias B          KAHUNA_ISMCTS_BIAS       progressive bias to greedy's choice (default 0)
    --seed S          KAHUNA_ISMCTS_SEED       the search's seed (default 0)

Never thinks longer than ``CLOCK_SHARE`` of what the request leaves
(the per-action limit plus the bank).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Sequence

from ismcts import PLAYOUTS, search
from kahuna_bot import Action, Bot, Observation, greedy, run

DEFAULT_WIDTH = 6
DEFAULT_PLAYOUT = "greedy"
DEFAULT_BIAS = 0.0
CLOCK_SHARE = 0.25  # of action_deadline_ms + time_bank_ms, at most, per decision
DEFAULT_THINK_MS = 200


def candidates(
    observation: greedy.Position, legal_actions: Sequence[Action], width: int
) -> tuple[Action, ...]:
    """The search's root choices, the greedy bot's own choice first (its rule between
    ending the turn and playing on is not its score order), then, for a ``width`` above
    0, the legal actions the greedy evaluation rates best (ties by text), ``width`` in
    all; for 0 (or as many legal actions as the width), the others in their order."""
    first = greedy.choose(observation, legal_actions)
    if width <= 0 or len(legal_actions) <= width:
        return (first, *(a for a in legal_actions if a != first))
    scored = sorted(
        (a for a in legal_actions if a != first),
        key=lambda a: (-greedy.score_action(observation, a), a.text()),
    )
    return (first, *scored[: width - 1])


def think_seconds(observation: Observation, think_ms: int) -> float:
    """The configured think time, capped at CLOCK_SHARE of what the clock leaves."""
    clock = observation.clock
    left_ms = clock.action_deadline_ms + clock.time_bank_ms
    return min(think_ms, CLOCK_SHARE * left_ms) / 1000.0


class IsmctsBot(Bot):
    name = "python_ismcts"
    version = "1"

    def __init__(
        self,
        think_ms: int,
        playout: str,
        seed: str,
        iterations: int | None = None,
        width: int = DEFAULT_WIDTH,
        bias: float = DEFAULT_BIAS,
    ) -> None:
        if playout not in PLAYOUTS:
            raise ValueError(f"unknown playout {playout!r}: choose one of {sorted(PLAYOUTS)}")
        if think_ms < 1:
            raise ValueError(f"think time must be at least 1 ms, not {think_ms}")
        if width < 0 or not 0.0 <= bias < float("inf"):
            raise ValueError(f"the width and the bias must be 0 or more, not {width} and {bias}")
        self.think_ms = think_ms
        self.playout = PLAYOUTS[playout]
        self.seed = seed
        self.iterations = iterations
        self.width = width
        self.bias = bias

    def choose(self, observation: Observation, legal_actions: tuple[Action, ...]) -> Action:
        rng = random.Random(f"{self.seed}:{observation.game_index}:{len(observation.history)}")
        chosen = candidates(observation, legal_actions, self.width)
        result = search(
            observation.engine(),
            chosen,
            rng,
            seconds=think_seconds(observation, self.think_ms),
            max_iterations=self.iterations,
            playout=self.playout,
            favourite=chosen[0],
            bias=self.bias,
        )
        return result.action


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    env = os.environ.get
    parser = argparse.ArgumentParser(description="Kahuna ISMCTS bot")
    parser.add_argument(
        "--think-ms", type=int, default=int(env("KAHUNA_ISMCTS_THINK_MS", DEFAULT_THINK_MS))
    )
    iterations = env("KAHUNA_ISMCTS_ITERATIONS")
    parser.add_argument("--iterations", type=int, default=int(iterations) if iterations else None)
    parser.add_argument("--playout", default=env("KAHUNA_ISMCTS_PLAYOUT", DEFAULT_PLAYOUT))
    parser.add_argument("--width", type=int, default=int(env("KAHUNA_ISMCTS_WIDTH", DEFAULT_WIDTH)))
    parser.add_argument(
        "--bias", type=float, default=float(env("KAHUNA_ISMCTS_BIAS", DEFAULT_BIAS))
    )
    parser.add_argument("--seed", default=env("KAHUNA_ISMCTS_SEED", "0"))
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = parse_args(sys.argv[1:])
    bot = IsmctsBot(args.think_ms, args.playout, args.seed, args.iterations, args.width, args.bias)
    raise SystemExit(run(bot))
