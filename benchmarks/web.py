"""Page render times from a local web server over a store of 10,000 games.

    python3 benchmarks/web.py [--games 10000] [--samples 50] [--data-dir DIR]

Stores a round robin of engine-played games (arena.testing.demo_data: real
store, real records, real rating updates) unless DIR already holds at least
--games games, starts the web server on a free port and times HTTP GETs of:
the game page (target: under 300 ms), the game's frames for each perspective
(what the viewer fetches: cold, then cached), the leaderboard, a bot page and
the tournament page. Prints median, 95th percentile and maximum in ms.
Timings on a shared 2-core machine are noisy: run it when nothing else runs.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

from arena import store as st
from arena.testing.demo_data import play_demo_tournament
from arena.web.server import create_web_server

TARGET_GAME_PAGE_MS = 300.0


def timed_get_ms(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as response:
        response.read()
        if response.status != 200:
            raise RuntimeError(f"{url}: HTTP {response.status}")
    return (time.perf_counter() - started) * 1000


def summary(label: str, samples_ms: Sequence[float]) -> str:
    ordered = sorted(samples_ms)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return (
        f"{label:<34} n={len(ordered):<4} median {statistics.median(ordered):7.1f} ms"
        f"   p95 {p95:7.1f} ms   max {ordered[-1]:7.1f} ms"
    )


def fill(store: st.Store, work_dir: Path, games: int) -> None:
    """A round robin big enough for ``games`` games (games per match at most 100)."""
    bots = 2
    while bots * (bots - 1) // 2 * 100 < games:
        bots += 1
    matches = bots * (bots - 1) // 2
    per_match = math.ceil(games / matches)
    names = [f"bench_bot_{i:02d}" for i in range(bots)]
    started = time.perf_counter()
    demo = play_demo_tournament(
        store, work_dir, name=f"bench-{int(time.time())}", bots=names, games_per_match=per_match
    )
    elapsed_s = time.perf_counter() - started
    print(f"stored {len(demo.game_ids)} games ({bots} bots, {per_match} per match) "
          f"in {elapsed_s:.1f} s ({len(demo.game_ids) / elapsed_s:.0f} games/s)")


def stored_game_count(store: st.Store) -> int:
    return sum(t.games_played for t in st.list_tournaments(store))


def run(data_dir: Path, games: int, samples: int) -> int:
    store = st.Store.open(data_dir / "data")
    if stored_game_count(store) < games:
        fill(store, data_dir / "bots", games - stored_game_count(store))
    total = stored_game_count(store)
    newest = st.list_games(store, limit=1)[0].id
    rng = random.Random(1)
    game_ids = [rng.randint(max(1, newest - total + 1), newest) for _ in range(samples)]
    bot = st.leaderboard(store)[0].entry.bot
    tournament = st.list_tournaments(store)[0].id
    server, port = create_web_server(store, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{port}"
    print(f"{total} games stored; {samples} sampled games; server on port {port}")
    try:
        timed_get_ms(base + "/")  # warm up templates
        cases: list[tuple[str, Callable[[int], str]]] = [
            ("game page /games/ID", lambda g: f"{base}/games/{g}"),
            ("frames all, cold", lambda g: f"{base}/api/games/{g}/frames?perspective=all"),
            ("frames all, cached", lambda g: f"{base}/api/games/{g}/frames?perspective=all"),
            ("frames seat 0, cold", lambda g: f"{base}/api/games/{g}/frames?perspective=0"),
            ("game JSON /api/games/ID", lambda g: f"{base}/api/games/{g}"),
            ("leaderboard /", lambda g: f"{base}/"),
            ("bot page /bots/NAME", lambda g: f"{base}/bots/{bot}"),
            ("tournament page", lambda g: f"{base}/tournaments/{tournament}"),
        ]
        results: dict[str, list[float]] = {}
        for label, url_of in cases:
            results[label] = [timed_get_ms(url_of(g)) for g in game_ids]
            print(summary(label, results[label]))
    finally:
        server.stop()
        store.close()
    worst_game_page_ms = max(results["game page /games/ID"])
    verdict = "meets" if worst_game_page_ms < TARGET_GAME_PAGE_MS else "MISSES"
    print(f"game page: worst {worst_game_page_ms:.1f} ms, {verdict} the "
          f"{TARGET_GAME_PAGE_MS:.0f} ms target")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000, help="games to have stored")
    parser.add_argument("--samples", type=int, default=50, help="game ids to time")
    parser.add_argument("--data-dir", type=Path, help="reuse (or fill) this directory")
    args = parser.parse_args(argv)
    if args.data_dir is not None:
        return run(args.data_dir, args.games, args.samples)
    with tempfile.TemporaryDirectory(prefix="arena-web-bench-") as tmp:
        return run(Path(tmp), args.games, args.samples)


if __name__ == "__main__":
    sys.exit(main())
