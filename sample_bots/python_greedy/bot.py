"""A greedy Kahuna bot: one-ply lookahead scoring (see greedy_eval.py)."""

from greedy_eval import choose
from kahuna_bot import run

if __name__ == "__main__":
    raise SystemExit(run(choose, name="python_greedy", version="1"))
