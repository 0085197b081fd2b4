"""Launch-to-first-message and decision latency of the starter kits, sandboxed.

    python3 benchmarks/kits.py [--runs N] [--decisions N] [--only NAME]

Each run launches a kit's bot.toml command through launch_bot (its runtime,
the default limits) against a Python gRPC referee on the sandbox's Unix
socket. The clock runs from just before launch_bot to the moment the bot's
Hello arrives at the servicer (what the referee's hello timeout measures).
Each run also starts the same command as a plain process (no sandbox) to
show the kit's own share, and /bin/true through the sandbox shows its floor.
The referee then sends N ActionRequests one after the other (a real opening
position, the legal actions of it) and times each from the request's send to
the reply's arrival, then MatchOver; the bot must exit 0 by itself.
Figures are medians and 90th percentiles in milliseconds over the runs (the
decision figures over every decision of every run). Build the kits first
(each kit's build.sh); python_random and js_random are shown for comparison.
Targets: launch < 50 ms for Go and Rust, < 400 ms for Java.
"""

from __future__ import annotations

import argparse
import queue
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc

from arena import kahuna
from arena.protocol.convert import actions_to_pb, observation_to_pb
from arena.protocol.gen.kahuna.v1 import referee_pb2, referee_pb2_grpc
from arena.referee.botdir import load_bot
from arena.referee.slots import GENERATED_DIR, PROTO_INSIDE, PYTHON_SDK_DIR, SDK_INSIDE
from arena.sandbox import SANDBOX_SOCKET, SandboxLimits, launch_bot, probe_host

REPO = Path(__file__).resolve().parents[1]
KITS = ("go_random", "rust_random", "java_random", "python_random", "js_random")
TOKEN = "bench-token"
HELLO_TIMEOUT_S = 60


def percentiles(samples_ms: list[float]) -> str:
    ordered = sorted(samples_ms)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):7.1f} ms   p90 {p90:7.1f} ms"


class BenchReferee(referee_pb2_grpc.RefereeServiceServicer):
    """Records when Hello arrives, then times ``decisions`` request/reply pairs."""

    def __init__(self, decisions: int) -> None:
        self.decisions = decisions
        self.hellos: queue.Queue[float] = queue.Queue()
        self.round_trips_ms: list[float] = []
        state = kahuna.new_game(kahuna.deal_from_seed(5))
        legal = sorted(kahuna.legal_actions(state), key=kahuna.Action.text)
        self.observation = observation_to_pb(state, 0, [], 0)
        self.legal = actions_to_pb(legal)

    def Play(
        self, request_iterator: Iterator[referee_pb2.PlayRequest], context: grpc.ServicerContext
    ) -> Iterator[referee_pb2.PlayResponse]:
        hello = next(request_iterator)
        self.hellos.put(time.perf_counter())
        assert hello.hello.token == TOKEN
        yield referee_pb2.PlayResponse(
            welcome=referee_pb2.Welcome(protocol_version=1, match_id="bench", games=1)
        )
        yield referee_pb2.PlayResponse(game_start=referee_pb2.GameStart(game_index=0, seat=0))
        for request_id in range(1, self.decisions + 1):
            request = referee_pb2.ActionRequest(
                request_id=request_id, observation=self.observation,
                legal_actions=self.legal, action_deadline_ms=2000, time_bank_ms=30000,
            )
            sent = time.perf_counter()
            yield referee_pb2.PlayResponse(action_request=request)
            reply = next(request_iterator)
            self.round_trips_ms.append((time.perf_counter() - sent) * 1000)
            assert reply.action_reply.request_id == request_id
        yield referee_pb2.PlayResponse(
            game_over=referee_pb2.GameOver(game_index=0, reason="forfeit", record_json="{}")
        )
        yield referee_pb2.PlayResponse(match_over=referee_pb2.MatchOver(games=1))


