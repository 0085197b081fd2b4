"""Launch to first message of the C++ and TypeScript starter kits, in the sandbox.

    python3 benchmarks/kits_cpp_ts.py [--runs N] [--built KIT_DIR ...]

Each kit is copied and built with its own build.sh (or taken as built from
--built), then launched --runs times through launch_bot against a real
gRPC RefereeService on a Unix socket; the clock runs from just before
launch_bot to the moment the bot's Hello arrives on its Play stream (the
server then sends Welcome and MatchOver, and the bot exits). python_random
is measured the same way for comparison. Also prints each kit's cold build
time (wall and CPU) and the size of what it ships. Medians and 90th
percentiles in milliseconds; other work on the machine makes them noisy.
Target: under 50 ms for the compiled kits.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc

from arena.commands.kits import copy_sources, sample_bots_dir
from arena.protocol.gen.kahuna.v1 import referee_pb2, referee_pb2_grpc
from arena.referee import load_bot
from arena.referee.slots import GENERATED_DIR, PROTO_INSIDE, PYTHON_SDK_DIR, SDK_INSIDE
from arena.sandbox import SANDBOX_SOCKET, SandboxLimits, launch_bot, probe_host

KITS = ("cpp_random", "ts_random")


class HelloTimer(referee_pb2_grpc.RefereeServiceServicer):
    """Records when each stream's first message arrives; then ends the match at once."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []
        self.arrived = threading.Event()

    def Play(
        self, request_iterator: Iterator[referee_pb2.PlayRequest], context: grpc.ServicerContext
    ) -> Iterator[referee_pb2.PlayResponse]:
        next(request_iterator)
        self.arrivals.append(time.perf_counter())
        self.arrived.set()
        yield referee_pb2.PlayResponse(welcome=referee_pb2.Welcome(protocol_version=1, games=0))
        yield referee_pb2.PlayResponse(match_over=referee_pb2.MatchOver(games=0))

    def wait(self, timeout_s: float = 30.0) -> float:
        if not self.arrived.wait(timeout_s):
            raise TimeoutError("no Hello arrived")
        self.arrived.clear()
        return self.arrivals[-1]


def percentiles(samples_ms: list[float]) -> str:
    ordered = sorted(samples_ms)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):7.1f} ms   p90 {p90:7.1f} ms"


def build(kit: str, work: Path) -> tuple[Path, str]:
    directory = work / kit
    copy_sources(sample_bots_dir() / kit, directory)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run(["./build.sh"], cwd=directory, check=True, capture_output=True)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return directory, f"cold build {wall:5.1f} s wall, {cpu:5.1f} s CPU"


def shipped_size(directory: Path) -> str:
    files = [p for p in directory.rglob("*") if p.is_file() and not p.is_symlink()]
    largest = max(files, key=lambda p: p.stat().st_size)
    total = sum(p.stat().st_size for p in files)
    packed = subprocess.run(["tar", "czf", "-", "-C", str(directory.parent), directory.name],
                            check=True, capture_output=True).stdout  # fmt: skip
    return (
        f"{total / 2**20:.1f} MiB in {len(files)} files, largest {largest.name}"
        f" {largest.stat().st_size / 2**20:.1f} MiB, tar.gz {len(packed) / 2**20:.1f} MiB"
    )


def launch_times(directory: Path, runs: int, socket_path: Path, timer: HelloTimer) -> list[float]:
    spec = load_bot(directory)
    env = {"KAHUNA_REFEREE": f"unix://{SANDBOX_SOCKET}", "KAHUNA_TOKEN": "benchmark"}
    binds: list[tuple[Path, str]] = []
    if spec.runtime == "python":  # as the referee lays them out (arena/referee/slots.py)
        binds = [(GENERATED_DIR, PROTO_INSIDE), (PYTHON_SDK_DIR, SDK_INSIDE)]
        env["PYTHONPATH"] = f"{PROTO_INSIDE}:{SDK_INSIDE}"
    samples: list[float] = []
    for _ in range(runs):
        began = time.perf_counter()
        bot = launch_bot(bot_dir=directory, command=spec.command, runtime=spec.runtime, env=env,
                         socket_path=socket_path, limits=SandboxLimits(),
                         extra_ro_binds=binds)  # fmt: skip
        try:
            samples.append((timer.wait() - began) * 1000)
            bot.wait(10)
        finally:
            bot.kill()
    return samples


def bare_times(directory: Path, runs: int, socket_path: Path, timer: HelloTimer) -> list[float]:
    """The same launch without the sandbox: the bot's own start-up cost."""
    spec = load_bot(directory)
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
           "KAHUNA_REFEREE": f"unix://{socket_path}", "KAHUNA_TOKEN": "benchmark",
           "PYTHONPATH": f"{GENERATED_DIR}:{PYTHON_SDK_DIR}"}  # fmt: skip
    command = [sys.executable, *spec.command[1:]] if spec.runtime == "python" else spec.command
    samples: list[float] = []
    for _ in range(runs):
        began = time.perf_counter()
        process = subprocess.Popen(command, cwd=directory, env=env, stderr=subprocess.DEVNULL)
        try:
            samples.append((timer.wait() - began) * 1000)
            process.wait(10)
        finally:
            process.kill()
    return samples


def floor_times(directory: Path, runs: int, socket_path: Path) -> list[float]:
    """The sandbox's own cost: launch to exit of /bin/true, a native program doing nothing."""
    samples: list[float] = []
    for _ in range(runs):
        began = time.perf_counter()
        bot = launch_bot(bot_dir=directory, command=["/bin/true"], runtime="native", env={},
                         socket_path=socket_path, limits=SandboxLimits())  # fmt: skip
        try:
            bot.wait(10)
            samples.append((time.perf_counter() - began) * 1000)
        finally:
            bot.kill()
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--built", type=Path, nargs="*", default=[],
                        help="kit directories built before (not built again)")  # fmt: skip
    args = parser.parse_args(argv)
    if probe_host().missing:
        print(f"sandbox unavailable here: {probe_host().missing}", file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="kbench-kits-"))
    work.chmod(0o755)
    timer = HelloTimer()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    referee_pb2_grpc.add_RefereeServiceServicer_to_server(timer, server)
    socket_path = work / "referee.sock"
    server.add_insecure_port(f"unix://{socket_path}")
    server.start()
    try:
        given = {load_bot(path).name: path.resolve() for path in args.built}
        bots: list[tuple[str, Path, str]] = []
        for kit in KITS:
            if kit in given:
                bots.append((kit, given[kit], "built before"))
            else:
                directory, note = build(kit, work)
                bots.append((kit, directory, note))
        bots.append(("python_random", sample_bots_dir() / "python_random", "no build"))
        print(
            f"launch to Hello in the sandbox, {args.runs} runs each (noisy if the machine is busy)"
        )
        floor = floor_times(bots[0][1], args.runs, socket_path)
        print(
            f"  {'(/bin/true)':<14} {percentiles(floor)}   launch to exit: the sandbox's own cost"
        )
        for name, directory, note in bots:
            samples = launch_times(directory, args.runs, socket_path, timer)
            bare = bare_times(directory, args.runs, socket_path, timer)
            print(f"  {name:<14} {percentiles(samples)}   {note}; {shipped_size(directory)}")
            print(f"  {'  bare':<14} {percentiles(bare)}   the same without the sandbox")
    finally:
        server.stop(0)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
