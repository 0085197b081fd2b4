"""Per-decision latency of the compiled starter kits against raw gRPC ping-pong.

    python3 benchmarks/kit_latency.py [--games N] [--rounds N] [--only NAME]

Target: the referee-measured per-decision latency of the compiled kits (Go,
Rust, C++) no worse than 1.2x the raw gRPC ping-pong of benchmarks/referee.py.

Each round, for each bot in turn (alternating, so that load drifts hit all
alike), all sandboxed with the default limits:

1. **referee**: a real match of N games, the bot against referee.py's bare
   Python test bot; the figure is the wall time the referee itself measured
   for each of the bot's decisions (the record's ``match.timings``, request
   sent to reply arrived), median and mean;
   measured twice: as tournaments play (the idle seat frozen by the cgroup
   freezer, thawed before its request's clock starts) and with ``ponder``
   (no freezer), which shows the freezer's share;
2. **raw, same bot**: a bare gRPC server with no referee logic replays the
   very messages the referee sent that bot's seat (captured with the
   referee's wire tap: GameStart, ActionRequests, GameOver, MatchOver, as
   bytes) to the same bot, launched again, and times each request to its
   reply;
3. **raw, referee.py's bot**: the same replay to referee.py's bare Python
   test bot: the raw ping-pong that benchmarks/referee.py reports.

Printed: medians over the rounds of each figure, the ratios referee/raw
(same bot) and referee/raw (referee.py's bot), and the load average. Build
the kits first (python3 -m tests.kits.building). ``--compare ROOT`` adds the
same kits built under another checkout's sample_bots/ (e.g. a worktree of
main), labelled ``name@ROOT``, to the same alternating rounds.
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

import grpc
from referee import SERVICE, _binds, _env, make_testbot

from arena.logs import configure
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee import BotSpec, MatchConfig, TimeControl, load_bot, run_match
from arena.referee.timings import seat_walls
from arena.sandbox import SandboxLimits, launch_bot, probe_host

ROOT = Path(__file__).resolve().parent.parent
KITS = ("go_random", "rust_random", "cpp_random")
TARGET = 1.2


@dataclass
class Figures:
    referee_median: list[float] = field(default_factory=list)
    referee_mean: list[float] = field(default_factory=list)
    ponder_median: list[float] = field(default_factory=list)
    raw_median: list[float] = field(default_factory=list)
    raw_mean: list[float] = field(default_factory=list)


def referee_timings(bot: BotSpec, opponent: BotSpec, games: int, seed: int, *,
                    ponder: bool = False) -> tuple[list[float], list[bytes]]:
    """The referee's wall ms for each of ``bot``'s decisions, and what it sent the bot."""
    sent: dict[int, list[bytes]] = {0: [], 1: []}

    def tap(slot: int, raw: bytes) -> None:
        sent[slot].append(raw)  # decoded after the match: the tap must cost nothing

    config = MatchConfig(games=games, seed=seed, time_control=TimeControl(5000, 30000),
                         ponder=ponder)
    report = run_match(config, bot, opponent, wire_tap=tap)
    walls: list[float] = []
    for game in report.games:
        seat = game.bots_by_seat.index(bot.name)
        match = game.record["match"]
        assert isinstance(match, dict)
        walls += seat_walls(match["timings"], seat)
    return walls, sent[0]  # slot 0 is the first bot given to run_match


def raw_round_trips(bot: BotSpec, messages: list[bytes], work: Path) -> list[float]:
    """A bare gRPC server replays ``messages`` to ``bot``: ms per request to its reply."""
    trips: queue.SimpleQueue[list[float]] = queue.SimpleQueue()

    def play(request_iterator: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
        next(request_iterator)  # Hello
        timings = []
        for raw in messages:
            kind = referee_pb2.PlayResponse.FromString(raw).WhichOneof("kind")
            start = time.perf_counter()
            yield raw
            if kind == "action_request":
                next(request_iterator)
                timings.append((time.perf_counter() - start) * 1000)
        trips.put(timings)

    handler = grpc.stream_stream_rpc_method_handler(
        play, request_deserializer=bytes, response_serializer=bytes
    )
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=4),
        handlers=[grpc.method_handlers_generic_handler(SERVICE, {"Play": handler})],
    )
    socket_path = work / "raw.sock"
    server.add_insecure_port(f"unix://{socket_path}")
    server.start()
    binds = _binds() if bot.runtime == "python" else []
    env = _env("raw") if bot.runtime == "python" else {
        key: value for key, value in _env("raw").items() if key.startswith("KAHUNA_")
    }
    process = launch_bot(
        bot_dir=bot.directory, command=bot.command, runtime=bot.runtime, env=env,
        socket_path=socket_path, limits=SandboxLimits(), extra_ro_binds=binds,
        stderr_path=work / "raw.stderr",
    )
    try:
        process.wait(120)
        return trips.get(timeout=5)
    finally:
        process.kill()
        server.stop(None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6, help="games per referee match")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds")
    parser.add_argument("--only", default="", help="only kits whose name contains this")
    parser.add_argument("--compare", type=Path, action="append", default=[], metavar="ROOT",
                        help="also the kits built under ROOT/sample_bots (repeatable)")
    args = parser.parse_args()
    if probe_host().missing:
        print(f"sandbox unavailable here: {probe_host().missing}", file=sys.stderr)
        return 1
    configure(level="ERROR")
    kits = [name for name in KITS if args.only in name]
    roots = [ROOT, *args.compare]
    for root in roots:
        for name in kits:
            if not (root / "sample_bots" / name / "bot").is_file():
                print(f"{root}: {name} is not built (tests.kits.building)", file=sys.stderr)
                return 1
    with tempfile.TemporaryDirectory(prefix="kkitlat-", dir="/tmp") as work_dir:
        work = Path(work_dir)
        work.chmod(0o755)
        testbot, opponent = make_testbot(work, "testbot"), make_testbot(work, "opponent")
        bots = [load_bot(root / "sample_bots" / name) for root in roots for name in kits]
        labels = {bot.directory: _label(bot, roots) for bot in [*bots, testbot]}
        figures = {labels[bot.directory]: Figures() for bot in [*bots, testbot]}
        reference: list[float] = []  # referee.py's raw ping-pong, per round
        loads = [os.getloadavg()[0]]
        for round_index in range(args.rounds):
            for bot in [testbot, *bots]:
                walls, sent = referee_timings(bot, opponent, args.games, seed=round_index + 1)
                trips = raw_round_trips(bot, sent, work)
                pondering, _ = referee_timings(bot, opponent, args.games, seed=round_index + 1,
                                               ponder=True)
                entry = figures[labels[bot.directory]]
                entry.ponder_median.append(statistics.median(pondering))
                entry.referee_median.append(statistics.median(walls))
                entry.referee_mean.append(statistics.fmean(walls))
                entry.raw_median.append(statistics.median(trips))
                entry.raw_mean.append(statistics.fmean(trips))
                if bot is testbot:
                    reference.append(statistics.median(trips))
            loads.append(os.getloadavg()[0])
        raw_reference = statistics.median(reference)
        print(f"{args.rounds} alternating rounds of {args.games} games per bot; load average "
              f"{min(loads):.2f}-{max(loads):.2f} (1 min)")
        print(f"raw gRPC ping-pong, referee.py's bare Python bot: median {raw_reference:.3f} ms")
        print(f"{'bot':24} {'referee ms':>21} {'no freezer':>10} {'raw ms (same bot)':>21} "
              f"{'ref/raw same':>13} {'ref/raw ref.py':>15}")
        for name, entry in figures.items():
            referee = statistics.median(entry.referee_median)
            raw = statistics.median(entry.raw_median)
            verdict = ""
            if name.split("@")[0] in KITS:
                verdict = "ok" if referee <= TARGET * raw_reference else "MISSED"
            referee_mean = statistics.median(entry.referee_mean)
            ponder = statistics.median(entry.ponder_median)
            print(f"{name:24} median {referee:6.3f} mean {referee_mean:6.3f} {ponder:10.3f}"
                  f" median {raw:6.3f} mean {statistics.median(entry.raw_mean):6.3f}"
                  f" {referee / raw:13.2f} {referee / raw_reference:15.2f} {verdict}")
        print(f"target: referee-measured latency of a compiled kit <= {TARGET} x the raw "
              "ping-pong of referee.py's bot (last column <= 1.2)")
    return 0


def _label(bot: BotSpec, roots: list[Path]) -> str:
    """The kit's name, with the checkout it was built in when it is not this one."""
    for root in roots[1:]:
        if bot.directory.resolve().is_relative_to(root.resolve()):
            return f"{bot.name}@{root}"
    return bot.name


if __name__ == "__main__":
    sys.exit(main())
