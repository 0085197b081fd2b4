"""Ladder benchmarks: the scheduler's pick time, and the ladder's games/s against a round robin.

    python3 benchmarks/ladder.py pick  [--entrants 10000] [--picks 50]
    python3 benchmarks/ladder.py games [--bots 20] [--concurrency 2] [--pairs 2] [--games N]

`pick` times ``arena.tournament.ladder_schedule.pick`` on a simulated ladder
of --entrants (ratings, match counts, waits and recent opponents spread as on
a ladder that has run a while; a few placing); target: under 50 ms. It also
times reading the same entrants from a store (``ladder_entrants``), which the
runner does once per match it schedules.

`games` compares the ladder's games/s with a round robin of the same bots
(copies of python_random and python_greedy), same games per match, same
concurrency, in alternating runs (round robin, ladder, round robin, ...),
each in a fresh process as `arena tournament run` and `arena serve` are.
The ladder is timed from its start to its Nth stored game, N being the round
robin's game count (or --games); target: at least 90% of the round robin's rate.

Prints figures; asserts nothing. Timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

from tournament import _busy_cores, _copy_bot, _field, _timed_round_robin

from arena.tournament.ladder_schedule import Contender, SchedulePolicy, pick


def _contenders(count: int, rng: random.Random) -> tuple[list[Contender], int]:
    """A ladder of ``count`` entrants that has run for a while; its next match number."""
    next_match = 20 * count
    entrants = []
    for i in range(count):
        placing = rng.random() < 0.01
        matches = rng.randrange(4) if placing else rng.randrange(20, 60)
        entrants.append(
            Contender(
                id=i + 1,
                mu=rng.gauss(25, 6),
                sigma=8.3 if placing else rng.uniform(0.8, 3),
                matches=matches,
                last_match=None if matches == 0 else next_match - rng.randrange(1, 4 * count),
                in_play=1 if rng.random() < 0.001 else 0,
                recent=(rng.randrange(1, count + 1),) if matches else (),
            )
        )
    return entrants, next_match


def bench_pick(count: int, picks: int, seed: int) -> int:
    rng = random.Random(seed)
    entrants, next_match = _contenders(count, rng)
    policy = SchedulePolicy()
    for placing in (True, False):
        state = entrants if placing else [c for c in entrants if c.matches >= 4]
        times_ms = []
        for number in range(picks):
            started = time.perf_counter()
            pick(state, next_match + number, policy)
            times_ms.append(1000 * (time.perf_counter() - started))
        label = "with placing versions" if placing else "all placed"
        print(
            f"pick, {len(state)} entrants ({label}): median {statistics.median(times_ms):.1f} ms,"
            f" max {max(times_ms):.1f} ms over {picks} picks (target < 50 ms)"
        )
    bench_read(count, rng)
    return 0


def bench_read(count: int, rng: random.Random) -> None:
    """Read ``count`` entrants with their ladder history from a store, as the runner does."""
    from arena.store import Store, TournamentConfig, create_ladder, ladder_entrants

    with tempfile.TemporaryDirectory(prefix="kahuna-bench-") as work, Store.open(work) as store:
        with store.transaction() as db:
            for i in range(count):
                db.execute(
                    "INSERT INTO bots (id, name, created_at) VALUES (?, ?, '')", (i + 1, f"b{i}")
                )
                db.execute(
                    "INSERT INTO bot_versions (id, bot_id, version, directory, command, runtime,"
                    " created_at, mu, sigma) VALUES (?, ?, 'v', 'd', '[]', 'python', '', ?, ?)",
                    (i + 1, i + 1, rng.gauss(25, 6), rng.uniform(0.8, 3)),
                )  # fmt: skip
        ladder = create_ladder(store, "ladder", TournamentConfig(), {})
        with store.transaction() as db:
            for number in range(1, 10 * count + 1):
                a, b = rng.sample(range(1, count + 1), 2)
                db.execute(
                    "INSERT INTO matches (tournament_id, round, first_id, second_id, games, seed,"
                    " finished_at) VALUES (?, ?, ?, ?, 2, 0, 'x')",
                    (ladder, number, a, b),
                )  # fmt: skip
        started = time.perf_counter()
        rows = ladder_entrants(store, ladder, recent=1)
        elapsed_ms = 1000 * (time.perf_counter() - started)
    print(
        f"reading {len(rows)} entrants and {10 * count} ladder matches from a store:"
        f" {elapsed_ms:.0f} ms (once per scheduled match; not part of the pick target)"
    )


def run_ladder(data: Path, name: str, workers: int, games: int, per_match: int) -> int:
    """One ladder until its ``games``th stored game, timed in this (fresh) process; prints JSON."""
    from arena.store import Store, TournamentConfig, create_ladder
    from arena.tournament.ladder import LadderRunner

    with Store.open(data) as store:
        ladder = create_ladder(store, name, TournamentConfig(games_per_match=per_match), {})
        runner = LadderRunner(store, ladder, concurrency=workers)
        stored = 0
        ended: list[float] = []

        def on_game(game_id: int) -> None:
            nonlocal stored
            stored += 1
            if stored == games:
                ended.append(time.perf_counter())
                runner.stop()

        runner.on_game = on_game
        busy0, total0 = _busy_cores()
        started = time.perf_counter()
        summary = runner.run()
        busy1, total1 = _busy_cores()
    elapsed_s = (ended[0] if ended else time.perf_counter()) - started
    busy = (busy1 - busy0) / (total1 - total0)
    failed = {str(k): v for k, v in summary.failed_matches.items()}
    print(json.dumps({"games": stored, "seconds": elapsed_s, "busy": busy, "failed": failed}))
    return 0


def _timed_ladder(
    data: Path, name: str, workers: int, games: int, per_match: int
) -> dict[str, Any]:
    command = [
        sys.executable, __file__, "_ladder", "--data", str(data), "--name", name,
        "--concurrency", str(workers), "--games", str(games), "--games-per-match", str(per_match),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    for match, error in result.pop("failed").items():
        print(f"  match {match} failed: {error}")
    return result


def bench_games(bots: int, concurrency: int, pairs: int, per_match: int, games: int | None) -> int:
    from arena.referee import load_bot
    from arena.store import Store, add_bot_version

    field = _field(bots)
    target = games or bots * (bots - 1) // 2 * per_match
    with tempfile.TemporaryDirectory(prefix="kahuna-bench-") as work:
        root = Path(work)
        data = root / "data"
        with Store.open(data) as store:
            for name, sample in field.items():
                add_bot_version(store, load_bot(_copy_bot(root, name, sample)))
        rates: dict[str, list[float]] = {"round robin": [], "ladder": []}
        for pair in range(pairs):
            for kind in ("round robin", "ladder"):
                if kind == "ladder":
                    result = _timed_ladder(data, f"ladder{pair}", concurrency, target, per_match)
                else:
                    result = _timed_round_robin(
                        data, f"rr{pair}", concurrency, True, per_match, pair
                    )
                rate = result["games"] / result["seconds"]
                rates[kind].append(rate)
                print(
                    f"{kind}, {bots} bots, concurrency {concurrency}: {result['games']} games in"
                    f" {result['seconds']:.1f} s = {rate:.2f} games/s,"
                    f" machine busy {100 * result['busy']:.0f}%"
                )
    ladder, robin = statistics.mean(rates["ladder"]), statistics.mean(rates["round robin"])
    shares = [100 * a / b for a, b in zip(rates["ladder"], rates["round robin"], strict=True)]
    print(
        f"ladder {ladder:.2f} games/s = {100 * ladder / robin:.0f}% of the round robin's"
        f" {robin:.2f} (target >= 90%); per pair:"
        f" {', '.join(f'{share:.0f}%' for share in shares)}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    picking = commands.add_parser("pick")
    picking.add_argument("--entrants", type=int, default=10_000)
    picking.add_argument("--picks", type=int, default=50)
    picking.add_argument("--seed", type=int, default=1)
    games = commands.add_parser("games")
    games.add_argument("--bots", type=int, default=20)
    games.add_argument("--concurrency", type=int, default=2)
    games.add_argument("--pairs", type=int, default=2)
    games.add_argument("--games-per-match", type=int, default=2)
    games.add_argument(
        "--games", type=int, help="ladder games per run (default: the round robin's)"
    )
    inner = commands.add_parser("_ladder")
    inner.add_argument("--data", type=Path, required=True)
    inner.add_argument("--name", required=True)
    inner.add_argument("--concurrency", type=int, required=True)
    inner.add_argument("--games", type=int, required=True)
    inner.add_argument("--games-per-match", type=int, required=True)
    args = parser.parse_args(argv)
    if args.command == "pick":
        return bench_pick(args.entrants, args.picks, args.seed)
    if args.command == "games":
        return bench_games(
            args.bots, args.concurrency, args.pairs, args.games_per_match, args.games
        )
    return run_ladder(args.data, args.name, args.concurrency, args.games, args.games_per_match)


if __name__ == "__main__":
    sys.exit(main())
