"""A bot's activity must not cost its opponent time.
Run: python3 benchmarks/noisy_neighbour.py [--games N] [--rounds R] [--victim python_greedy]
     [--no-ponder]

The victim (a sample bot) plays, sandboxed, against two noisy neighbours and
against a quiet one (the test bot ``random``), with freezing on (the default:
the bot that is not to move is frozen) and off (``ponder``). The neighbours:
``cpu hog`` (the test bot ``cpu_spinner``: six children spinning without
touching memory for the whole match) and ``spinner`` (six children streaming
8 MiB each through memory, which also sweeps the caches the CPUs share). A
hog's own turns are slower than the quiet bot's (its main process shares its
CPU with its children), and a victim whose opponent is slower pays for it
alone (its CPU idles longer between requests and comes back colder): the
``as slow`` setting, a quiet bot that sleeps the hog's own median time per
decision, measures that part apart from what the hog runs.
Measured: the victim's thinking time per decision as the referee measured it
(request sent to reply received), and its CPU time per decision (its cgroup's,
over each game). Same seeds in every setting; the settings run in alternating
rounds, their order rotated each round, so that load from other work on the
machine spreads over all of them (``_alternate``). Printed per setting: the
median over rounds of the round's ratio to the quiet setting (median time
over median time), with quartiles and range, beside an A/A control (a second
quiet setting) that shows how far identical settings differ at this load.
Target: with freezing on, the victim next to the CPU hog within 10% of its
time next to the quiet bot (median ratio <= 1.10). The spinner's figure shows
what a neighbour's use of the shared caches on its own turn leaves the victim
(docs/design/SANDBOX.md: no allocation of those here).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import _grpc_tuned  # noqa: E402, F401 (first: gRPC's environment as in arena processes)
from _alternate import load_text, ratio, rotated, spread  # noqa: E402

# isort: split

from arena.referee import BotSpec, BotStatus, MatchConfig, TimeControl, load_bot, run_match  # noqa: E402
from arena.referee.live import ActionApplied, LiveEvent  # noqa: E402
from arena.sandbox import SandboxLimits  # noqa: E402

TESTBOT = ROOT / "tests" / "bots" / "testbot.py"


def make_testbot(root: Path, behaviour: str, *args: str) -> BotSpec:
    directory = root / "-".join((behaviour, *args))
    directory.mkdir(mode=0o755)
    shutil.copy(TESTBOT, directory / "bot.py")
    (directory / "bot.py").chmod(0o644)
    command = ["python3", "bot.py", f"kt-{uuid.uuid4().hex}", behaviour, *args]
    (directory / "bot.toml").write_text(
        f"name = {json.dumps(behaviour)}\ncommand = {json.dumps(command)}\nruntime = \"python\"\n"
    )
    return load_bot(directory)


@dataclass
class Played:
    """The victim's decisions in one match: thinking ms, and whether the neighbour moved
    just before (the first decision of a turn); its CPU ms per decision per game."""

    walls: list[tuple[float, bool]] = field(default_factory=list)
    cpu_per_decision: list[float] = field(default_factory=list)
    neighbour_walls: list[float] = field(default_factory=list)

    def wall(self, first: bool | None = None) -> list[float]:
        return [ms for ms, f in self.walls if first is None or f is first]


def victim_decisions(config: MatchConfig, victim: BotSpec, neighbour: BotSpec) -> Played:
    """The victim's thinking time per decision over one match (victim is bot A)."""
    played = Played()
    last_seat = [-1]

    def on_event(event: LiveEvent) -> None:
        if not isinstance(event, ActionApplied):
            return
        if event.seat == event.game_index % 2:
            played.walls.append((event.elapsed_ms, last_seat[0] != event.seat))
        else:
            played.neighbour_walls.append(event.elapsed_ms)
        last_seat[0] = event.seat

    report = run_match(config, victim, neighbour, on_event=on_event)
    bad = [game.statuses for game in report.games if set(game.statuses.values()) != {BotStatus.OK}]
    if bad:
        print(f"  warning: not every game ended ok: {bad}", file=sys.stderr)
    for game in report.games:
        match = game.record.get("match")
        decisions = match.get("decisions") if isinstance(match, dict) else None
        if isinstance(decisions, list) and len(decisions) == 2:
            mine = decisions[game.index % 2]  # the victim, bot A, sits at seat index % 2
            per = mine.get("cpu_ms_per_decision") if isinstance(mine, dict) else None
            if isinstance(per, int | float):
                played.cpu_per_decision.append(float(per))
    return played


Setting = tuple[str, bool]  # neighbour label, ponder
PARTS: tuple[tuple[str, bool | None], ...] = (
    ("all decisions", None), ("first of a turn", True), ("later in a turn", False),
)  # fmt: skip


