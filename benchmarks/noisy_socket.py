"""Traffic that is not the protocol must not cost the opponent time (issue 17.2).
Run: python3 benchmarks/noisy_socket.py [--games N] [--rounds R] [--victim random]

Both bots' streams are served by one event-loop thread in the referee, so a
bot that makes the referee work (calls to methods it does not serve, on the
bot's own socket) could slow its opponent's replies down. The victim (the
test bot ``random`` by default: the fastest bot there is, so the one a slow
referee hurts most) plays, sandboxed, against three neighbours:

- ``quiet``: the test bot ``random``;
- ``flood``: the test bot ``unknown_method_flood``, which plays well and calls
  an unknown method as fast as it can (32 calls in flight) from the Welcome on;
- ``paced``: the same bot calling at RATE calls a second (``--rate``, default
  the referee's allowance, ``arena.referee.endpoint.NOT_PROTOCOL_PER_S``, when
  it has one): the most a bot may do and keep status ok.

with freezing on (the default) and off (``ponder``), in alternating rounds, same
seeds everywhere. Printed per setting: the victim's mean and median time per
decision as the referee measured it (request sent to reply received), its
number of decisions, the neighbour's statuses, and the ratio to its time on
the very same decisions next to ``quiet`` (same seeds, and every test bot
plays the same random moves: a game next to any neighbour is the same game
until the referee stops one). Target: the victim next to any neighbour within
10% of its time next to the quiet bot (ratio <= 1.10); a neighbour the referee
stops is listed with its status, and the victim's decisions are those it made
before that (the first decisions of games, which cost more than the rest).
"""

from __future__ import annotations

import argparse
import collections
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

from arena.referee import (  # noqa: E402
    BotSpec,
    MatchConfig,
    TimeControl,
    endpoint,
    load_bot,
    run_match,
)
from arena.referee.live import ActionApplied, LiveEvent  # noqa: E402

TESTBOT = ROOT / "tests" / "bots" / "testbot.py"


def make_testbot(root: Path, label: str, *argv: str) -> BotSpec:
    directory = root / label
    directory.mkdir(mode=0o755)
    shutil.copy(TESTBOT, directory / "bot.py")
    (directory / "bot.py").chmod(0o644)
    command = ["python3", "bot.py", f"kt-{uuid.uuid4().hex}", *argv]
    (directory / "bot.toml").write_text(
        f"name = {json.dumps(label)}\ncommand = {json.dumps(command)}\nruntime = \"python\"\n"
    )
    return load_bot(directory)


Decisions = dict[tuple[int, int, int], float]
"""(round, game, the victim's n-th decision in it) -> its time in ms."""


def victim_decisions_ms(
    config: MatchConfig,
    victim: BotSpec,
    neighbour: BotSpec,
    statuses: collections.Counter[str],
    round_index: int,
) -> Decisions:
    """The victim's time per decision over one match (the victim is bot A)."""
    times: Decisions = {}
    made = collections.Counter[int]()

    def on_event(event: LiveEvent) -> None:
        if isinstance(event, ActionApplied) and event.seat == event.game_index % 2:
            made[event.game_index] += 1
            times[(round_index, event.game_index, made[event.game_index])] = event.elapsed_ms

    report = run_match(config, victim, neighbour, on_event=on_event)
    for game in report.games:
        statuses[game.statuses[neighbour.name].value] += 1
        if game.statuses[victim.name].value != "ok":
            print(f"  the victim was blamed: {game.record['match']}", file=sys.stderr)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="games per match (default 4)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--victim", default="random", help="a test bot behaviour (default random)")
    allowance = getattr(endpoint, "NOT_PROTOCOL_PER_S", None)
    parser.add_argument(
        "--rate", type=float, default=allowance or 1.0,
        help="calls a second of the paced neighbour (default: the referee's allowance)",
    )  # fmt: skip
    args = parser.parse_args()
    config = MatchConfig(
        games=args.games, seed=1, time_control=TimeControl(action_ms=2000, bank_ms=5000)
    )
    with tempfile.TemporaryDirectory(prefix="kahuna-noisy-socket-") as tmp:
        root = Path(tmp)
        root.chmod(0o755)
        victim = make_testbot(root, "victim", args.victim)
        neighbours = {
            "quiet": make_testbot(root, "quiet", "random"),
            "flood": make_testbot(root, "flood", "unknown_method_flood"),
            "paced": make_testbot(root, "paced", "unknown_method_flood", f"{args.rate:g}"),
        }
        settings = [(name, ponder) for ponder in (False, True) for name in neighbours]
        times: dict[tuple[str, bool], Decisions] = {setting: {} for setting in settings}
        statuses = {setting: collections.Counter[str]() for setting in settings}
        for round_index in range(args.rounds):
            for name, ponder in settings:
                run_config = replace(config, ponder=ponder, seed=round_index)
                times[(name, ponder)].update(victim_decisions_ms(
                    run_config, victim, neighbours[name], statuses[(name, ponder)], round_index
                ))  # fmt: skip
    print(
        f"victim {args.victim}: time per decision, {args.rounds} x {args.games} games;"
        f" paced neighbour at {args.rate:g} calls/s;"
        f" referee allowance: {allowance if allowance is not None else 'none'}"
    )
    for ponder in (False, True):
        print("freezing off (--ponder)" if ponder else "freezing on (default)")
        quiet = times[("quiet", ponder)]
        for name in neighbours:
            found = times[(name, ponder)]
            seen = ", ".join(
                f"{status} x{n}" for status, n in sorted(statuses[(name, ponder)].items())
            )
            # Same seeds and the same random play: the victim's n-th decision of a game is
            # the same decision next to either neighbour, so each is compared with itself.
            same = [key for key in found if key in quiet]
            if not same:
                print(f"  next to {name}: no decisions (neighbour: {seen})")
                continue
            mean = statistics.fmean(found[key] for key in same)
            quiet_mean = statistics.fmean(quiet[key] for key in same)
            median = statistics.median(found[key] for key in same)
            quiet_median = statistics.median(quiet[key] for key in same)
            print(
                f"  next to {name}: {mean:.3f} ms mean, {median:.3f} median ({len(same)}"
                f" decisions); quiet on the same decisions {quiet_mean:.3f} mean,"
                f" {quiet_median:.3f} median: ratio {mean / quiet_mean:.2f} of means"
                f" (target <= 1.10), {median / quiet_median:.2f} of medians;"
                f" neighbour: {seen}"
            )

if __name__ == "__main__":
    main()
