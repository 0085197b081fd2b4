"""While one user floods every submission path, do a remote bot's Hello and the admin's calls
still answer? Target: p99 under 100 ms on 2 cores.

    python3 benchmarks/fair_share.py [--seconds 30] [--rounds 2] [--baseline-tree DIR]
                                     [--idle-control]

Each run starts a real `arena serve` (its own data directory, loopback, port 0,
web pages too, sandboxed smoke checks) from a tree of code, and a flooder
process holding ONE user token: ``--grpc-submitters`` threads calling SubmitBot
in a loop with a bot that never says Hello (each check ends only when the
conformance check gives up on it), ``--web-submitters`` threads POSTing the same
to /api/submit, and ``--registrars`` threads calling RegisterRemoteBot with new
names. Meanwhile this process measures, every 100 ms each: the admin's ListBots
and GetLeaderboard (round trip), and a remote bot's Hello on the Play port (from
opening the stream to the gateway's answer: a Goodbye for an unknown seat token,
the same path a real seat takes up to the store). It prints count, p50, p99 and
max in ms per call, what the flooder got (answers by status), and the load.

``--baseline-tree DIR``: the same runs against another checkout (e.g. ``git archive
main`` unpacked), alternating between that code (``before``) and this one (``after``),
``--rounds`` each, in one session: the machine is shared and its load drifts.
``--idle-control`` adds a run of this checkout with no flood at all: what the
probes take at the machine's load alone.
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

import grpc

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.protocol.gen.kahuna.v1 import referee_pb2

CHECKOUT = Path(__file__).resolve().parents[1]
PLAY = "/kahuna.v1.RefereeService/Play"
TARGET_MS = 100.0
PROBE_EVERY_S = 0.1


def silent_bot(serial: int) -> bytes:
    """A bot that starts and never says Hello: its check lasts until the check gives up."""
    name = "flood"
    files = {
        f"{name}/bot.toml": (
            f'name = "{name}"\nruntime = "python"\ncommand = ["python3", "bot.py"]\n'
        ),
        f"{name}/bot.py": f"import time  # {serial}\ntime.sleep(3600)\n",
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def flood(target: str, web: str, token: str, grpc_n: int, web_n: int, reg_n: int,
          stop_at: float, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]  # fmt: skip
    """The flooder process: every submission path of one user, until ``stop_at``."""
    counts: collections.Counter[str] = collections.Counter()
    lock = threading.Lock()
    channel = grpc.insecure_channel(target)
    stub = pb_grpc.ArenaServiceStub(channel)
    auth = (("authorization", f"Bearer {token}"),)
    serial = iter(range(10**9))

    def note(what: str) -> None:
        with lock:
            counts[what] += 1

    def by_grpc() -> None:
        while time.time() < stop_at:
            try:
                stub.SubmitBot(pb.SubmitBotRequest(archive=silent_bot(next(serial))),
                               metadata=auth, timeout=max(1.0, stop_at - time.time()))  # fmt: skip
                note("SubmitBot OK")
            except grpc.RpcError as error:
                note(f"SubmitBot {error.code().name}")
                if error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
                    time.sleep(0.05)  # a flood, not a spin

    def by_web() -> None:
        while time.time() < stop_at:
            request = urllib.request.Request(
                f"{web}/api/submit", data=silent_bot(next(serial)), method="POST",
                headers={"Content-Type": "application/octet-stream",
                         "Authorization": f"Bearer {token}"},
            )  # fmt: skip
            try:
                with urllib.request.urlopen(request, timeout=max(1.0, stop_at - time.time())):
                    note("web 200")
            except urllib.error.HTTPError as error:
                note(f"web {error.code}")
                if error.code == 429:
                    time.sleep(0.05)
            except OSError as error:
                note(f"web {type(error).__name__}")

    def by_registering() -> None:
        while time.time() < stop_at:
            try:
                stub.RegisterRemoteBot(pb.RegisterRemoteBotRequest(name=f"r{next(serial)}"),
                                       metadata=auth, timeout=10)  # fmt: skip
                note("RegisterRemoteBot OK")
            except grpc.RpcError as error:
                note(f"RegisterRemoteBot {error.code().name}")
                if error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
                    time.sleep(0.05)

    threads = [threading.Thread(target=by_grpc, daemon=True) for _ in range(grpc_n)]
    threads += [threading.Thread(target=by_web, daemon=True) for _ in range(web_n)]
    threads += [threading.Thread(target=by_registering, daemon=True) for _ in range(reg_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.1, stop_at + 5 - time.time()))
    out.put(dict(counts))


def probe(name: str, call, stop_at: float, timings: dict[str, list[float]],  # type: ignore[no-untyped-def]
          errors: collections.Counter[str]) -> None:  # fmt: skip
    while time.time() < stop_at:
        started = time.perf_counter()
        try:
            call()
            timings[name].append((time.perf_counter() - started) * 1000)
        except Exception as error:  # a probe counts every failure, by kind
            errors[f"{name}: {type(error).__name__} {getattr(error, 'code', lambda: '')()}"] += 1
        time.sleep(max(0.0, PROBE_EVERY_S - (time.perf_counter() - started)))


def hello_call(target: str) -> None:
    """Open a Play stream, say Hello with an unknown seat token, wait for the Goodbye."""
    with grpc.insecure_channel(target) as channel:
        play = channel.stream_stream(
            PLAY, request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=referee_pb2.PlayResponse.FromString,
        )  # fmt: skip
        hello = referee_pb2.PlayRequest(hello=referee_pb2.Hello(token="bench-unknown-seat"))
        answer = next(iter(play(iter([hello]), timeout=30)))
        assert answer.WhichOneof("kind") == "goodbye", answer


def start_server(tree: Path, data: Path) -> tuple[subprocess.Popen[str], str, str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    token = subprocess.run(
        [sys.executable, "-m", "arena", "token", "create", "mallory", "--data-dir", str(data)],
        env=env, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    server = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--web-port", "0",
         "--no-cpu-pinning", "--data-dir", str(data)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tree,
    )  # fmt: skip
    assert server.stdout is not None
    grpc_port = web_port = ""
    for line in server.stdout:
        if found := re.search(r"arena API .* listening on 127\.0\.0\.1:(\d+)", line):
            grpc_port = found.group(1)
        if found := re.search(r"web pages on (http://127\.0\.0\.1:\d+)/", line):
            web_port = found.group(1)
        if line.startswith("admin token:"):
            break
    threading.Thread(target=server.stdout.read, daemon=True).start()  # keep the pipe drained
    return server, f"127.0.0.1:{grpc_port}", web_port, token


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(tree: Path, seconds: float, grpc_n: int, web_n: int, reg_n: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="fair-share-") as work:
        data = Path(work) / "data"
        server, target, web, token = start_server(tree, data)
        try:
            admin = (data / "admin.token").read_text().strip()
            channel = grpc.insecure_channel(target)
            stub = pb_grpc.ArenaServiceStub(channel)
            auth = (("authorization", f"Bearer {admin}"),)
            stub.ListBots(pb.ListBotsRequest(), metadata=auth, timeout=30)  # up and answering
            stop_at = time.time() + seconds + 3
            out: multiprocessing.Queue[dict[str, int]] = multiprocessing.Queue()
            flooder = multiprocessing.Process(
                target=flood, args=(target, web, token, grpc_n, web_n, reg_n, stop_at, out)
            )
            flooder.start()  # (with no threads: the idle control, its probes alone)
            time.sleep(3)  # the flood builds up
            timings: dict[str, list[float]] = collections.defaultdict(list)
            errors: collections.Counter[str] = collections.Counter()
            calls = {
                "admin ListBots": lambda: stub.ListBots(pb.ListBotsRequest(), metadata=auth,
                                                        timeout=30),
                "admin GetLeaderboard": lambda: stub.GetLeaderboard(
                    pb.GetLeaderboardRequest(), metadata=auth, timeout=30),
                "remote bot Hello": lambda: hello_call(target),
            }  # fmt: skip
            probes = [
                threading.Thread(target=probe, args=(name, call, stop_at, timings, errors))
                for name, call in calls.items()
            ]
            for thread in probes:
                thread.start()
            for thread in probes:
                thread.join()
            flooded = out.get(timeout=120)
            flooder.join(30)
            channel.close()
        finally:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        stored = sum(f.stat().st_size for f in data.rglob("*") if f.is_file())
    return {"timings": dict(timings), "errors": dict(errors), "flood": flooded,
            "stored_bytes": stored}  # fmt: skip


def report(label: str, result: dict[str, object]) -> None:
    timings = result["timings"]
    assert isinstance(timings, dict)
    for name, values in sorted(timings.items()):
        if not values:
            print(f"  {label:<7} {name:<22} no answers")
            continue
        p99 = quantile(values, 0.99)
        verdict = "ok" if p99 < TARGET_MS else f"over {TARGET_MS:.0f} ms"
        print(f"  {label:<7} {name:<22} n={len(values):4d}  p50 {statistics.median(values):7.1f}"
              f"  p99 {p99:7.1f}  max {max(values):7.1f} ms  ({verdict})")  # fmt: skip
    print(f"  {label:<7} probe failures: {result['errors'] or 'none'}")
    print(f"  {label:<7} flood answers: {json.dumps(result['flood'], sort_keys=True)}")
    print(f"  {label:<7} data directory afterwards: {result['stored_bytes'] / 2**20:.1f} MiB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="measured per run")
    parser.add_argument("--rounds", type=int, default=2, help="runs per tree, alternating")
    parser.add_argument("--grpc-submitters", type=int, default=72)
    parser.add_argument("--web-submitters", type=int, default=120)
    parser.add_argument("--registrars", type=int, default=8)
    parser.add_argument("--idle-control", action="store_true",
                        help="also run this checkout with no flood: the probes' floor at this load")
    parser.add_argument("--baseline-tree", type=Path, default=None,
                        help="a checkout whose code runs `before` (e.g. main)")  # fmt: skip
    args = parser.parse_args(argv)
    trees = [("after", CHECKOUT, True)]
    if args.baseline_tree is not None:
        trees.insert(0, ("before", args.baseline_tree.resolve(), True))
    if args.idle_control:
        trees.append(("idle", CHECKOUT, False))
    print(f"{os.cpu_count()} CPUs; flood of one user: {args.grpc_submitters} SubmitBot,"
          f" {args.web_submitters} POST /api/submit, {args.registrars} RegisterRemoteBot"
          f" threads; {args.seconds:g} s measured per run")  # fmt: skip
    for round_index in range(args.rounds):
        order = trees if round_index % 2 == 0 else trees[::-1]
        for label, tree, flooded in order:
            one, five, _ = os.getloadavg()
            print(f"round {round_index + 1}, {label} ({tree}), load {one:.2f} {five:.2f}:",
                  flush=True)  # fmt: skip
            counts = (args.grpc_submitters, args.web_submitters, args.registrars)
            report(label, run(tree, args.seconds, *(counts if flooded else (0, 0, 0))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
