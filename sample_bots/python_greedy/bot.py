"""A greedy Kahuna bot: one-ply lookahead scoring (see greedy_eval.py).

``--noise P`` (or ``KAHUNA_GREEDY_NOISE``) makes it play a random legal
action with probability P, seeded by ``--seed`` / ``KAHUNA_RANDOM_SEED``
(see noise.py): a weaker bot of close strength.
"""

import os
import sys

from greedy_eval import choose
from kahuna_bot import run
from noise import NoiseError, noisy, settings

if __name__ == "__main__":
    try:
        config = settings(sys.argv[1:], os.environ)
    except NoiseError as error:
        print(f"python_greedy: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    name = "python_greedy_noisy" if config.noise else "python_greedy"
    raise SystemExit(run(noisy(choose, config), name=name, version="1"))
