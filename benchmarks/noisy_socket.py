"""Traffic that is not the protocol must not cost the opponent time.
Run: python3 benchmarks/noisy_socket.py [--games N] [--rounds R] [--victim random]
     [--no-ponder]

Both bots' streams are served by one event-loop thread in the referee, so a
bot that makes the referee work (calls to methods it does not serve, on the
bot's own socket) could slow its opponent's replies down. The victim (the
test bot ``random`` by default: the fastest bot there is, so the one a slow
referee hurts most) plays, sandboxed, against four neighbours:

- ``quiet``: the test bot ``random``;
- ``flood``: the test bot ``unknown_method_flood``, which plays well and calls
  an unknown method as fast as it can (32 calls in flight) from the Welcome on;
- ``paced``: the same bot calling at RATE calls a second (``--rate``, default
  the referee's allowance, ``arena.referee.endpoint.NOT_PROTOCOL_PER_S``, when
  it has one, else 1): with an allowance, the most a bot may do and keep
  status ok; without one (a referee that has none), a bot cut off at its first
  call, about a second into the match;
- ``relaunched``: the test bot ``exit_midgame`` (exits at its sixth request,
  and is launched again for the next game), a control for what the flooder
  does besides its calls: it too is cut off early in each game and
  relaunched, so the victim's decisions beside it are the first few of a
  game, right after a new sandbox started.

with freezing on (the default) and off (``ponder``, unless ``--no-ponder``), and
``quiet again`` (the quiet bot once more: an A/A control that shows how far two
identical settings differ at this load). The settings run in alternating
rounds, their order rotated each round (``_alternate``), same seeds
everywhere. The victim's time per decision is the referee's (request on the
wire to reply received). Each round compares the victim's decisions next to a
neighbour with the very same decisions next to ``quiet`` (same seeds, and every
test bot plays the same random moves: a game next to any neighbour is the same
game until the referee stops one): median over median. Printed per setting:
the median of those per-round ratios with quartiles and range, the
neighbour's statuses, and how many decisions were compared; for a neighbour the
referee stops (its decisions are the few the victim made before that, a
handful per round), also the median of all its per-decision ratios; and
how many of the neighbour's calls the referee served, and how many of those
fell inside one of the victim's timed decisions (its clock's start to its reply
received): the cause itself, counted, where the ratios at a high load are
mostly noise. It runs against any checkout of the arena (``PYTHONPATH`` and a
copy of this file beside that checkout's ``arena``). Target:
the victim next to any neighbour within 10% of its time next to the quiet bot
(median ratio <= 1.10).
"""

from __future__ import annotations

import argparse
import bisect
import collections
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
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

sys.path.insert(0, str(ROOT / "benchmarks"))
from _alternate import load_text, ratio, rotated, spread  # noqa: E402

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


Decisions = dict[tuple[int, int], float]
"""(game, the victim's n-th decision in it) -> its time in ms."""


class Served:
    """When the referee served each call of a method it does not serve (the endpoint's
    refusal, wrapped: it still runs) of the neighbour, when each of the victim's
    messages came in (the endpoint's intake, wrapped too), the victim's timed decisions
    as (clock start, reply received) spans, and how many of those calls fell inside one
    of them: referee work for the neighbour in the victim's timed time."""

    def __init__(self) -> None:
        self.at_ns: list[int] = []
        self.received_ns: list[int] = []
        self.inside: collections.Counter[str] = collections.Counter()
        self.total: collections.Counter[str] = collections.Counter()
        cls = endpoint.BotEndpoint
        refuse, take = cls._refuse_call, cls._post_raw

        def noted(bot_endpoint: endpoint.BotEndpoint, method: str) -> None:
            if bot_endpoint.slot == 1:
                self.at_ns.append(time.monotonic_ns())
            refuse(bot_endpoint, method)

        def stamped(
            bot_endpoint: endpoint.BotEndpoint, raw: bytes, generation: int, received_ns: int
        ) -> None:
            if bot_endpoint.slot == 0:
                self.received_ns.append(received_ns)
            take(bot_endpoint, raw, generation, received_ns)

        setattr(cls, "_refuse_call", noted)  # noqa: B010 (wrappers)
        setattr(cls, "_post_raw", stamped)  # noqa: B010

    def span(self, elapsed_ms: float) -> tuple[int, int]:
        """The victim's decision just accepted, timed at ``elapsed_ms``."""
        received_ns = self.received_ns[-1]
        return received_ns - round(elapsed_ms * 1e6), received_ns

    def count(self, setting: str, spans: list[tuple[int, int]]) -> None:
        served, self.at_ns, self.received_ns = sorted(self.at_ns), [], []
        self.total[setting] += len(served)
        for started_ns, received_ns in spans:
            self.inside[setting] += bisect.bisect(served, received_ns) - bisect.bisect(
                served, started_ns
            )


