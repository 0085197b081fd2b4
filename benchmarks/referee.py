"""Referee benchmarks (issue 3, item 8). Run: python3 benchmarks/referee.py [--games N]

Prints, all measured in the same run on this machine:

1. the referee's wall time per decision (request out, reply in, judged,
   applied) beside a raw gRPC bidirectional ping-pong that sends the very
   same ActionRequest bytes (captured from a referee match) to the very same
   sandboxed bot and reads its replies, with no referee logic at all;
   target: referee <= 1.5 x raw; then where the referee process's CPU goes,
   per thread (``--threads``: ``referee-grpc``, the endpoints' event loop, reads
   both bots' streams, judges, applies, builds and writes the next request;
   ``event_engine`` and ``_poll_wrapper`` are gRPC's own; the main thread only
   starts and ends games);
2. games per second, random against random, through the sandbox;
3. the time from launch_bot to the bot's Hello arriving, for a bare gRPC
   Python bot and for the SDK sample bot; target <= 0.25 s.

Figures are noisy when other work runs on the machine; medians are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

import grpc

from arena.logs import configure
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee import BotSpec, GameReport, MatchConfig, TimeControl, load_bot, run_match
from arena.referee.endpoint import Arrival, ArrivalKind, BotEndpoint
from arena.resources import ENGINE_MOUNT, PROTO_MOUNT, SDK_MOUNT
from arena.sandbox import SANDBOX_SOCKET, SandboxLimits, launch_bot, probe_host

ROOT = Path(__file__).resolve().parent.parent
TESTBOT = ROOT / "tests" / "bots" / "testbot.py"
SDK_BOT = ROOT / "sample_bots" / "python_random"
SERVICE = "kahuna.v1.RefereeService"


def make_testbot(root: Path, name: str) -> BotSpec:
    directory = root / name
    directory.mkdir(mode=0o755)
    shutil.copy(TESTBOT, directory / "bot.py")
    (directory / "bot.py").chmod(0o644)
    command = ["python3", "bot.py", f"bench-{uuid.uuid4().hex}", "random"]
    (directory / "bot.toml").write_text(
        f'name = "{name}"\ncommand = {json.dumps(command)}\nruntime = "python"\n'
    )
    return load_bot(directory)


def _env(token: str) -> dict[str, str]:
    inside = probe_host().namespaces
    return {
        "KAHUNA_REFEREE": f"unix://{SANDBOX_SOCKET}",
        "KAHUNA_TOKEN": token,
        "PYTHONPATH": PROTO_MOUNT.path_entry(inside),
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _binds() -> list[tuple[Path, str]]:
    return [(PROTO_MOUNT.host_dir(), PROTO_MOUNT.inside)] if probe_host().namespaces else []


# ---------------------------------------------------------------- 1. per decision


def referee_per_decision(
    bots: tuple[BotSpec, BotSpec], games: int
) -> tuple[float, float, int, list[bytes]]:
    """Referee wall ms and referee-process CPU ms per decision over games 1..
    (game 0 includes the launch)."""
    captured: list[bytes] = []
    ends: list[float] = []
    cpu: list[float] = []
    actions: list[int] = []

    def on_game(report: GameReport) -> None:
        ends.append(time.perf_counter())
        cpu.append(time.process_time())
        actions.append(report.actions)

    def tap(slot: int, raw: bytes) -> None:
        if slot == 0:
            captured.append(raw)  # decoded after the match: the tap must cost nothing

    config = MatchConfig(games=games, seed=1, time_control=TimeControl(5000, 30000))
    run_match(config, *bots, on_game=on_game, wire_tap=tap)
    decisions = sum(actions[1:])
    wall_ms = (ends[-1] - ends[0]) * 1000 / decisions
    requests = [
        raw for raw in captured
        if referee_pb2.PlayResponse.FromString(raw).WhichOneof("kind") == "action_request"
    ]
    return wall_ms, (cpu[-1] - cpu[0]) * 1000 / decisions, decisions, requests


def raw_per_decision(spec: BotSpec, requests: list[bytes], work: Path) -> tuple[float, float]:
    """A bare gRPC server sending ``requests`` to the same sandboxed bot:
    wall ms and server-process CPU ms per round trip."""
    timings: list[float] = []
    cpu: list[float] = []
    match_over = referee_pb2.PlayResponse(match_over=referee_pb2.MatchOver()).SerializeToString()

    def play(request_iterator: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
        next(request_iterator)  # Hello
        start, start_cpu = time.perf_counter(), time.process_time()
        for raw in requests:
            yield raw
            next(request_iterator)
        timings.append((time.perf_counter() - start) * 1000 / len(requests))
        cpu.append((time.process_time() - start_cpu) * 1000 / len(requests))
        yield match_over

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
    process = launch_bot(
        bot_dir=spec.directory, command=spec.command, runtime=spec.runtime,
        env=_env("raw"), socket_path=socket_path, limits=SandboxLimits(),
        extra_ro_binds=_binds(), stderr_path=work / "raw.stderr",
    )
    try:
        process.wait(60)
    finally:
        process.kill()
        server.stop(None)
    return timings[0], cpu[0]


# ---------------------------------------------------------------- 1b. CPU per thread

_CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def _thread_cpu_s() -> dict[str, float]:
    """CPU seconds of each live thread of this process, by thread name."""
    names = {str(thread.native_id): thread.name for thread in threading.enumerate()}
    found: dict[str, float] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            stat = Path(f"/proc/self/task/{tid}/stat").read_text()
            comm = Path(f"/proc/self/task/{tid}/comm").read_text().strip()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        cpu_s = (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS_PER_S
        name = names.get(tid, comm)
        found[name] = found.get(name, 0.0) + cpu_s
    return found


def cpu_by_thread(bots: tuple[BotSpec, BotSpec], games: int) -> tuple[dict[str, float], int]:
    """Referee-process CPU microseconds per decision, per thread, over games 1.."""
    snapshots: list[dict[str, float]] = []
    actions: list[int] = []

    def on_game(report: GameReport) -> None:
        snapshots.append(_thread_cpu_s())
        actions.append(report.actions)

    config = MatchConfig(games=games, seed=1, time_control=TimeControl(5000, 30000))
    run_match(config, *bots, on_game=on_game)
    decisions = sum(actions[1:])
    first, last = snapshots[0], snapshots[-1]
    per_thread = {
        name: (cpu_s - first.get(name, 0.0)) * 1e6 / decisions for name, cpu_s in last.items()
    }
    return per_thread, decisions


# ---------------------------------------------------------------- 3. first message


def first_message_s(spec: BotSpec, work: Path, runs: int) -> list[float]:
    arrivals: queue.SimpleQueue[Arrival] = queue.SimpleQueue()
    endpoint = BotEndpoint(0, work / f"fm-{spec.name}.sock", arrivals)
    endpoint.start()
    binds = _binds()
    env = _env("first")
    if spec.directory == SDK_BOT.resolve():  # the SDK, and the engine it is built on
        sandboxed = bool(binds)
        mounts = (SDK_MOUNT, ENGINE_MOUNT)
        binds = [*binds, *((m.host_dir(), m.inside) for m in mounts)] if sandboxed else []
        env["PYTHONPATH"] += "".join(":" + m.path_entry(sandboxed) for m in mounts)
    results = []
    for _ in range(runs):
        endpoint.generation += 1
        start = time.perf_counter()
        process = launch_bot(
            bot_dir=spec.directory, command=spec.command, runtime=spec.runtime, env=env,
            socket_path=endpoint.socket_path, limits=SandboxLimits(), extra_ro_binds=binds,
            stderr_path=work / "fm.stderr",
        )
        while True:
            arrival = arrivals.get(timeout=10)
            if arrival.kind is ArrivalKind.MESSAGE and arrival.generation == endpoint.generation:
                break
        results.append(time.perf_counter() - start)
        endpoint.close_stream()
        process.kill()
        time.sleep(0.05)
    endpoint.stop()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=12, help="games for the referee figures")
    parser.add_argument("--runs", type=int, default=7, help="launches for the first-message time")
    parser.add_argument("--rounds", type=int, default=5, help="referee/raw measurement pairs")
    parser.add_argument("--threads", action="store_true", help="also CPU per thread (1b)")
    args = parser.parse_args()
    configure(level="ERROR")
    with tempfile.TemporaryDirectory(prefix="kbench-", dir="/tmp") as work_dir:
        work = Path(work_dir)
        work.chmod(0o755)
        bots = make_testbot(work, "a"), make_testbot(work, "b")

        print("== 1. cost per decision (same bot, same request bytes)")
        referee_ms, raw_ms, referee_cpu, raw_cpu = [], [], [], []
        for _ in range(args.rounds):
            wall_ms, cpu_ms, decisions, captured = referee_per_decision(bots, args.games)
            referee_ms.append(wall_ms)
            referee_cpu.append(cpu_ms)
            raw_wall_ms, raw_cpu_ms = raw_per_decision(bots[0], captured, work)
            raw_ms.append(raw_wall_ms)
            raw_cpu.append(raw_cpu_ms)
        referee, raw = statistics.median(referee_ms), statistics.median(raw_ms)
        print(f"referee: {referee:.3f} ms/decision wall, {statistics.median(referee_cpu):.3f} "
              f"ms CPU in the referee process (median of {args.rounds} runs of {decisions})")
        print(f"raw gRPC ping-pong: {raw:.3f} ms/round trip wall, "
              f"{statistics.median(raw_cpu):.3f} ms CPU in the server ({len(captured)} requests)")
        print(f"ratio referee/raw: {referee / raw:.2f} wall (target <= 1.5), "
              f"{statistics.median(referee_cpu) / statistics.median(raw_cpu):.2f} CPU")
        ratios = [round(r / w, 2) for r, w in zip(referee_ms, raw_ms, strict=True)]
        print(f"  per-run wall ratios: {ratios}")

        if args.threads:
            print("== 1b. referee-process CPU per decision, by thread (10 ms clock ticks)")
            per_thread, decisions = cpu_by_thread(bots, args.games * 2)
            for name, us in sorted(per_thread.items(), key=lambda item: -item[1]):
                if us > 0:
                    print(f"  {name:24s} {us:7.1f} us/decision")
            print(f"  total {sum(per_thread.values()):.1f} us/decision over {decisions}")

        print("== 2. games per second, random vs random, sandboxed")
        start = time.perf_counter()
        games = args.games * 2
        run_match(MatchConfig(games=games, seed=2), *bots)
        elapsed = time.perf_counter() - start
        print(f"{games} games in {elapsed:.2f} s: {games / elapsed:.1f} games/s "
              "(including two launches)")

        print("== 3. launch to first message")
        for label, spec in (("bare gRPC bot", bots[0]), ("SDK python_random", None)):
            if spec is None:
                if not SDK_BOT.is_dir():
                    continue
                spec = load_bot(SDK_BOT)
            times = first_message_s(spec, work, args.runs)
            print(f"{label}: median {statistics.median(times):.3f} s, "
                  f"min {min(times):.3f} s, max {max(times):.3f} s (target <= 0.25 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
