"""How long `arena backup` takes over a store of 10,000 games, and how it slows the API.

    python3 benchmarks/backup.py [--games 10000] [--calls 400] [--data-dir DIR]

Stores a round robin of engine-played games (arena.testing.demo_data) unless DIR
already holds at least --games games, starts a real `arena serve` on it, and times
unary API calls (GetLeaderboard and GetGameRecord of a random game, admin token):
first alone, then while `arena backup` runs again and again in another process (each
to a new directory, removed after). Prints each backup's time and size, and the calls'
median, 95th percentile and maximum in both phases.
Timings on a shared 2-core machine are noisy: run it when nothing else runs.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

import grpc
from _arena_serve import start_server
from web import fill, stored_game_count, summary

from arena import store as st
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc


def timed_calls(stub: pb_grpc.ArenaServiceStub, token: str, game_ids: list[int],
                calls: int) -> list[float]:  # fmt: skip
    metadata = (("authorization", f"Bearer {token}"),)
    rng = random.Random(2)
    samples = []
    for number in range(calls):
        started = time.perf_counter()
        if number % 2:
            stub.GetLeaderboard(pb.GetLeaderboardRequest(), metadata=metadata, timeout=60)
        else:
            stub.GetGameRecord(pb.GetGameRecordRequest(game_id=rng.choice(game_ids)),
                               metadata=metadata, timeout=60)  # fmt: skip
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def backups_until(stop: threading.Event, data: Path, out: Path, results: list[dict[str, float]]
                  ) -> None:  # fmt: skip
    number = 0
    while not stop.is_set():
        dest = out / f"bk{number}"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "arena", "backup", str(dest), "--data-dir", str(data), "--json"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        shown = json.loads(done.stdout)
        results.append({"wall_s": time.perf_counter() - started, "inner_s": shown["seconds"],
                        "mib": shown["bytes"] / (1 << 20), "games": shown["games"]})  # fmt: skip
        shutil.rmtree(dest)
        number += 1


def run(root: Path, games: int, calls: int) -> int:
    data = root / "data"
    with st.Store.open(data) as store:
        if stored_game_count(store) < games:
            fill(store, root / "bots", games - stored_game_count(store))
        newest = st.list_games(store, limit=1)[0].id
    server, port = start_server(data)
    try:
        token = (data / st.ADMIN_TOKEN_NAME).read_text().strip()
        game_ids = list(range(max(1, newest - games + 1), newest + 1))
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ArenaServiceStub(channel)
            timed_calls(stub, token, game_ids, 20)  # warm up
            alone = timed_calls(stub, token, game_ids, calls)
            print(summary("API calls, no backup", alone))
            out = root / "backups"
            out.mkdir(exist_ok=True)
            stop, results = threading.Event(), []  # type: list[dict[str, float]]
            worker = threading.Thread(target=backups_until, args=(stop, data, out, results))
            worker.start()
            try:
                during = timed_calls(stub, token, game_ids, calls)
            finally:
                stop.set()
                worker.join()
            print(summary("API calls, backups running", during))
    finally:
        server.terminate()
        server.wait(30)
    for result in results:
        print(f"backup of {result['games']:.0f} games, {result['mib']:.1f} MiB: "
              f"{result['inner_s']:.2f} s (process {result['wall_s']:.2f} s)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000, help="games to have stored")
    parser.add_argument("--calls", type=int, default=400, help="API calls timed in each phase")
    parser.add_argument("--data-dir", type=Path, help="reuse (or fill) this directory")
    args = parser.parse_args(argv)
    if args.data_dir is not None:
        return run(args.data_dir, args.games, args.calls)
    with tempfile.TemporaryDirectory(prefix="arena-backup-bench-") as tmp:
        return run(Path(tmp), args.games, args.calls)


if __name__ == "__main__":
    sys.exit(main())
