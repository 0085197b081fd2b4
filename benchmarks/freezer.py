"""What the freezer judges and how often it acts, measured with real sandboxed bots.

    python3 benchmarks/freezer.py [--matches 3] [--games 6]

Prints:

1. turns: decisions per change of turn of two random test bots (12 games), to
   turn ``referee.py``'s freezer cost per decision into a cost per turn (the
   freezer acts only where the mover changes);
2. exits: the statuses recorded for a test bot that exits right after a reply
   that ends its turn (``exit_after_turn``, and the same with six spinning
   children, ``spinner_exit_after_turn``) against a random bot: a bot judged
   while frozen reads as ``disconnect``, judged thawed as ``crash``.

Run it with ``PYTHONPATH`` at another checkout to measure that code.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import itertools
import shutil
import sys
import tempfile
from pathlib import Path

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

from arena.logs import configure
from arena.referee import BotSpec, MatchConfig, TimeControl, load_bot, run_match
from arena.referee.live import ActionApplied
from arena.sandbox import SandboxLimits

TESTBOT = Path(__file__).resolve().parent.parent / "tests" / "bots" / "testbot.py"
CONFIG = MatchConfig(
    games=6, seed=5, time_control=TimeControl(1500, 1000),
    limits=SandboxLimits(memory_mb=160, max_processes=64), max_restarts=6,
    hello_timeout_ms=4000,
)  # fmt: skip


def testbot(root: Path, name: str, behaviour: str) -> BotSpec:
    directory = root / name
    directory.mkdir(mode=0o755)
    shutil.copy(TESTBOT, directory / "bot.py")
    (directory / "bot.py").chmod(0o644)
    (directory / "bot.toml").write_text(
        f'name = "{name}"\ncommand = ["python3", "bot.py", "fz-{root.name}-{name}", '
        f'"{behaviour}"]\nruntime = "python"\n'
    )
    return load_bot(directory)


def decisions_per_turn(work: Path) -> tuple[int, int]:
    """(decisions, changes of turn) in 12 games of two random test bots."""
    seats: list[tuple[int, int]] = []

    def on_event(event: object) -> None:
        if isinstance(event, ActionApplied):
            seats.append((event.game_index, event.seat))

    bots = testbot(work, "a", "random"), testbot(work, "b", "random")
    config = MatchConfig(games=12, seed=1, time_control=TimeControl(5000, 30000))
    run_match(config, *bots, on_event=on_event)
    changes = sum(1 for a, b in itertools.pairwise(seats) if a[0] == b[0] and a[1] != b[1])
    return len(seats), changes


def exit_statuses(matches: int, games: int) -> collections.Counter[tuple[str, str]]:
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for behaviour in ("exit_after_turn", "spinner_exit_after_turn"):
        for _ in range(matches):
            with tempfile.TemporaryDirectory(prefix="kfz-", dir="/tmp") as work_dir:
                work = Path(work_dir)
                work.chmod(0o755)
                quitter = testbot(work, "quitter", behaviour)
                good = testbot(work, "good", "random")
                config = dataclasses.replace(CONFIG, games=games)
                for game in run_match(config, quitter, good).games:
                    counts[(behaviour, game.statuses["quitter"].value)] += 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=3, help="matches per behaviour")
    parser.add_argument("--games", type=int, default=6, help="games per match")
    args = parser.parse_args()
    configure(level="ERROR")
    with tempfile.TemporaryDirectory(prefix="kfz-", dir="/tmp") as work_dir:
        work = Path(work_dir)
        work.chmod(0o755)
        decisions, changes = decisions_per_turn(work)
    print(f"== 1. {decisions} decisions, {changes} changes of turn: "
          f"{decisions / changes:.2f} decisions per turn")  # fmt: skip
    counts = exit_statuses(args.matches, args.games)
    print("== 2. a bot that exits right after ending its turn, statuses recorded:")
    for (behaviour, status), count in sorted(counts.items()):
        print(f"  {behaviour:24s} {status:11s} {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
