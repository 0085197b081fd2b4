"""What the freezer judges and how often it acts, measured with real sandboxed bots.

    python3 benchmarks/freezer.py [--matches 3] [--games 6]
    python3 benchmarks/freezer.py --charges [--hog 6] [--games 4] [--bots DIR ...]

Prints:

1. turns: decisions per change of turn of two random test bots (12 games), to
   turn ``referee.py``'s freezer cost per decision into a cost per turn (the
   freezer acts only where the mover changes);
2. exits: the statuses recorded for a test bot that exits right after a reply
   that ends its turn (``exit_after_turn``, and the same with six spinning
   children, ``spinner_exit_after_turn``) against a random bot: a bot judged
   while frozen reads as ``disconnect``, judged thawed as ``crash``.

With ``--charges``, instead: what each bot is charged per turn of its
opponent's (its cgroup's CPU ms from its opponent's first request to its own
next one: the window the freezer judges), and that CPU as a share of the
window's wall time, for bots that wait on their stream (python_random, the
kit bots given by ``--bots``) and test bots that ponder on the opponent's time,
each against a random test bot, quiet or next to ``--hog N`` spinning
processes; with how many windows the freezer watched, how many it froze, and
in how many matches it judged the bot busy.

Run it with ``PYTHONPATH`` at another checkout to measure that code.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

import arena.referee.match
from arena.logs import configure
from arena.referee import BotSpec, MatchConfig, TimeControl, load_bot, run_match
from arena.referee.freezer import Freezer
from arena.referee.live import ActionApplied
from arena.sandbox import BotProcess, SandboxLimits

ROOT = Path(__file__).resolve().parent.parent
TESTBOT = ROOT / "tests" / "bots" / "testbot.py"
CONFIG = MatchConfig(
    games=6, seed=5, time_control=TimeControl(1500, 1000),
    limits=SandboxLimits(memory_mb=160, max_processes=64), max_restarts=6,
    hello_timeout_ms=4000,
)  # fmt: skip


def testbot(root: Path, name: str, behaviour: str, *args: str) -> BotSpec:
    directory = root / name
    directory.mkdir(mode=0o755)
    shutil.copy(TESTBOT, directory / "bot.py")
    (directory / "bot.py").chmod(0o644)
    extra = "".join(f', "{arg}"' for arg in args)
    (directory / "bot.toml").write_text(
        f'name = "{name}"\ncommand = ["python3", "bot.py", "fz-{root.name}-{name}", '
        f'"{behaviour}"{extra}]\nruntime = "python"\n'
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


@dataclasses.dataclass
class Window:
    """One turn of the opponent's, seen from slot 0 (the measured bot)."""

    cpu_ms: float
    wall_ms: float
    frozen: bool  # frozen through it: charged nothing by construction


class Recorder(Freezer):
    """The match's freezer, unchanged, plus a record of slot 0's every off-turn window
    (read before the freezer acts, so the figures do not depend on its internals)."""

    matches: ClassVar[list[list[Window]]] = []
    busy_matches = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.windows: list[Window] = []
        Recorder.matches.append(self.windows)
        self.started: tuple[BotProcess, float, float] | None = None
        self.counted = False

    def to_move(self, slot_index: int) -> None:
        moved = slot_index != self.mover
        if moved:
            self._record(slot_index)
        super().to_move(slot_index)
        if moved and slot_index == 1 and self.windows_frozen():
            self.windows.append(Window(0.0, 0.0, True))  # its window is frozen
            self.started = None
        if self.is_busy(0) and not self.counted:
            self.counted = True
            Recorder.busy_matches += 1

    def windows_frozen(self) -> bool:
        process = self.slots[0].process
        return process is not None and process.frozen_state() in ("FROZEN", "FREEZING")

    def thaw_all(self) -> None:
        self.started = None
        super().thaw_all()

    def _record(self, slot_index: int) -> None:
        process = self.slots[0].process
        if not isinstance(process, BotProcess):
            return
        now = time.monotonic()
        cpu_ms = process.cpu_time_ms()
        if cpu_ms is None:
            return
        if slot_index == 1:
            self.started = (process, cpu_ms, now)
        elif self.started is not None and self.started[0] is process:
            _, cpu_from, wall_from = self.started
            self.started = None
            self.windows.append(Window(cpu_ms - cpu_from, (now - wall_from) * 1000, False))


