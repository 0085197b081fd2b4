"""A bot's activity must not cost its opponent time (issue 10.6).
Run: python3 benchmarks/noisy_neighbour.py [--games N] [--rounds R] [--victim python_greedy]

The victim (a sample bot) plays, sandboxed, against a noisy neighbour (the test
bot ``spinner``: six children spinning and streaming through memory for the
whole match) and against a quiet one (the test bot ``random``), with freezing
on (the default: the bot that is not to move is frozen) and off (``ponder``).
Printed: the victim's mean and median thinking time per decision as the
referee measured it (request sent to reply received), same seeds in every
setting, the four settings run in alternating rounds so that load from other
work on the machine spreads over all of them. Target: with freezing on, the
victim's time next to the spinner within 10% of its time next to the quiet bot.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import uuid
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import _grpc_tuned  # noqa: E402, F401 (first: gRPC's environment as in arena processes)

# isort: split

from arena.referee import BotSpec, BotStatus, MatchConfig, TimeControl, load_bot, run_match  # noqa: E402
from arena.referee.live import ActionApplied, LiveEvent  # noqa: E402
from arena.sandbox import SandboxLimits  # noqa: E402

TESTBOT = ROOT / "tests" / "bots" / "testbot.py"


def make_testbot(root: Path, behaviour: str) -> BotSpec:
    directory = root / behaviour
    directory.mkdir(mode=0o755)
    shutil.copy(TESTBOT, directory / "bot.py")
    (directory / "bot.py").chmod(0o644)
    command = ["python3", "bot.py", f"kt-{uuid.uuid4().hex}", behaviour]
    (directory / "bot.toml").write_text(
        f"name = {json.dumps(behaviour)}\ncommand = {json.dumps(command)}\nruntime = \"python\"\n"
    )
    return load_bot(directory)


Decision = tuple[float, bool]  # thinking ms; whether the neighbour moved just before


def victim_decisions_ms(
    config: MatchConfig, victim: BotSpec, neighbour: BotSpec
) -> list[Decision]:
    """The victim's thinking time per decision over one match (victim is bot A)."""
    times: list[Decision] = []
    last_seat = [-1]

    def on_event(event: LiveEvent) -> None:
        if not isinstance(event, ActionApplied):
            return
        if event.seat == event.game_index % 2:
            times.append((event.elapsed_ms, last_seat[0] != event.seat))
        last_seat[0] = event.seat

    report = run_match(config, victim, neighbour, on_event=on_event)
    bad = [game.statuses for game in report.games if set(game.statuses.values()) != {BotStatus.OK}]
    if bad:
        print(f"  warning: not every game ended ok: {bad}", file=sys.stderr)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="games per match (default 4)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--victim", default="python_greedy", help="a bot in sample_bots/")
    args = parser.parse_args()
    config = MatchConfig(
        games=args.games, seed=1,
        time_control=TimeControl(action_ms=2000, bank_ms=5000),
        limits=SandboxLimits(max_processes=64),  # six children and gRPC's threads
    )  # fmt: skip
    victim = load_bot(ROOT / "sample_bots" / args.victim)
    settings = [(n, p) for p in (False, True) for n in ("random", "spinner")]
    times: dict[tuple[str, bool], list[Decision]] = {setting: [] for setting in settings}
    with tempfile.TemporaryDirectory(prefix="kahuna-noisy-") as tmp:
        root = Path(tmp)
        root.chmod(0o755)
        neighbours = {name: make_testbot(root, name) for name in ("random", "spinner")}
        for round_index in range(args.rounds):
            for name, ponder in settings:
                run_config = replace(config, ponder=ponder, seed=round_index)
                times[(name, ponder)] += victim_decisions_ms(run_config, victim, neighbours[name])
    print(f"victim {args.victim}: thinking time per decision, {args.rounds} x {args.games} games")
    for ponder in (False, True):
        label = "freezing off (--ponder)" if ponder else "freezing on (default)"
        quiet = [ms for ms, _ in times[("random", ponder)]]
        noisy = [ms for ms, _ in times[("spinner", ponder)]]
        quiet_mean, noisy_mean = statistics.fmean(quiet), statistics.fmean(noisy)
        print(
            f"{label}: next to a quiet bot {quiet_mean:.3f} ms mean"
            f" ({statistics.median(quiet):.3f} median, {len(quiet)} decisions);"
            f" next to the spinner {noisy_mean:.3f} ms mean"
            f" ({statistics.median(noisy):.3f} median, {len(noisy)} decisions);"
            f" ratio {noisy_mean / quiet_mean:.2f}"
            + (" (target <= 1.10)" if not ponder else "")
        )
        for first, what in ((True, "first decision of a turn"), (False, "later decisions")):
            quiet_part = [ms for ms, f in times[("random", ponder)] if f is first]
            noisy_part = [ms for ms, f in times[("spinner", ponder)] if f is first]
            if quiet_part and noisy_part:
                print(
                    f"  {what}: quiet {statistics.fmean(quiet_part):.3f} ms,"
                    f" spinner {statistics.fmean(noisy_part):.3f} ms"
                    f" ({len(noisy_part)} decisions),"
                    f" ratio {statistics.fmean(noisy_part) / statistics.fmean(quiet_part):.2f}"
                )


if __name__ == "__main__":
    main()
