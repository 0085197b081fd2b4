"""How soon a spectator's page shows an action the referee applied. Target: within 1 s.

    python3 benchmarks/live_latency.py [--runs 3] [--actions 60] [--think-s 0.06]

Each run plays a real sandboxed round robin of two slow random bots
(arena.testing.live_games), serves the web pages on a free port, opens the
first live game in headless Chromium (no spectator delay) and, for every
action applied after the page opened, takes the page's render time minus the
referee's ``at_ms``. The pipeline measured: the worker's live batch (every
0.2 s), the runner's store write, the page's poll (every 250 ms), the
render. Prints per run and overall median, 90th percentile and maximum in ms,
with the load average; timings on a shared 2-core machine are noisy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

from arena.testing.browser import launch_chromium
from arena.testing.live_games import slow_tournament, watch_first_live_game

TARGET_MS = 1000.0


def summary(lags: list[float]) -> str:
    ordered = sorted(lags)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return (f"{len(ordered)} actions: median {statistics.median(ordered):.0f} ms,"
            f" p90 {p90:.0f} ms, max {ordered[-1]:.0f} ms")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--actions", type=int, default=60)
    parser.add_argument("--think-s", type=float, default=0.06)
    args = parser.parse_args()
    every: list[float] = []
    with launch_chromium() as browser:
        for run in range(args.runs):
            load = os.getloadavg()
            with tempfile.TemporaryDirectory() as work:
                context = browser.new_context()
                page = context.new_page()
                with slow_tournament(Path(work), args.think_s) as (store, base_url):
                    watched = watch_first_live_game(page, store, base_url, args.actions)
                    context.close()
            every.extend(watched.latencies_ms)
            print(f"run {run + 1}: {summary(watched.latencies_ms)}"
                  f" (load average {load[0]:.2f} at the start)", flush=True)  # fmt: skip
    ordered = sorted(every)
    print(f"all runs: {summary(every)}; target: shown within {TARGET_MS:.0f} ms;"
          f" {sum(lag <= TARGET_MS for lag in ordered)}/{len(ordered)} within it")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
