"""1,000 spectators polling /api/live and a live game once a second, while games are played:
are they answered within 200 ms at the 99th percentile (the target)?

    python3 benchmarks/spectators.py [--spectators 1000] [--seconds 30] [--think-s 0.2]
                                     [--baseline-tree DIR [--rounds 3]]

A real sandboxed round robin of two slow random bots is played
(``arena.testing.live_games.slow_tournament``: the runner and the referee a
ladder uses, with its web server on a free port). Once a game is live, a
separate process (so the client's work does not share the server's GIL) runs
``--spectators`` asyncio spectators, each on its own connection, every second
alternately GETting ``/api/live`` and the live game's ``/api/live/M/G?after=N``
(``N``: the last step it saw, as the page does), starting at random offsets
within the first second. Prints count, p50, p99 and max of the response times
in ms, failures by kind, and the load. Timings on a shared 2-core machine are
noisy: the load average is printed beside them.

``--baseline-tree DIR``: the same run against another checkout (e.g. ``git archive
main`` unpacked): runs alternate ``--rounds`` times between that code (``before``) and
this checkout (``after``), each in a fresh process with its own code on
``PYTHONPATH``, so both see the same machine load.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

from arena import store as st
from arena.testing.live_games import slow_tournament

TARGET_MS = 200.0
CHECKOUT = Path(__file__).resolve().parent.parent


async def spectator(host: str, port: int, game: str, stop_at: float, offset_s: float,
                    times: list[float], failures: collections.Counter[str]) -> None:  # fmt: skip
    await asyncio.sleep(offset_s)
    after, turn = -1, 0
    reader = writer = None
    while time.time() < stop_at:
        started = time.perf_counter()
        path = "/api/live" if turn % 2 == 0 else f"{game}?after={after}"
        turn += 1
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection(host, port)
            assert reader is not None
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            status = int(head.split(b" ", 2)[1])
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            body = await asyncio.wait_for(reader.readexactly(length), 30)
            times.append((time.perf_counter() - started) * 1000)
            if status != 200:
                failures[f"HTTP {status}"] += 1
            elif "after=" in path:  # as the page: frames after the last step it has
                steps = json.loads(body).get("steps")
                after = steps if isinstance(steps, int) else after
            if b"connection: close" in head.lower():
                writer.close()
                reader = writer = None
        except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError) as error:
            failures[type(error).__name__] += 1
            if writer is not None:
                writer.close()
            reader = writer = None
        await asyncio.sleep(max(0.0, 1.0 - (time.perf_counter() - started)))
    if writer is not None:
        writer.close()


def crowd(host: str, port: int, game: str, spectators: int, seconds: float,
          out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]  # fmt: skip
    times: list[float] = []
    failures: collections.Counter[str] = collections.Counter()
    stop_at = time.time() + seconds

    async def all_of_them() -> None:
        rng = random.Random(7)
        await asyncio.gather(*(
            spectator(host, port, game, stop_at, rng.random(), times, failures)
            for _ in range(spectators)
        ))  # fmt: skip

    asyncio.run(all_of_them())
    out.put((times, dict(failures)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spectators", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--think-s", type=float, default=0.2, help="each bot's wait per action")
    parser.add_argument("--baseline-tree", type=Path, metavar="DIR",
                        help="alternate runs between the code at DIR and this checkout")
    parser.add_argument("--rounds", type=int, default=3, help="before/after pairs to run")
    args = parser.parse_args(argv)
    if args.baseline_tree is not None:
        return alternate(args)
    with tempfile.TemporaryDirectory(prefix="spectators-") as work, \
            slow_tournament(Path(work), think_s=args.think_s) as (store, base_url):  # fmt: skip
        deadline = time.monotonic() + 120
        while not st.list_live_games(store):
            if time.monotonic() > deadline:
                raise SystemExit("no game went live within 120 s")
            time.sleep(0.05)
        live = st.list_live_games(store)[0]
        host, port = base_url.removeprefix("http://").split(":")
        game = f"/api/live/{live.match_id}/{live.game_index}"
        one, five, _ = os.getloadavg()
        print(f"{os.cpu_count()} CPUs, load {one:.2f} {five:.2f}: {args.spectators} spectators"
              f" polling /api/live and {game} once a second for {args.seconds:g} s", flush=True)
        out: multiprocessing.Queue[tuple[list[float], dict[str, int]]] = multiprocessing.Queue()
        client = multiprocessing.Process(
            target=crowd, args=(host, int(port), game, args.spectators, args.seconds, out)
        )
        client.start()
        times, failures = out.get(timeout=args.seconds + 300)
        client.join(30)
    ordered = sorted(times)
    if not ordered:
        print(f"no answers; failures {failures}")
        return 1
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    verdict = "ok" if p99 < TARGET_MS else f"over {TARGET_MS:.0f} ms"
    print(f"{len(ordered)} answers ({len(ordered) / args.seconds:.0f}/s): p50"
          f" {statistics.median(ordered):.1f}, p99 {p99:.1f}, max {ordered[-1]:.1f} ms"
          f" ({verdict}); failures {failures or 'none'}")  # fmt: skip
    return 0


def alternate(args: argparse.Namespace) -> int:
    """The baseline tree's code (``before``) and this checkout's (``after``), alternately."""
    common = ["--spectators", str(args.spectators), "--seconds", str(args.seconds),
              "--think-s", str(args.think_s)]  # fmt: skip
    for round_ in range(args.rounds):
        for label, tree in (("before", args.baseline_tree.resolve()), ("after", CHECKOUT)):
            print(f"round {round_ + 1} {label} ({tree}):", flush=True)
            script = tree / "benchmarks" / "spectators.py"
            env = {**os.environ, "PYTHONPATH": str(tree)}
            subprocess.run([sys.executable, str(script), *common], cwd=tree, env=env, check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
