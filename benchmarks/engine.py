"""Engine speed through the public API: complete random games per second.

    python3 benchmarks/engine.py [--games N] [--seed S] [--profile]

A game is: new_game from a seeded deal, then legal_actions / a seeded
uniform choice / apply until the end, start_round with a seeded reshuffle
whenever needs_reshuffle. Prints games per CPU second (and per wall second),
actions per game, and the CPU cost of one legal_actions (on fresh states) and
one apply. Single process, one core.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import time

from arena.kahuna import (
    Action,
    State,
    Variant,
    apply,
    deal_from_seed,
    legal_actions,
    new_game,
    parse_record,
    play_random_game,
    record_to_json,
    replay,
    reshuffle_from_seed,
    start_round,
    state_summary,
)


def play(seed: int, variant: Variant, rng: random.Random) -> int:
    """One complete random game; returns the number of actions."""
    state = new_game(deal_from_seed(seed), variant)
    actions = 0
    while not state.is_finished:
        if state.needs_reshuffle:
            order = reshuffle_from_seed(seed, state.round + 1, state.reshuffle_cards)
            state = start_round(state, order)
            continue
        state = apply(state, rng.choice(legal_actions(state)))
        actions += 1
    return actions


def games_per_second(games: int, seed: int, variant: Variant) -> tuple[float, float, float]:
    """(games per CPU second, games per wall second, actions per game).

    CPU time is the fairer figure on a shared machine: other processes
    stretch wall time but not this process's CPU time.
    """
    rng = random.Random(seed)
    started_wall, started_cpu = time.perf_counter(), time.process_time()
    total_actions = sum(play(seed + i, variant, rng) for i in range(games))
    cpu_s = time.process_time() - started_cpu
    wall_s = time.perf_counter() - started_wall
    return games / cpu_s, games / wall_s, total_actions / games


def sample_states(count: int, seed: int) -> list[tuple[State, Action]]:
    """(state, a legal action) pairs from random games, states not yet generated."""
    rng = random.Random(seed)
    pairs: list[tuple[State, Action]] = []
    game = 0
    while len(pairs) < count:
        state = new_game(deal_from_seed(seed + game))
        game += 1
        while not state.is_finished and len(pairs) < count:
            if state.needs_reshuffle:
                state = start_round(
                    state, reshuffle_from_seed(seed, state.round + 1, state.reshuffle_cards)
                )
                continue
            action = rng.choice(legal_actions(state))
            pairs.append((state, action))
            state = apply(state, action)
    return pairs


def micro_us(count: int, seed: int) -> tuple[float, float]:
    """Microseconds per legal_actions on a state never generated, and per apply."""
    pairs = sample_states(count, seed)
    fresh = [state.copy() for state, _ in pairs]  # copies start without a cached legal set
    started = time.process_time()
    for state in fresh:
        legal_actions(state)
    legal_us = (time.process_time() - started) / count * 1e6
    started = time.process_time()
    for (_, action), state in zip(pairs, fresh, strict=True):
        apply(state, action)
    apply_us = (time.process_time() - started) / count * 1e6
    return legal_us, apply_us


def replays_per_second(count: int) -> float:
    """parse_record + replay + state_summary(legal=True) of whole random games, per CPU second."""
    texts = [json.dumps(record_to_json(play_random_game(seed))) for seed in range(count)]
    started = time.process_time()
    for text in texts:
        state_summary(replay(parse_record(text)).state, legal=True)
    return count / (time.process_time() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="cProfile the game loop")
    args = parser.parse_args()
    play(0, Variant(), random.Random(0))  # warm the caches
    for name, variant in (("basic", Variant()), ("strategic+tactical", Variant(True, True))):
        rate, wall_rate, per_game = games_per_second(args.games, args.seed, variant)
        print(f"{name:>20}: {rate:8.0f} games/s CPU ({wall_rate:.0f}/s wall)  "
              f"{per_game:6.1f} actions/game  "
              f"{1e6 / (rate * per_game):5.2f} us/action (incl. legal_actions and choice)")
    legal_us, apply_us = micro_us(20000, args.seed)
    print(f"{'legal_actions':>20}: {legal_us:6.2f} us CPU per fresh state")
    print(f"{'apply':>20}: {apply_us:6.2f} us CPU per action")
    print(f"{'record replay':>20}: {replays_per_second(300):8.0f} whole records/s CPU "
          "(parse, replay, summary with --legal)")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        games_per_second(args.games // 4, args.seed, Variant())
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
