"""CPU of each part of the referee's next request, per decision.
Run: python3 benchmarks/request_parts.py [--tree DIR]

Plays ``--games`` random games per round through ``RefereeState`` (new deals each
round, as a referee meets them) and times, per decision, what
``request_for_mover`` does: the engine's legal actions, the legal set (sorted,
encoded, keyed by bytes), the seat's observation bytes, the frame; and the
rules' apply. Printed: median over ``--rounds`` rounds of each part's mean
microseconds of thread CPU (the timer's own cost taken off), and, where the
code has a cache of legal sets, how often it was hit.

``--tree DIR`` imports ``arena`` from DIR (e.g. ``git archive REV | tar -x -C DIR``)
instead of this checkout, to alternate two versions in separate processes.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

PARTS = ("legal actions", "legal set", "observation", "frame", "apply")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30, help="games per round (default 30)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds (default 7)")
    parser.add_argument("--tree", type=Path, help="import arena from this checkout")
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree or Path(__file__).resolve().parent.parent))

    from arena.kahuna import (
        deal_from_seed,
        legal_actions,
        new_game,
        reshuffle_from_seed,
        start_round,
    )
    from arena.protocol import wire
    from arena.referee.game import RefereeState

    clock = time.thread_time_ns
    timer_ns = statistics.median([-(clock() - clock()) for _ in range(2000)])

    def play(games: int, seed: int) -> tuple[dict[str, float], int, int]:
        spent = dict.fromkeys(PARTS, 0)
        chooser = random.Random(seed)
        decisions = hits = 0
        sets = getattr(wire, "_LEGAL_SETS", None)
        for game in range(games):
            turns = RefereeState(new_game(deal_from_seed(seed * 1000 + game)))
            sent = [0, 0]
            while not turns.state.is_finished:
                state = turns.state
                if state.needs_reshuffle:
                    order = reshuffle_from_seed(game, state.round + 1, state.reshuffle_cards)
                    turns.start_round(start_round(state, order))
                    continue
                seat = turns.to_move
                known = len(sets) if sets is not None else 0
                t0 = clock()
                actions = legal_actions(state)
                t1 = clock()
                legal = wire.legal_set(actions)
                t2 = clock()
                start = sent[seat]
                observation = wire.observation_bytes(state, seat, turns.events[start:], start)
                t3 = clock()
                wire.action_request_frame(
                    request_id=decisions + 1, game_index=game, observation=observation,
                    legal=legal, action_deadline_ms=2000, time_bank_ms=1000,
                )  # fmt: skip
                t4 = clock()
                sent[seat] = len(turns.events)
                hits += sets is not None and len(sets) == known
                action = chooser.choice(legal.sorted)
                t5 = clock()
                turns.apply(action, seat)
                t6 = clock()
                took = (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t6 - t5)
                for part, ns in zip(PARTS, took, strict=True):
                    spent[part] += ns - timer_ns
                decisions += 1
        return {part: ns / decisions / 1000 for part, ns in spent.items()}, decisions, hits

    play(10, 10_000)  # the process's caches warm, as a running referee has them
    rounds = [play(args.games, seed) for seed in range(args.rounds)]
    print(f"{args.tree or 'this checkout'}: us of thread CPU per decision, median of {args.rounds}"
          f" rounds of {args.games} new games")  # fmt: skip
    total = 0.0
    for part in PARTS:
        value = statistics.median(figures[part] for figures, _, _ in rounds)
        total += value
        print(f"  {part:>13}: {value:6.2f}")
    print(f"  {'all':>13}: {total:6.2f}")
    decisions = sum(count for _, count, _ in rounds)
    if hasattr(wire, "_LEGAL_SETS"):
        hits = sum(hit for _, _, hit in rounds)
        print(f"  legal-set cache hits: {hits} of {decisions} decisions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