def bench_kit(name: str, runs: int, decisions: int, work: Path) -> str:
    directory = REPO / "sample_bots" / name
    bot = load_bot(directory)
    command = list(bot.command)
    if bot.runtime == "node" and not (directory / "node_modules").is_dir():
        return f"{name:14} skipped: run npm ci --prefix sample_bots/{name}"
    if command[0].startswith("./") and not (directory / command[0]).is_file():
        return f"{name:14} skipped: not built (run sample_bots/{name}/build.sh)"
    if name == "java_random" and not (directory / "bot.jar").is_file():
        return f"{name:14} skipped: not built (run sample_bots/{name}/build.sh)"
    referee = BenchReferee(decisions)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    referee_pb2_grpc.add_RefereeServiceServicer_to_server(referee, server)
    socket_path = work / f"{name}.sock"
    server.add_insecure_port(f"unix://{socket_path}")
    server.start()
    launches_ms: list[float] = []
    env = {"KAHUNA_REFEREE": f"unix://{SANDBOX_SOCKET}", "KAHUNA_TOKEN": TOKEN}
    binds: list[tuple[Path, str]] = []
    if bot.runtime == "python":  # as the referee lays a Python bot out (arena.referee.slots)
        binds = [(GENERATED_DIR, PROTO_INSIDE), (PYTHON_SDK_DIR, SDK_INSIDE)]
        env["PYTHONPATH"] = f"{PROTO_INSIDE}:{SDK_INSIDE}"
    bare_ms: list[float] = []
    bare_env = {**env, "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp",
                "KAHUNA_REFEREE": f"unix://{socket_path}"}
    if bot.runtime == "python":
        bare_env["PYTHONPATH"] = f"{GENERATED_DIR}:{PYTHON_SDK_DIR}"
    try:
        for _ in range(runs):
            began = time.perf_counter()
            process = launch_bot(
                bot_dir=bot.directory, command=bot.command, runtime=bot.runtime,
                env=env, socket_path=socket_path, limits=SandboxLimits(),
                extra_ro_binds=binds, stderr_path=work / f"{name}.err",
            )
            try:
                launches_ms.append((referee.hellos.get(timeout=HELLO_TIMEOUT_S) - began) * 1000)
                status = process.wait(20)
            except queue.Empty:
                status = process.poll()
            finally:
                process.kill()
            if status != 0:
                err = (work / f"{name}.err").read_text()[-500:]
                return f"{name:14} no Hello or exit status {status}: {err}"
            began = time.perf_counter()  # the same command as a plain process: the kit's own cost
            with subprocess.Popen(
                [sys.executable if word == "python3" else word for word in bot.command],
                cwd=bot.directory, env=bare_env, stderr=subprocess.DEVNULL,
            ) as plain:
                bare_ms.append((referee.hellos.get(timeout=HELLO_TIMEOUT_S) - began) * 1000)
                plain.wait(20)
    finally:
        server.stop(grace=None)
    return (f"{name:14} launch to Hello, sandboxed {percentiles(launches_ms)}\n"
            f"{'':14} launch to Hello, bare      {percentiles(bare_ms)}\n"
            f"{'':14} decision round trip        {percentiles(referee.round_trips_ms)}")


def sandbox_floor(runs: int, work: Path) -> str:
    """/bin/true through launch_bot until it has exited: the sandbox's own start-up."""
    empty = work / "empty"
    empty.mkdir(mode=0o755, exist_ok=True)
    socket_path = work / "floor.sock"
    socket_path.touch()
    samples: list[float] = []
    for _ in range(runs):
        began = time.perf_counter()
        process = launch_bot(bot_dir=empty, command=["/bin/true"], runtime="native", env={},
                             socket_path=socket_path, limits=SandboxLimits())
        process.wait(20)
        samples.append((time.perf_counter() - began) * 1000)
        process.kill()
    return f"{'/bin/true':14} launch to exit, sandboxed  {percentiles(samples)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--decisions", type=int, default=50)
    parser.add_argument("--only", default="", help="bench only kits whose name contains this")
    args = parser.parse_args(argv)
    report = probe_host()
    if report.missing:
        print(f"sandbox unavailable here: {report.missing}", file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="kkits-"))
    print(f"{args.runs} launches per kit, {args.decisions} decisions per launch")
    print(sandbox_floor(args.runs, work), flush=True)
    for name in KITS:
        if args.only in name:
            print(bench_kit(name, args.runs, args.decisions, work), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
