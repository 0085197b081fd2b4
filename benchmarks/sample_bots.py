"""The sample bots' strength and speed, measured through `arena match`.

Plays python_greedy against python_random and against js_random (real
sandboxed processes, seats swapped, each deal from both sides) and prints
the greedy bot's win rate, how the games ended, and the thinking time per
game of each bot. Run on purpose: `python3 benchmarks/sample_bots.py
[--games N] [--seed S]`; figures taken while other work runs are noisy.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

SAMPLE_BOTS = Path(__file__).resolve().parents[1] / "sample_bots"
GREEDY = "python_greedy"


def play(opponent: str, games: int, seed: int) -> None:
    command = [
        sys.executable, "-m", "arena", "match", str(SAMPLE_BOTS / GREEDY),
        str(SAMPLE_BOTS / opponent), "--games", str(games), "--seed", str(seed), "--json",
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall_s = time.monotonic() - started
    if done.returncode != 0:
        print(f"{GREEDY} vs {opponent}: arena match failed: {done.stderr.strip()}")
        return
    report = json.loads(done.stdout)
    played = report["games"]
    wins = sum(game["winner"] == GREEDY for game in played)
    endings = Counter(f"{game['winner']}/{game['reason']}" for game in played)
    failures = sum(
        status != "ok" for game in played for status in game["status"].values()
    )
    thinking_ms = {
        name: sum(game["time_ms"][name] for game in played) / len(played)
        for name in (GREEDY, opponent)
    }
    actions = sum(game["actions"] for game in played) / len(played)
    print(f"{GREEDY} vs {opponent}: {len(played)} games, seed {seed}")
    print(f"  greedy wins      {wins}/{len(played)} = {100 * wins / len(played):.1f}%")
    print(f"  endings          {dict(sorted(endings.items()))}")
    print(f"  failure statuses {failures}")
    print(f"  actions per game {actions:.1f}")
    for name, ms in thinking_ms.items():
        print(f"  {name:<16} {ms:.0f} ms thinking per game (referee's wall clock)")
    print(f"  wall time        {wall_s:.1f} s ({wall_s / len(played):.2f} s per game)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    for opponent in ("python_random", "js_random"):
        play(opponent, args.games, args.seed)


if __name__ == "__main__":
    main()
