"""Admin call latency while 1,000 idle or slow streams are open on `arena serve`.

    python3 benchmarks/api_streams.py [--tokens 16] [--idle 800] [--silent 200] [--seconds 20]

Starts a real `arena serve` (port 0, a temporary data directory, loopback) in
a process of its own, then opens, from one asyncio client:

- --idle WaitForSeats streams spread over --tokens user tokens (each token
  registers a remote bot of its own and waits for its seats: no seat ever
  comes, so the stream stays open and silent);
- --silent Play streams with no token that never say Hello (each one the
  server ends is opened again at once).

Meanwhile the admin calls ListLiveGames and ListBots in turn, one at a time
on a connection of its own, each with a --call-timeout deadline, and the
script prints the p50/p99/max of those calls (a call that timed out counts
as its deadline), how many failed, how many streams the server refused
(RESOURCE_EXHAUSTED) or ended. Bounded: at most 2,000 streams and 120 s.
Run it with PYTHONPATH pointing at another checkout to measure that one.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import grpc
import grpc.aio
from _arena_serve import start_server

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc

MAX_STREAMS = 2000
MAX_SECONDS = 120.0
PLAY_METHOD = "/kahuna.v1.RefereeService/Play"


def percentile(ordered: list[float], fraction: float) -> float:
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


class Streams:
    """The idle and silent streams, on one event loop in a thread of their own."""

    def __init__(self, target: str, tokens: list[str], idle: int, silent: int) -> None:
        self.target = target
        self.tokens = tokens
        self.idle = idle
        self.silent = silent
        self.ended: Counter[str] = Counter()
        self.opened = 0
        self.stop = threading.Event()
        self.ready = threading.Event()

    def run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        # several connections, as several clients would have (HTTP/2 caps streams per connection)
        channels = [grpc.aio.insecure_channel(self.target) for _ in range(8)]
        tasks = []
        for i in range(self.idle):
            token = self.tokens[i % len(self.tokens)]
            channel = channels[i % len(channels)]
            tasks.append(
                asyncio.create_task(self._wait_for_seats(channel, token, i % len(self.tokens)))
            )
        for i in range(self.silent):
            tasks.append(asyncio.create_task(self._silent_play(channels[i % len(channels)])))
        await asyncio.sleep(2.0)  # let them all reach the server
        self.ready.set()
        while not self.stop.is_set():
            await asyncio.sleep(0.1)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for channel in channels:
            await channel.close(None)

    async def _wait_for_seats(self, channel: grpc.aio.Channel, token: str, n: int) -> None:
        stub = pb_grpc.ArenaServiceStub(channel)
        while not self.stop.is_set():
            self.opened += 1
            call = stub.WaitForSeats(
                pb.WaitForSeatsRequest(bot=f"remote_{n}"), metadata=_auth(token)
            )
            try:
                async for _ in call:
                    pass
                self.ended["wait_for_seats: ended"] += 1
            except grpc.aio.AioRpcError as error:
                self.ended[f"wait_for_seats: {error.code().name}"] += 1
                if error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
                    return  # refused: do not hammer the server with it again
            await asyncio.sleep(0.05)

    async def _silent_play(self, channel: grpc.aio.Channel) -> None:
        play = channel.stream_stream(
            PLAY_METHOD, request_serializer=lambda b: b, response_deserializer=lambda b: b
        )
        while not self.stop.is_set():
            self.opened += 1
            call = play()  # writes nothing, ever
            try:
                while await call.read() is not grpc.aio.EOF:
                    pass
                self.ended["play: ended (goodbye)"] += 1
            except grpc.aio.AioRpcError as error:
                self.ended[f"play: {error.code().name}"] += 1
                if error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
                    await asyncio.sleep(1.0)
            await asyncio.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--tokens", type=int, default=16, help="user tokens holding the idle streams"
    )
    parser.add_argument("--idle", type=int, default=800, help="WaitForSeats streams")
    parser.add_argument("--silent", type=int, default=200, help="Play streams that never say Hello")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to measure")
    parser.add_argument(
        "--call-timeout", type=float, default=5.0, help="deadline of each admin call"
    )
    args = parser.parse_args()
    if not 0 <= args.idle + args.silent <= MAX_STREAMS:
        parser.error(f"--idle + --silent must be at most {MAX_STREAMS}")
    if not 0 < args.seconds <= MAX_SECONDS or args.tokens < 1:
        parser.error(f"--seconds must be in (0, {MAX_SECONDS:g}] and --tokens at least 1")
    with tempfile.TemporaryDirectory(prefix="api-streams-") as tmp:
        server, port = start_server(Path(tmp) / "data")
        target = f"127.0.0.1:{port}"
        try:
            admin = (Path(tmp) / "data" / "admin.token").read_text().strip()
            channel = grpc.insecure_channel(target)
            stub = pb_grpc.ArenaServiceStub(channel)
            tokens = []
            for n in range(args.tokens):
                token = stub.CreateUserToken(
                    pb.CreateUserTokenRequest(user=f"user{n}"), metadata=_auth(admin)
                ).token
                stub.RegisterRemoteBot(
                    pb.RegisterRemoteBotRequest(name=f"remote_{n}"), metadata=_auth(token)
                )
                tokens.append(token)
            streams = Streams(target, tokens, args.idle, args.silent)
            thread = threading.Thread(target=streams.run, daemon=True)
            thread.start()
            streams.ready.wait(30)
            latencies: list[float] = []
            failed: Counter[str] = Counter()
            calls = (
                lambda: stub.ListLiveGames(
                    pb.ListLiveGamesRequest(), metadata=_auth(admin), timeout=args.call_timeout
                ),
                lambda: stub.ListBots(
                    pb.ListBotsRequest(), metadata=_auth(admin), timeout=args.call_timeout
                ),
            )
            end = time.monotonic() + args.seconds
            n = 0
            while time.monotonic() < end:
                started = time.perf_counter()
                try:
                    calls[n % 2]()
                except grpc.RpcError as error:
                    failed[error.code().name if isinstance(error, grpc.Call) else "?"] += 1
                latencies.append((time.perf_counter() - started) * 1000)
                n += 1
                time.sleep(0.02)
            streams.stop.set()
            thread.join(30)
            channel.close()
        finally:
            server.terminate()
            server.wait(30)
    ordered = sorted(latencies)
    print(f"server: arena from PYTHONPATH={os.environ.get('PYTHONPATH', '')!r}")
    print(f"streams: {args.idle} WaitForSeats over {args.tokens} tokens, {args.silent} silent Play")
    print(f"streams opened (reopened when ended): {streams.opened}")
    for what, count in sorted(streams.ended.items()):
        print(f"  {what}: {count}")
    print(
        f"admin calls: {len(ordered)}, failed {sum(failed.values())} {dict(failed)};"
        f" p50 {statistics.median(ordered):.1f} ms, p99 {percentile(ordered, 0.99):.1f} ms,"
        f" max {ordered[-1]:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
