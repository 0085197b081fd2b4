"""Referee benchmarks. Run: python3 benchmarks/referee.py [--games N] [--ponder]
                                                     [--baseline-tree DIR]

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

``--ponder`` also measures 1. with the freezer off (``MatchConfig.ponder``);
``--raw-aio`` also the same ping-pong through an asyncio gRPC server (the
referee's own transport, ``grpc.aio``), to tell the transport's cost from the
referee's.
``--baseline-tree DIR`` (a checkout of other code, e.g. ``git worktree add
/tmp/base main``) measures 1. for that code and this checkout alternately, each
referee run in a fresh process with ``PYTHONPATH`` at its tree, the order
rotated every round, the raw figure in every round: per setting the medians and
the ratios to raw.

Figures are noisy when other work runs on the machine; medians are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import queue
import shutil
import statistics
import subprocess
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
    bots: tuple[BotSpec, BotSpec], games: int, ponder: bool = False
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

    config = MatchConfig(
        games=games, seed=1, time_control=TimeControl(5000, 30000), ponder=ponder
    )
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


def raw_aio_per_decision(spec: BotSpec, requests: list[bytes], work: Path) -> tuple[float, float]:
    """``raw_per_decision`` with an asyncio gRPC server (``grpc.aio``, the referee's
    transport): one coroutine writes each request and reads the reply; wall ms and
    server-process CPU ms per round trip. What the transport alone costs the referee."""
    found: dict[str, float] = {}
    match_over = referee_pb2.PlayResponse(match_over=referee_pb2.MatchOver()).SerializeToString()

    async def play(_requests: object, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        await context.read()  # Hello
        start, start_cpu = time.perf_counter(), time.process_time()
        for raw in requests:
            await context.write(raw)
            await context.read()
        found["wall"] = (time.perf_counter() - start) * 1000 / len(requests)
        found["cpu"] = (time.process_time() - start_cpu) * 1000 / len(requests)
        await context.write(match_over)

    async def serve() -> None:
        handler = grpc.stream_stream_rpc_method_handler(play)
        server = grpc.aio.server(
            handlers=[grpc.method_handlers_generic_handler(SERVICE, {"Play": handler})]
        )
        socket_path = work / "raw-aio.sock"
        server.add_insecure_port(f"unix://{socket_path}")
        await server.start()
        process = launch_bot(
            bot_dir=spec.directory, command=spec.command, runtime=spec.runtime,
            env=_env("raw"), socket_path=socket_path, limits=SandboxLimits(),
            extra_ro_binds=_binds(), stderr_path=work / "raw-aio.stderr",
        )  # fmt: skip
        try:
            await asyncio.to_thread(process.wait, 60)
        finally:
            process.kill()
            await server.stop(None)

    asyncio.run(serve())
    return found["wall"], found["cpu"]


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


def per_decision(
    bots: tuple[BotSpec, BotSpec], work: Path, rounds: int, games: int, *, ponder: bool,
    raw_aio: bool = False,
) -> None:  # fmt: skip
    """Print 1.: the referee (freezer on, or off with ``ponder``) beside raw gRPC, each
    round a referee run and a raw run (and a raw ``grpc.aio`` run with ``raw_aio``)."""
    referee_ms, raw_ms, referee_cpu, raw_cpu = [], [], [], []
    aio_ms: list[float] = []
    aio_cpu: list[float] = []
    decisions, captured = 0, list[bytes]()
    for _ in range(rounds):
        wall_ms, cpu_ms, decisions, captured = referee_per_decision(bots, games, ponder)
        referee_ms.append(wall_ms)
        referee_cpu.append(cpu_ms)
        raw_wall_ms, raw_cpu_ms = raw_per_decision(bots[0], captured, work)
        raw_ms.append(raw_wall_ms)
        raw_cpu.append(raw_cpu_ms)
        if raw_aio:
            aio_wall_ms, aio_cpu_ms = raw_aio_per_decision(bots[0], captured, work)
            aio_ms.append(aio_wall_ms)
            aio_cpu.append(aio_cpu_ms)
    referee, raw = statistics.median(referee_ms), statistics.median(raw_ms)
    referee_c, raw_c = statistics.median(referee_cpu), statistics.median(raw_cpu)
    target = 1.3 if ponder else 1.5
    print(f"referee: {referee:.3f} ms/decision wall, {referee_c:.3f} "
          f"ms CPU in the referee process (median of {rounds} runs of {decisions})")
    print(f"raw gRPC ping-pong: {raw:.3f} ms/round trip wall, "
          f"{raw_c:.3f} ms CPU in the server ({len(captured)} requests)")
    print(f"ratio referee/raw: {referee / raw:.2f} wall, {referee_c / raw_c:.2f} CPU "
          f"(target <= {target})")
    ratios = [round(r / w, 2) for r, w in zip(referee_ms, raw_ms, strict=True)]
    print(f"  per-run wall ratios: {ratios}")
    if raw_aio:
        aio, aio_c = statistics.median(aio_ms), statistics.median(aio_cpu)
        print(f"raw grpc.aio ping-pong: {aio:.3f} ms/round trip wall ({aio / raw:.2f}x raw), "
              f"{aio_c:.3f} ms CPU ({aio_c / raw_c:.2f}x raw); referee/aio: "
              f"{referee / aio:.2f} wall, {referee_c / aio_c:.2f} CPU")  # fmt: skip


CHECKOUT = ROOT


def _referee_once(directories: list[str], games: int, ponder: bool) -> int:
    """One referee run of 1. in this process (with the code on its ``PYTHONPATH``): JSON."""
    configure(level="ERROR")
    bots = load_bot(Path(directories[0])), load_bot(Path(directories[1]))
    wall_ms, cpu_ms, decisions, _ = referee_per_decision(bots, games, ponder)
    print(json.dumps({"wall_ms": wall_ms, "cpu_ms": cpu_ms, "decisions": decisions}))
    return 0


def _referee_in(tree: Path, bots: tuple[BotSpec, BotSpec], games: int,
                ponder: bool) -> tuple[float, float]:  # fmt: skip
    """Wall and CPU ms per decision of a referee run of the code at ``tree``."""
    command = [sys.executable, __file__, "_referee", "--games", str(games),
               str(bots[0].directory), str(bots[1].directory)]  # fmt: skip
    if ponder:
        command.append("--ponder")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["wall_ms"], result["cpu_ms"]


def alternating(bots: tuple[BotSpec, BotSpec], work: Path, baseline: Path, rounds: int,
                games: int, ponder: bool) -> None:  # fmt: skip
    """1. for the baseline's code and this checkout's, alternately, beside raw gRPC."""
    settings = [(code, off) for code in ("before", "after") for off in (False, True)
                if off is False or ponder]  # fmt: skip
    wall: dict[tuple[str, bool], list[float]] = {setting: [] for setting in settings}
    cpu: dict[tuple[str, bool], list[float]] = {setting: [] for setting in settings}
    raw_wall: list[float] = []
    raw_cpu: list[float] = []
    _, _, _, captured = referee_per_decision(bots, 3)
    print(f"before: the code at {baseline}; after: {CHECKOUT}")
    for round_index in range(rounds):
        shift = round_index % (len(settings) + 1)
        order: list[tuple[str, bool] | None] = [*settings, None]
        for setting in [*order[shift:], *order[:shift]]:
            if setting is None:
                raw_ms, raw_cpu_ms = raw_per_decision(bots[0], captured, work)
                raw_wall.append(raw_ms)
                raw_cpu.append(raw_cpu_ms)
                continue
            tree = baseline if setting[0] == "before" else CHECKOUT
            wall_ms, cpu_ms = _referee_in(tree, bots, games, setting[1])
            wall[setting].append(wall_ms)
            cpu[setting].append(cpu_ms)
        print(f"  round {round_index + 1}: load {os.getloadavg()[0]:.2f}", flush=True)
    raw, raw_c = statistics.median(raw_wall), statistics.median(raw_cpu)
    print(f"raw gRPC ping-pong: {raw:.3f} ms wall, {raw_c:.3f} ms CPU per round trip "
          f"(median of {rounds})")
    for setting in settings:
        code, off = setting
        w, c = statistics.median(wall[setting]), statistics.median(cpu[setting])
        label = f"{code} {'ponder (freezer off)' if off else 'freezer on'}"
        print(f"{label:32s} {w:.3f} ms wall ({w / raw:.2f}x raw), {c:.3f} ms CPU "
              f"({c / raw_c:.2f}x raw) per decision")
    for code in ("before", "after"):
        if ponder:
            on, off = (statistics.median(wall[(code, freezer)]) for freezer in (False, True))
            on_c, off_c = (statistics.median(cpu[(code, freezer)]) for freezer in (False, True))
            print(f"{code}: the freezer's cost per decision {on - off:+.3f} ms wall, "
                  f"{on_c - off_c:+.3f} ms CPU")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_referee":
        once = argparse.ArgumentParser()
        once.add_argument("--games", type=int, required=True)
        once.add_argument("--ponder", action="store_true")
        once.add_argument("bots", nargs=2)
        parsed = once.parse_args(sys.argv[2:])
        return _referee_once(parsed.bots, parsed.games, parsed.ponder)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=12, help="games for the referee figures")
    parser.add_argument("--runs", type=int, default=7, help="launches for the first-message time")
    parser.add_argument("--rounds", type=int, default=5, help="referee/raw measurement pairs")
    parser.add_argument("--threads", action="store_true", help="also CPU per thread (1b)")
    parser.add_argument("--ponder", action="store_true", help="1. with the freezer off too")
    parser.add_argument("--raw-aio", action="store_true",
                        help="1. beside raw grpc.aio too (the referee's transport)")  # fmt: skip
    parser.add_argument("--baseline-tree", type=Path, default=None,
                        help="1. only, alternating this code with the code at DIR")  # fmt: skip
    args = parser.parse_args()
    configure(level="ERROR")
    with tempfile.TemporaryDirectory(prefix="kbench-", dir="/tmp") as work_dir:
        work = Path(work_dir)
        work.chmod(0o755)
        bots = make_testbot(work, "a"), make_testbot(work, "b")
        if args.baseline_tree is not None:
            alternating(bots, work, args.baseline_tree.resolve(), args.rounds, args.games,
                        args.ponder)  # fmt: skip
            return 0

        print("== 1. cost per decision (same bot, same request bytes)")
        per_decision(bots, work, args.rounds, args.games, ponder=False, raw_aio=args.raw_aio)
        if args.ponder:
            print("== 1. with the freezer off (--ponder)")
            per_decision(bots, work, args.rounds, args.games, ponder=True, raw_aio=args.raw_aio)

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
