"""Each owner's share of the ladder's runner time, with a slow bot beside quick ones.

    python3 benchmarks/ladder_time_share.py [--seconds 240] [--rounds 1] [--slow-ms 150]
                                            [--slow-start-s 0] [--action-ms 200] [--quick 3]
                                            [--concurrency 2] [--baseline-tree DIR]

Each run makes a fresh data directory with one slow bot (``python_random`` that sleeps
``--slow-ms`` before each action and ``--slow-start-s`` before its Hello, at each launch,
owner ``slow``: ``--slow-ms 0 --slow-start-s 8`` is a bot that holds its slot while it
starts and then plays at once) and ``--quick`` quick ones (``python_random``,
owners ``quick1``...), each added with `arena bot add --owner`, then runs a real
`arena serve --ladder --concurrency N --ladder-action-ms MS --ladder-placement-matches 1`
(loopback, port 0) for ``--seconds`` and stops it with SIGTERM. From the stored games it
prints, per owner: ladder matches, games, the wall time of the games its bot sat in and
that time's share of all game time (what the slot was held for), its own thinking time, and
its charge (its thinking plus half of each game's time that neither seat thought) as a
share of all charges, and that share over the games stored in the run's second half
(``late``: once the first matches, picked before any time was known, are charged). ``held s``
is the slot time its bot held, the same estimate for any code: each game's wall time plus,
for the slow bot, ``--slow-start-s`` per game (a ladder match's two games are each the
first of a half, each half launched afresh); ``start s`` is the start-up the referee
measured and stored (``games.startup0_ms``; blank where the code does not keep it).

``--baseline-tree DIR``: the same runs against another checkout (``git archive main``
unpacked), alternating between that code (``before``) and this one (``after``), ``--rounds``
each, their order rotated each round (``_alternate``): the machine is shared and its load
drifts.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from _alternate import load_text, rotated

CHECKOUT = Path(__file__).resolve().parents[1]
SLOW_BOT = '''
import time

time.sleep({start})  # before the Hello: the start-up the slot is held for

from kahuna_bot import run

import bot_random


def choose(observation, legal_actions):
    if {seconds}:
        time.sleep({seconds})
    return bot_random.choose(observation, legal_actions)


if __name__ == "__main__":
    raise SystemExit(run(choose, name="{name}", version="1"))
'''


def _bot(root: Path, name: str, slow_ms: float | None, start_s: float = 0.0) -> Path:
    directory = root / name
    shutil.copytree(CHECKOUT / "sample_bots" / "python_random", directory)
    toml = directory / "bot.toml"
    toml.write_text(toml.read_text().replace('name = "python_random"', f'name = "{name}"'))
    if slow_ms is not None:
        (directory / "bot.py").rename(directory / "bot_random.py")
        text = SLOW_BOT.format(seconds=slow_ms / 1000, start=start_s, name=name)
        (directory / "bot.py").write_text(text)
    return directory


def _arena(tree: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "arena", *args]


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree)}


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def run_once(tree: Path, args: argparse.Namespace, label: str) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="fair21-share-") as work:
        root, data = Path(work), Path(work) / "data"
        bots = {"slow": _bot(root, "slowbot", args.slow_ms, args.slow_start_s)}
        for i in range(1, args.quick + 1):
            bots[f"quick{i}"] = _bot(root, f"quickbot{i}", None)
        for owner, directory in bots.items():
            subprocess.run(
                _arena(tree, "bot", "add", str(directory), "--owner", owner, "--data-dir",
                       str(data)),
                env=_env(tree), check=True, stdout=subprocess.DEVNULL, cwd=tree,
            )  # fmt: skip
        server = subprocess.Popen(
            _arena(tree, "serve", "--port", "0", "--ladder", "--concurrency",
                   str(args.concurrency), "--ladder-action-ms", str(args.action_ms),
                   "--ladder-placement-matches", "1", "--data-dir", str(data)),
            env=_env(tree), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tree,
        )  # fmt: skip
        load = load_text()
        try:
            time.sleep(args.seconds)  # the measurement window, not a synchronisation
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(120)
        return _shares(data, label, load, args.slow_start_s)


def _shares(data: Path, label: str, load: str, slow_start_s: float) -> dict[str, dict[str, float]]:
    db = sqlite3.connect(data / "arena.db")
    owner_of = dict(
        db.execute(
            "SELECT v.id, b.owner FROM bot_versions v JOIN bots b ON b.id = v.bot_id"
        ).fetchall()
    )
    per: dict[str, dict[str, float]] = {
        o: {"matches": 0, "games": 0, "in_game_s": 0.0, "think_s": 0.0, "charge_s": 0.0,
            "held_s": 0.0, "start_s": 0.0}
        for o in sorted(set(owner_of.values()))
    }
    for first, second in db.execute(
        "SELECT m.first_id, m.second_id FROM matches m JOIN tournaments t"
        " ON t.id = m.tournament_id WHERE t.format = 'ladder'"
    ):
        per[owner_of[first]]["matches"] += 1
        per[owner_of[second]]["matches"] += 1
    total_game = total_charge = late_total = 0.0
    ends = [_epoch(r[0]) for r in db.execute("SELECT finished_at FROM games")]
    half = (min(ends) + max(ends)) / 2 if ends else 0.0
    late: dict[str, float] = {o: 0.0 for o in per}
    kept = {r[1] for r in db.execute("PRAGMA table_info(games)")}
    startup = "g.startup0_ms, g.startup1_ms" if "startup0_ms" in kept else "NULL, NULL"
    for seat0, seat1, t0, t1, started, finished, s0, s1 in db.execute(
        "SELECT g.seat0_id, g.seat1_id, g.time0_ms, g.time1_ms, g.started_at, g.finished_at,"
        f" {startup} FROM games g JOIN matches m ON m.id = g.match_id JOIN tournaments t"
        " ON t.id = m.tournament_id WHERE t.format = 'ladder'"
    ):
        wall = (_epoch(finished) - _epoch(started)) * 1000 if started else t0 + t1
        fixed = max(0.0, wall - t0 - t1)
        total_game += wall
        for version, think, start in ((seat0, t0, s0), (seat1, t1, s1)):
            owner = owner_of[version]
            row = per[owner]
            row["games"] += 1
            row["in_game_s"] += wall / 1000
            row["held_s"] += wall / 1000 + (slow_start_s if owner == "slow" else 0.0)
            row["think_s"] += think / 1000
            charge = think + fixed / 2 + (start or 0.0)  # as the code run charges it
            row["start_s"] = math.nan if start is None else row["start_s"] + start / 1000
            row["charge_s"] += charge / 1000
            total_charge += charge
            if _epoch(finished) >= half:
                late[owner] += charge
                late_total += charge
    db.close()
    print(f"\n[{label}] {load} at the start; all game time {total_game / 1000:.1f} s")
    held_total = sum(row["held_s"] for row in per.values())
    print(f"{'owner':8} {'matches':>7} {'games':>5} {'in games s':>10} {'share':>6}"
          f" {'think s':>8} {'start s':>8} {'held s':>7} {'held':>6} {'charge share':>12}"
          f" {'late':>6}")  # fmt: skip
    for owner, row in per.items():
        share = row["in_game_s"] * 1000 / total_game if total_game else 0.0
        charged = row["charge_s"] * 1000 / total_charge if total_charge else 0.0
        later = late[owner] / late_total if late_total else 0.0
        row["share"], row["charge_share"], row["late"] = share, charged, later
        held = row["held_s"] / held_total if held_total else 0.0
        start = "" if math.isnan(row["start_s"]) else f"{row['start_s']:.1f}"
        print(f"{owner:8} {row['matches']:7.0f} {row['games']:5.0f} {row['in_game_s']:10.1f}"
              f" {share:6.1%} {row['think_s']:8.1f} {start:>8} {row['held_s']:7.1f} {held:6.1%}"
              f" {charged:12.1%} {later:6.1%}")  # fmt: skip
    return per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=240)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--slow-ms", type=float, default=150)
    parser.add_argument("--slow-start-s", type=float, default=0.0)
    parser.add_argument("--action-ms", type=int, default=200)
    parser.add_argument("--quick", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--baseline-tree", type=Path)
    args = parser.parse_args()
    trees = [("after", CHECKOUT)]
    if args.baseline_tree is not None:
        trees.insert(0, ("before", args.baseline_tree.resolve()))
    for round_no in range(1, args.rounds + 1):
        for label, tree in rotated(trees, round_no):
            run_once(tree, args, f"{label} {round_no}")


if __name__ == "__main__":
    main()