def victim_decisions_ms(
    config: MatchConfig,
    victim: BotSpec,
    neighbour: BotSpec,
    statuses: collections.Counter[str],
    served: Served,
    setting: str,
) -> Decisions:
    """The victim's time per decision over one match (the victim is bot A)."""
    times: Decisions = {}
    made = collections.Counter[int]()
    spans: list[tuple[int, int]] = []

    def on_event(event: LiveEvent) -> None:
        if isinstance(event, ActionApplied) and event.seat == event.game_index % 2:
            made[event.game_index] += 1
            times[(event.game_index, made[event.game_index])] = event.elapsed_ms
            spans.append(served.span(event.elapsed_ms))

    report = run_match(config, victim, neighbour, on_event=on_event)
    served.count(setting, spans)
    for game in report.games:
        statuses[game.statuses[neighbour.name].value] += 1
        if game.statuses[victim.name].value != "ok":
            print(f"  the victim was blamed: {game.record['match']}", file=sys.stderr)
    return times


def paired(here: Decisions, quiet: Decisions) -> tuple[float | None, list[float]]:
    """Median over median of the decisions made in both, and each one's own ratio."""
    same = [key for key in here if key in quiet]
    return (
        ratio([here[key] for key in same], [quiet[key] for key in same]),
        [here[key] / quiet[key] for key in same if quiet[key] > 0],
    )


Setting = tuple[str, bool]  # neighbour label, ponder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="games per match (default 4)")
    parser.add_argument("--rounds", type=int, default=12, help="alternating rounds (default 12)")
    parser.add_argument("--victim", default="random", help="a test bot behaviour (default random)")
    parser.add_argument(
        "--no-ponder", action="store_true", help="only the default (freezing on) settings"
    )
    allowance = getattr(endpoint, "NOT_PROTOCOL_PER_S", None)
    parser.add_argument(
        "--rate", type=float, default=allowance or 1.0,
        help="calls a second of the paced neighbour (default: the referee's allowance)",
    )  # fmt: skip
    args = parser.parse_args()
    config = MatchConfig(
        games=args.games, seed=1, time_control=TimeControl(action_ms=2000, bank_ms=5000)
    )
    labels = ["quiet", "quiet again", "flood", "paced", "relaunched"]
    settings: list[Setting] = [(name, False) for name in labels]
    if not args.no_ponder:
        settings += [(name, True) for name in labels if name != "quiet again"]
    rounds: list[dict[Setting, Decisions]] = []
    statuses = {setting: collections.Counter[str]() for setting in settings}
    served = Served()
    loads = [os.getloadavg()[0]]
    print(f"start: {load_text()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kahuna-noisy-socket-") as tmp:
        root = Path(tmp)
        root.chmod(0o755)
        victim = make_testbot(root, "victim", args.victim)
        neighbours = {
            "quiet": make_testbot(root, "quiet", "random"),
            "flood": make_testbot(root, "flood", "unknown_method_flood"),
            "paced": make_testbot(root, "paced", "unknown_method_flood", f"{args.rate:g}"),
            "relaunched": make_testbot(root, "relaunched", "exit_midgame"),
        }
        neighbours["quiet again"] = neighbours["quiet"]
        for round_index in range(args.rounds):
            played: dict[Setting, Decisions] = {}
            for name, ponder in rotated(settings, round_index):
                run_config = replace(config, ponder=ponder, seed=round_index)
                played[(name, ponder)] = victim_decisions_ms(
                    run_config, victim, neighbours[name], statuses[(name, ponder)], served,
                    f"{name}{' ponder' if ponder else ''}",
                )  # fmt: skip
            rounds.append(played)
            loads.append(os.getloadavg()[0])
    print(f"end: {load_text()}; 1-minute load over the rounds {spread(loads)}")
    print(
        f"victim {args.victim}: {args.rounds} rounds x {len(settings)} settings x {args.games}"
        f" games; paced neighbour at {args.rate:g} calls/s; referee allowance:"
        f" {allowance if allowance is not None else 'none'}; per setting, the median over"
        " rounds of each round's ratio to the same decisions next to quiet, [quartiles] (range)"
    )
    for ponder in (False, True):
        names = [name for name, p in settings if p is ponder and name != "quiet"]
        if not names:
            continue
        print("freezing off (--ponder)" if ponder else "freezing on (default)")
        quiet = [r[("quiet", ponder)] for r in rounds]
        medians = [statistics.median(q.values()) for q in quiet if q]
        print(f"  next to quiet: ms per decision {spread(medians)}")
        for name in names:
            per_round: list[float] = []
            each: list[float] = []
            for q, r in zip(quiet, rounds, strict=True):
                value, ratios = paired(r[(name, ponder)], q)
                if value is not None:
                    per_round.append(value)
                each += ratios
            seen = ", ".join(
                f"{status} x{n}" for status, n in sorted(statuses[(name, ponder)].items())
            )
            key = f"{name}{' ponder' if ponder else ''}"
            print(
                f"  {name} / quiet: {spread(per_round)}; each decision's own ratio"
                f" {spread(each)}; neighbour: {seen}; its calls the referee served:"
                f" {served.total[key]}, {served.inside[key]} of them inside the victim's"
                " timed decisions"
            )
        if not ponder:
            print("  target: each neighbour / quiet <= 1.10 (control: quiet again / quiet)")


if __name__ == "__main__":
    main()
