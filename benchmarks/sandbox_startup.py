"""Time from launch to a bot's first message, bare and through the sandbox.

    python3 benchmarks/sandbox_startup.py [--runs N]

Each case starts a program that connects to a Unix socket the benchmark
listens on and sends one message; the clock runs from just before the start
call to the moment the message arrives. Cases:

  bare-true / sandbox-true   /bin/true until it has exited: the fixed cost
  bare-python-grpc      python3 -c 'import grpc; ...' as a plain subprocess
  sandbox-python-grpc   the same Python program through launch_bot
  bare-grpc-call / sandbox-grpc-call   a Python bot making a real gRPC call
                        (unary, over the Unix socket) to a grpc server
  bare-node / sandbox-node   node connecting with net.connect

Also prints launch_bot's own cost (until it returns). Figures are medians and
90th percentiles in milliseconds; other work on the machine makes them noisy.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent import futures
from pathlib import Path

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

import grpc

from arena.sandbox import SANDBOX_SOCKET, SandboxLimits, launch_bot, probe_host

PY_SOCKET = (
    "import grpc, socket, sys\n"
    "s = socket.socket(socket.AF_UNIX)\n"
    "s.connect(sys.argv[1])\n"
    "s.sendall(b'hello')\n"
)
PY_GRPC = (
    "import grpc, sys\n"
    "channel = grpc.insecure_channel('unix://' + sys.argv[1])\n"
    "channel.unary_unary('/bench.Bench/Hello')(b'hello', timeout=10)\n"
)
# Bare runs get an environment as small as the sandbox's: this machine's
# NODE_EXTRA_CA_CERTS alone makes node parse a CA bundle and start 30 ms slower.
CLEAN_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp", "LANG": "C.UTF-8"}
NODE_SOCKET = "require('net').connect(process.argv[1], function () { this.end('hello'); });"


def percentiles(samples_ms: list[float]) -> str:
    ordered = sorted(samples_ms)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):7.1f} ms   p90 {p90:7.1f} ms"


class Listener:
    """A Unix socket that records when each connection's first bytes arrive."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(str(path))
        self.server.listen(16)

    def first_message_at(self, timeout_s: float = 10.0) -> float:
        self.server.settimeout(timeout_s)
        connection, _ = self.server.accept()
        with connection:
            connection.recv(16)
            return time.perf_counter()


class GrpcTarget:
    """A grpc server with one raw-bytes unary method; records when a call arrives."""

    def __init__(self, path: Path) -> None:
        self.arrivals: list[float] = []
        self.arrived = threading.Event()

        def hello(request: bytes, context: grpc.ServicerContext) -> bytes:
            self.arrivals.append(time.perf_counter())
            self.arrived.set()
            return request

        handler = grpc.method_handlers_generic_handler(
            "bench.Bench", {"Hello": grpc.unary_unary_rpc_method_handler(hello)}
        )
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        self.server.add_generic_rpc_handlers((handler,))
        self.server.add_insecure_port(f"unix://{path}")
        self.server.start()

    def first_call_at(self, timeout_s: float = 10.0) -> float:
        if not self.arrived.wait(timeout_s):
            raise TimeoutError("no gRPC call arrived")
        self.arrived.clear()
        return self.arrivals[-1]


def run_case(runs: int, start: Callable[[], Callable[[], float]]) -> list[float]:
    samples: list[float] = []
    for _ in range(runs):
        began = time.perf_counter()
        finish = start()
        samples.append((finish() - began) * 1000)
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--cpu-cores", type=float, default=SandboxLimits().cpu_cores,
                        help="the bots' CPU quota (default: SandboxLimits' default)")
    parser.add_argument("--only", default="", help="run only cases whose name contains this")
    args = parser.parse_args(argv)
    report = probe_host()
    if report.missing:
        print(f"sandbox unavailable here: {report.missing}", file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="kbench-"))
    bot_dir = work / "bot"
    bot_dir.mkdir(mode=0o755)
    listener = Listener(work / "l.sock")
    target = GrpcTarget(work / "g.sock")
    limits = SandboxLimits(cpu_cores=args.cpu_cores)
    launch_costs_ms: list[float] = []

    def sandboxed(command: list[str], runtime: str, sock: Path,
                  until: Callable[[], float] | None) -> Callable[[], float]:
        began = time.perf_counter()
        bot = launch_bot(bot_dir=bot_dir, command=command, runtime=runtime, env={},
                         socket_path=sock, limits=limits)
        launch_costs_ms.append((time.perf_counter() - began) * 1000)

        def finish() -> float:
            if until is None:  # no message: until the process has exited
                bot.wait(10)
                arrived = time.perf_counter()
            else:
                arrived = until()
                bot.wait(10)
            bot.kill()
            return arrived
        return finish

    def bare(command: list[str], until: Callable[[], float] | None) -> Callable[[], float]:
        proc = subprocess.Popen(command, env=CLEAN_ENV)  # as clean as the sandbox's

        def finish() -> float:
            if until is None:  # no message: until the process has exited
                proc.wait(10)
                return time.perf_counter()
            arrived = until()
            proc.wait(10)
            return arrived
        return finish

    sock = str(listener.path)
    cases: list[tuple[str, Callable[[], Callable[[], float]]]] = [
        ("bare-true", lambda: bare(["/bin/true"], None)),
        ("sandbox-true", lambda: sandboxed(["/bin/true"], "native", listener.path, None)),
        ("bare-python-grpc", lambda: bare([sys.executable, "-c", PY_SOCKET, sock],
                                          listener.first_message_at)),
        ("sandbox-python-grpc", lambda: sandboxed(["python3", "-c", PY_SOCKET, SANDBOX_SOCKET],
                                                  "python", listener.path,
                                                  listener.first_message_at)),
        ("bare-grpc-call", lambda: bare([sys.executable, "-c", PY_GRPC, str(work / "g.sock")],
                                        target.first_call_at)),
        ("sandbox-grpc-call", lambda: sandboxed(["python3", "-c", PY_GRPC, SANDBOX_SOCKET],
                                                "python", work / "g.sock",
                                                target.first_call_at)),
        ("bare-node", lambda: bare(["node", "-e", NODE_SOCKET, sock], listener.first_message_at)),
        ("sandbox-node", lambda: sandboxed(["node", "-e", NODE_SOCKET, SANDBOX_SOCKET],
                                           "node", listener.path, listener.first_message_at)),
    ]
    print(f"launch to first message, {args.runs} runs each (noisy if the machine is busy)")
    for name, start in cases:
        if args.only not in name:
            continue
        launch_costs_ms.clear()
        samples = run_case(args.runs, start)
        line = f"  {name:<22} {percentiles(samples)}"
        if launch_costs_ms:
            line += f"   (launch_bot returns after {statistics.median(launch_costs_ms):.1f} ms)"
        print(line)
    target.server.stop(0)
    listener.server.close()
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
