"""Referee benchmarks. Run: python3 benchmarks/referee.py [--games N] [--ponder]
                                                     [--baseline-tree DIR]

Prints, all measured in the same run on this machine:

1. the referee's wall time and CPU per decision (request out, reply in,
   judged, applied) beside two transports with no referee logic that send
   the very same ActionRequest bytes (captured from a referee match of the
   same games) to the very same sandboxed test bots and read their replies:
   ``raw``, one bot's requests on one stream of a synchronous gRPC server
   (target: referee <= 1.5 x raw, 1.3 x with the freezer off), and ``floor``,
   both bots' requests on two grpc.aio streams in the referee's shape
   (``transport_floor.py``'s ``aio-2``: what serving two bots whose turn
   alternates costs before any judging). The referee, raw and the floor each
   run in a fresh process (gRPC's poller thread outlives a server: a raw
   ping-pong in the process that ran a referee costs 1.3-1.7x its cost in a
   fresh one); then where the referee process's CPU goes, per thread
   (``--threads``: ``referee-grpc``, the endpoints' event loop, reads both
   bots' streams, judges, applies, builds and writes the next request;
   ``_poll_wrapper`` is gRPC's; the main thread only starts and ends games);
2. games per second, random against random, through the sandbox;
3. the time from launch_bot to the bot's Hello arriving, for a bare gRPC
   Python bot and for the SDK sample bot; target <= 0.25 s.

``--ponder`` also measures 1. with the freezer off (``MatchConfig.ponder``);
``--raw-aio`` also the one-stream ping-pong through grpc.aio
(``transport_floor.py``'s ``raw-aio``).
``--baseline-tree DIR`` (a checkout of other code, e.g. ``git worktree add
/tmp/base main``) measures 1. for that code and this checkout alternately, each
referee run in a fresh process with ``PYTHONPATH`` at its tree, the order
rotated every round, raw and the floor in every round: per setting the
medians and the ratios to both.

Figures are noisy when other work runs on the machine; medians are printed.
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

from _alternate import load_text, rotated, spread

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


Requests = list[tuple[int, bytes]]
"""A match's ActionRequests as the referee wrote them, in order: (slot, bytes)."""


def referee_per_decision(
    bots: tuple[BotSpec, BotSpec], games: int, ponder: bool = False
) -> tuple[float, float, int, Requests]:
    """Referee wall ms and referee-process CPU ms per decision over games 1..
    (game 0 includes the launch), and the match's requests."""
    captured: Requests = []
    ends: list[float] = []
    cpu: list[float] = []
    actions: list[int] = []

    def on_game(report: GameReport) -> None:
        ends.append(time.perf_counter())
        cpu.append(time.process_time())
        actions.append(report.actions)

    def tap(slot: int, raw: bytes) -> None:
        captured.append((slot, raw))  # decoded after the match: the tap must cost nothing

    config = MatchConfig(
        games=games, seed=1, time_control=TimeControl(5000, 30000), ponder=ponder
    )
    run_match(config, *bots, on_game=on_game, wire_tap=tap)
    decisions = sum(actions[1:])
    wall_ms = (ends[-1] - ends[0]) * 1000 / decisions
    requests = [
        (slot, raw) for slot, raw in captured
        if referee_pb2.PlayResponse.FromString(raw).WhichOneof("kind") == "action_request"
    ]  # fmt: skip
    return wall_ms, (cpu[-1] - cpu[0]) * 1000 / decisions, decisions, requests


TRANSPORTS = {"raw": "raw_sync", "floor": "aio_two", "raw-aio": "raw_aio"}
"""The transports without referee logic ``transport_in`` runs, by their name here: the
shapes of ``benchmarks/transport_floor.py`` (see its docstring)."""


def transport_in(name: str, requests: Requests, bots: tuple[BotSpec, BotSpec],
                 work: Path) -> tuple[float, float]:  # fmt: skip
    """Wall and CPU ms per decision of transport ``name`` (``TRANSPORTS``) replaying
    ``requests`` to ``bots``, in a fresh process (``transport_floor.py _serve``)."""
    sequence = work / "requests.json"
    sequence.write_text(json.dumps([(slot, raw.hex()) for slot, raw in requests]))
    command = [sys.executable, str(Path(__file__).with_name("transport_floor.py")), "_serve",
               TRANSPORTS[name], str(sequence), str(work), str(bots[0].directory),
               str(bots[1].directory)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["wall_ms"]), float(result["cpu_ms"])


# ---------------------------------------------------------------- 1b. CPU per thread

_CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def _thread_cpu_s() -> dict[str, float]:
    """CPU seconds of each live thread of this process, by thread name: the scheduler's
    run time in nanoseconds (``schedstat``), or 10 ms clock ticks where it is not kept."""
    names = {str(thread.native_id): thread.name for thread in threading.enumerate()}
    found: dict[str, float] = {}
    for tid in os.listdir("/proc/self/task"):
        task = Path(f"/proc/self/task/{tid}")
        try:
            comm = (task / "comm").read_text().strip()
            try:
                cpu_s = int((task / "schedstat").read_text().split()[0]) / 1e9
            except (OSError, IndexError, ValueError):
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                cpu_s = (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS_PER_S
        except OSError:
            continue
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
    """Print 1.: the referee (freezer on, or off with ``ponder``) beside raw gRPC and the
    two-stream floor (and raw ``grpc.aio`` with ``raw_aio``), each in a fresh process,
    in rounds whose order is rotated."""
    _, _, _, requests = referee_per_decision(bots, games, ponder=True)
    names = ["referee", "raw", "floor", *(["raw-aio"] if raw_aio else [])]
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(rounds):
        for name in rotated(names, round_index):
            if name == "referee":
                wall_ms, cpu_ms = _referee_in(CHECKOUT, bots, games, ponder)
            else:
                wall_ms, cpu_ms = transport_in(name, requests, bots, work)
            wall[name].append(wall_ms)
            cpu[name].append(cpu_ms)
    w = {name: statistics.median(wall[name]) for name in names}
    c = {name: statistics.median(cpu[name]) for name in names}
    target = 1.3 if ponder else 1.5
    print(f"referee: {w['referee']:.3f} ms/decision wall, {c['referee']:.3f} ms CPU in the "
          f"referee process (median of {rounds} runs of games 2..{games})")  # fmt: skip
    for name in names[1:]:
        print(f"{name}: {w[name]:.3f} ms/decision wall, {c[name]:.3f} ms CPU "
              f"({len(requests)} requests replayed in a fresh process)")  # fmt: skip
    print(f"ratio referee/raw: {w['referee'] / w['raw']:.2f} wall, {c['referee'] / c['raw']:.2f} "
          f"CPU (target <= {target}); referee/floor: {w['referee'] / w['floor']:.2f} wall, "
          f"{c['referee'] / c['floor']:.2f} CPU; floor/raw {c['floor'] / c['raw']:.2f} CPU")
    ratios = [round(r / x, 2) for r, x in zip(cpu["referee"], cpu["raw"], strict=True)]
    print(f"  per-round CPU ratios to raw: {ratios}")


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
    """1. for the baseline's code and this checkout's, alternately, beside raw gRPC and the
    two-stream floor (every run in a fresh process)."""
    settings = [(code, off) for code in ("before", "after") for off in (False, True)
                if off is False or ponder]  # fmt: skip
    order: list[tuple[str, bool] | str] = [*settings, "raw", "floor"]
    wall: dict[tuple[str, bool] | str, list[float]] = {setting: [] for setting in order}
    cpu: dict[tuple[str, bool] | str, list[float]] = {setting: [] for setting in order}
    _, _, _, requests = referee_per_decision(bots, games, ponder=True)
    print(f"before: the code at {baseline}; after: {CHECKOUT}")
    for round_index in range(rounds):
        for setting in rotated(order, round_index):
            if isinstance(setting, str):
                wall_ms, cpu_ms = transport_in(setting, requests, bots, work)
            else:
                tree = baseline if setting[0] == "before" else CHECKOUT
                wall_ms, cpu_ms = _referee_in(tree, bots, games, setting[1])
            wall[setting].append(wall_ms)
            cpu[setting].append(cpu_ms)
        print(f"  round {round_index + 1}: {load_text()}", flush=True)
    w = {setting: statistics.median(wall[setting]) for setting in order}
    c = {setting: statistics.median(cpu[setting]) for setting in order}
    print(f"medians of {rounds} rounds; raw: one stream, synchronous server; floor: two "
          "grpc.aio streams, no referee logic; both in fresh processes")  # fmt: skip
    for name in ("raw", "floor"):
        print(f"{name:32s} {w[name]:.3f} ms wall, {c[name]:.3f} ms CPU per decision "
              f"({c[name] / c['raw']:.2f}x raw CPU)")  # fmt: skip
    for setting in settings:
        code, off = setting
        label = f"{code} {'ponder (freezer off)' if off else 'freezer on'}"
        print(f"{label:32s} {w[setting]:.3f} ms wall ({w[setting] / w['raw']:.2f}x raw, "
              f"{w[setting] / w['floor']:.2f}x floor), {c[setting]:.3f} ms CPU "
              f"({c[setting] / c['raw']:.2f}x raw, {c[setting] / c['floor']:.2f}x floor)")
        pairs = zip(cpu[setting], cpu["raw"], strict=True)
        print(f"{'':32s} per-round CPU / raw {spread([a / b for a, b in pairs])}")
    for code in ("before", "after"):
        if ponder:
            on, off = w[(code, False)], w[(code, True)]
            on_c, off_c = c[(code, False)], c[(code, True)]
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
            print("== 1b. referee-process CPU per decision, by thread")
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