def compare(label: str, here: list[Played], base: list[Played]) -> None:
    """Print ``here`` over ``base`` round by round: wall by part of the turn, victim CPU."""
    for part, first in PARTS:
        ratios = [
            value for b, h in zip(base, here, strict=True)
            if (value := ratio(h.wall(first), b.wall(first))) is not None
        ]  # fmt: skip
        print(f"  {label}, wall, {part}: {spread(ratios)}")
    cpu = [
        value for b, h in zip(base, here, strict=True)
        if (value := ratio(h.cpu_per_decision, b.cpu_per_decision)) is not None
    ]  # fmt: skip
    print(f"  {label}, victim CPU per decision: {spread(cpu)}")


def own_ms(played: list[Played]) -> str:
    """The neighbour's own time per decision: the median of each round's median."""
    return spread([statistics.median(p.neighbour_walls) for p in played if p.neighbour_walls])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="games per match (default 4)")
    parser.add_argument("--rounds", type=int, default=12, help="alternating rounds (default 12)")
    parser.add_argument("--victim", default="python_greedy", help="a bot in sample_bots/")
    parser.add_argument(
        "--no-ponder", action="store_true", help="only the default (freezing on) settings"
    )
    args = parser.parse_args()
    config = MatchConfig(
        games=args.games, seed=1,
        time_control=TimeControl(action_ms=2000, bank_ms=5000),
        limits=SandboxLimits(max_processes=64),  # six children and gRPC's threads
    )  # fmt: skip
    victim = load_bot(ROOT / "sample_bots" / args.victim)
    settings: list[Setting] = [
        ("quiet", False), ("quiet again", False), ("as slow", False), ("cpu hog", False),
        ("spinner", False),
    ]  # fmt: skip
    if not args.no_ponder:
        settings += [("quiet", True), ("cpu hog", True), ("spinner", True)]
    rounds: list[dict[Setting, Played]] = []
    loads = [os.getloadavg()[0]]
    print(f"start: {load_text()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kahuna-noisy-") as tmp:
        root = Path(tmp)
        root.chmod(0o755)
        neighbours = {
            "quiet": make_testbot(root, "random"),
            "spinner": make_testbot(root, "spinner"),
            "cpu hog": make_testbot(root, "cpu_spinner"),
        }
        neighbours["quiet again"] = neighbours["quiet"]
        # the hog's own time per decision so far, which the "as slow" bot sleeps
        hog_turns = victim_decisions(
            replace(config, games=1), victim, neighbours["cpu hog"]
        ).neighbour_walls
        paced: dict[str, BotSpec] = {}
        for round_index in range(args.rounds):
            sleep_ms = f"{statistics.median(hog_turns):.1f}"
            if sleep_ms not in paced:
                paced[sleep_ms] = make_testbot(root, "paced", sleep_ms)
            neighbours["as slow"] = paced[sleep_ms]
            played: dict[Setting, Played] = {}
            for name, ponder in rotated(settings, round_index):
                run_config = replace(config, ponder=ponder, seed=round_index)
                played[(name, ponder)] = victim_decisions(run_config, victim, neighbours[name])
            hog_turns += played[("cpu hog", False)].neighbour_walls
            rounds.append(played)
            loads.append(os.getloadavg()[0])
    print(f"end: {load_text()}; 1-minute load over the rounds {spread(loads)}")
    print(
        f"victim {args.victim}: {args.rounds} rounds x {len(settings)} settings x {args.games}"
        " games; per setting, the median over rounds of each round's ratio to the quiet"
        " setting of the same round (median over median), [quartiles] (range)"
    )
    for ponder in (False, True):
        names = [name for name, p in settings if p is ponder and name != "quiet"]
        if not names:
            continue
        print("freezing off (--ponder)" if ponder else "freezing on (default)")
        quiet = [r[("quiet", ponder)] for r in rounds]
        walls = [statistics.median(p.wall()) for p in quiet]
        cpus = [statistics.fmean(p.cpu_per_decision) for p in quiet if p.cpu_per_decision]
        print(
            f"  next to the quiet bot: wall ms per decision {spread(walls)};"
            f" CPU ms per decision {spread(cpus)}; the quiet bot's own ms {own_ms(quiet)}"
        )
        for name in names:
            here = [r[(name, ponder)] for r in rounds]
            compare(f"{name} / quiet", here, quiet)
            print(f"  {name}: the neighbour's own ms per decision {own_ms(here)}")
        if not ponder:
            as_slow = [r[("as slow", False)] for r in rounds]
            for name in ("cpu hog", "spinner"):
                compare(f"{name} / as slow", [r[(name, False)] for r in rounds], as_slow)
            print(
                "  target: cpu hog / quiet, wall, all decisions <= 1.10 (control: quiet"
                " again); 'as slow' sleeps the hog's own time per decision: the victim's"
                " cost of a slower opponent, apart from what the hog runs"
            )


if __name__ == "__main__":
    main()