@contextlib.contextmanager
def hog(count: int, cpus: set[int] | None) -> Iterator[None]:
    """``count`` processes spinning at nice 0 (on ``cpus``) for as long as the block runs."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        for spinner in spinners:
            if cpus is not None:
                os.sched_setaffinity(spinner.pid, cpus)
        time.sleep(0.2)
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


RULES: dict[str, tuple[float, float, float]] = {
    "one turn over 1 ms": (1.0, 0.0, 0.0),
    "bucket 0.5 ms + 2%, over 4 ms": (0.5, 0.02, 4.0),
    "bucket 0.25 ms + 2%, over 4 ms": (0.25, 0.02, 4.0),
    "bucket 0.15 ms + 2%, over 4 ms": (0.15, 0.02, 4.0),
    "bucket 0.1 ms + 2%, over 4 ms": (0.1, 0.02, 4.0),
    "bucket 0.1 ms + 2%, over 2 ms": (0.1, 0.02, 2.0),
}
"""Rules judged on recorded windows: (allowance per turn ms, per ms of the turn, level):
a turn's CPU beyond the allowance fills a bucket that turns under it drain; busy once
the bucket holds more than the level."""


def judged_at(windows: Sequence[Window], rule: tuple[float, float, float]) -> int | None:
    """The window after which ``rule`` judges the bot busy; None if never."""
    allowance_ms, share, level_ms = rule
    level = 0.0
    for index, window in enumerate(windows):
        level = max(0.0, level + window.cpu_ms - allowance_ms - share * window.wall_ms)
        if level > level_ms:
            return index
    return None


def charges(bots: dict[str, BotSpec], opponent: BotSpec, args: argparse.Namespace) -> None:
    arena.referee.match.Freezer = Recorder  # type: ignore[misc]
    config = dataclasses.replace(
        CONFIG, games=args.games, seed=1, max_restarts=0, ponder=args.freezer_off
    )
    pin = {0} if args.pin else None
    if pin is not None:
        os.sched_setaffinity(0, pin)  # the referee and both bots (they inherit it)
    print(f"== 3. charged per opponent turn ({args.games} games x {args.rounds} matches per"
          f" bot and load; freezer {'off' if args.freezer_off else 'on'};"
          f" {'all on CPU 0' if pin else 'CPUs unpinned'}): CPU ms, and share = CPU /"
          " wall of the window")  # fmt: skip
    for load in ("quiet", f"hog {args.hog}"):
        for name, spec in bots.items():
            Recorder.matches = []
            Recorder.busy_matches = 0
            loads = []
            for _ in range(args.rounds):
                with hog(args.hog, pin) if load != "quiet" else contextlib.nullcontext():
                    run_match(config, spec, opponent)
                    loads.append(os.getloadavg()[0])
            every = [w for windows in Recorder.matches for w in windows]
            seen = [w for w in every if not w.frozen]
            if not seen:
                print(f"  {load:8s} {name:22s} no window seen")
                continue
            cpu = [w.cpu_ms for w in seen]
            share = [w.cpu_ms / w.wall_ms for w in seen if w.wall_ms > 0]
            wall = [w.wall_ms for w in seen]
            print(
                f"  {load:8s} {name:20s} windows {len(seen):4d} (+{len(every) - len(seen)}"
                f" frozen), busy in {Recorder.busy_matches}/{args.rounds} matches;"
                f" CPU ms median {statistics.median(cpu):.3f} p99 {percentile(cpu, 0.99):.3f}"
                f" max {max(cpu):.3f}, >1 ms {sum(1 for c in cpu if c > 1.0)};"
                f" share p50 {statistics.median(share):.3f} p99 {percentile(share, 0.99):.3f}"
                f" max {max(share):.3f}; wall ms p50 {statistics.median(wall):.2f}"
                f" max {max(wall):.1f}; load {statistics.median(loads):.1f}",
                flush=True,
            )
            if args.freezer_off:
                for rule_name, rule in RULES.items():
                    judged = [judged_at(windows, rule) for windows in Recorder.matches]
                    print(f"      {rule_name}: busy after window {judged} (per match)")
                top = [(round(w.cpu_ms, 2), round(w.wall_ms, 1)) for w in seen]
                top.sort(reverse=True)
                print(f"      top windows (CPU ms, wall ms): {top[:4]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=3, help="matches per behaviour")
    parser.add_argument("--games", type=int, default=6, help="games per match")
    parser.add_argument("--charges", action="store_true", help="part 3 only (see above)")
    parser.add_argument("--hog", type=int, default=6, help="spinning processes (--charges)")
    parser.add_argument("--rounds", type=int, default=2, help="matches per bot and load")
    parser.add_argument(
        "--paced",
        type=float,
        default=0.0,
        help="the opponent sleeps this many ms a decision (--charges)",
    )
    parser.add_argument("--only", nargs="*", default=[], help="measure only these bots")
    parser.add_argument(
        "--pin",
        action="store_true",
        help="run the referee, the bots and the hog on CPU 0 (--charges)",
    )
    parser.add_argument(
        "--freezer-off",
        action="store_true",
        help="record with the freezer off, judged after (--charges)",
    )
    parser.add_argument("--bots", nargs="*", default=[], type=Path,
                        help="more bot directories to measure (--charges)")  # fmt: skip
    args = parser.parse_args()
    configure(level="ERROR")
    with tempfile.TemporaryDirectory(prefix="kfz-", dir="/tmp") as work_dir:
        work = Path(work_dir)
        work.chmod(0o755)
        if args.charges:
            bots = {"python_random": load_bot(ROOT / "sample_bots" / "python_random")}
            bots["random (test bot)"] = testbot(work, "random", "random")
            bots |= {path.name: load_bot(path) for path in args.bots}
            bots["ponder 3 ms"] = testbot(work, "ponder3", "ponder", "3")
            bots["ponder 3 ms, 1 in 3"] = testbot(work, "ponder3x3", "ponder", "3", "3")
            bots["spinner"] = testbot(work, "spinner", "spinner")
            opponent = (
                testbot(work, "good", "paced", str(args.paced)) if args.paced
                else testbot(work, "good", "random")
            )  # fmt: skip
            if args.only:
                bots = {name: spec for name, spec in bots.items() if name in args.only}
            charges(bots, opponent, args)
            return 0
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
