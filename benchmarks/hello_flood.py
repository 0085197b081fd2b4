"""`arena serve`'s memory while strangers send large first messages on Play streams.

    python3 benchmarks/hello_flood.py [--streams 256] [--connections 8] [--size 8388608]
                                      [--seconds 10] [--hold]

Starts a real `arena serve` (port 0, a temporary data directory, loopback) in a
process of its own, then opens --streams raw HTTP/2 streams (the h2 library, no
gRPC client) to ``kahuna.v1.RefereeService/Play`` over --connections
connections. No stream says Hello: each sends a first message whose gRPC
length prefix says --size bytes, and as much of it as the server's flow-control
windows let through (--hold: all but its last byte, so the server waits for the
rest until its Hello deadline; without it the whole message). A stream the
server ends is opened again at once, for --seconds. Meanwhile the server's
resident memory is sampled every 50 ms; the script prints its RSS before the
flood, its peak (the kernel's VmHWM) and the bytes the server let in, and how
the streams ended. Run it with --size 100 as the control; --path sends the
same to another method (a unary one of the arena API, say). Bounded: at most
2,048 streams, 64 MiB per message and 120 s.
"""

from __future__ import annotations

import argparse
import selectors
import socket
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import h2.exceptions
from _arena_serve import start_server

MAX_STREAMS = 2048
MAX_SIZE = 64 * 1024 * 1024
MAX_SECONDS = 120.0
PLAY_PATH = "/kahuna.v1.RefereeService/Play"


def memory_kib(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


class Connection:
    """One raw HTTP/2 connection and its streams' first messages."""

    def __init__(
        self, port: int, streams: int, size: int, hold: bool, ended: Counter[str], path: str
    ) -> None:
        self.path = path
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setblocking(False)
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.h2 = h2.connection.H2Connection(config)
        self.h2.initiate_connection()
        self.h2.increment_flow_control_window(2**30)  # read the server's answers freely
        self.size = size
        self.to_send = size + 5 - (1 if hold else 0)
        self.sent: dict[int, int] = {}
        self.ended = ended
        self.wanted = streams
        self.out = bytearray(self.h2.data_to_send())
        self.alive = True
        self.let_in = 0

    def open_streams(self) -> None:
        while self.alive and len(self.sent) < self.wanted:
            try:
                stream = self.h2.get_next_available_stream_id()
                self.h2.send_headers(stream, [
                    (":method", "POST"), (":scheme", "http"), (":path", self.path),
                    (":authority", "127.0.0.1"), ("content-type", "application/grpc"),
                    ("te", "trailers"),
                ])  # fmt: skip
            except h2.exceptions.H2Error:
                return
            self.sent[stream] = 0
        self.push()

    def push(self) -> None:
        for stream, done in list(self.sent.items()):
            while done < self.to_send:
                window = min(
                    self.h2.local_flow_control_window(stream), self.h2.max_outbound_frame_size
                )
                if window <= 0:
                    break
                chunk = min(window, self.to_send - done)
                if done == 0:
                    prefix = b"\x00" + self.size.to_bytes(4, "big")
                    body = prefix + b"\x0a" * (chunk - 5) if chunk >= 5 else prefix[:chunk]
                else:
                    body = b"\x0a" * chunk
                self.h2.send_data(stream, body)
                done += chunk
                self.let_in += chunk
            self.sent[stream] = done
        self.out += self.h2.data_to_send()

    def on_readable(self) -> None:
        try:
            data = self.sock.recv(1 << 20)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.alive = False
            self.ended["connection closed"] += 1
            return
        for event in self.h2.receive_data(data):
            if isinstance(event, h2.events.StreamEnded | h2.events.StreamReset):
                if event.stream_id in self.sent:
                    del self.sent[event.stream_id]
                    kind = "reset" if isinstance(event, h2.events.StreamReset) else "ended"
                    self.ended[f"stream {kind}"] += 1
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.alive = False
                self.ended["connection terminated (GOAWAY)"] += 1
            elif isinstance(event, h2.events.DataReceived):
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        self.open_streams()

    def flush(self) -> None:
        while self.out:
            try:
                sent = self.sock.send(self.out)
            except BlockingIOError:
                return
            except OSError:
                self.alive = False
                return
            del self.out[:sent]


def flood(port: int, pid: int, args: argparse.Namespace) -> None:
    ended: Counter[str] = Counter()
    per = [args.streams // args.connections] * args.connections
    for i in range(args.streams % args.connections):
        per[i] += 1
    connections = [Connection(port, n, args.size, args.hold, ended, args.path) for n in per]
    selector = selectors.DefaultSelector()
    for connection in connections:
        connection.open_streams()
        selector.register(connection.sock, selectors.EVENT_READ, connection)
    end = time.monotonic() + args.seconds
    peak_rss = 0
    next_sample = 0.0
    while time.monotonic() < end:
        for key, _ in selector.select(0.01):
            key.data.on_readable()
        for connection in connections:
            connection.flush()
        now = time.monotonic()
        if now >= next_sample:
            peak_rss = max(peak_rss, memory_kib(pid)["VmRSS"])
            next_sample = now + 0.05
    memory = memory_kib(pid)
    let_in = sum(c.let_in for c in connections)
    print(f"peak RSS sampled: {peak_rss / 1024:.0f} MiB; VmHWM: {memory['VmHWM'] / 1024:.0f} MiB")
    print(f"bytes the server let in: {let_in / 2**20:.1f} MiB over {args.seconds:g} s")
    print("streams:", dict(ended) or "none ended")
    for connection in connections:
        connection.sock.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", type=int, default=256, help="streams open at once")
    parser.add_argument("--connections", type=int, default=8, help="connections they share")
    parser.add_argument("--size", type=int, default=8 * 1024 * 1024, help="first message bytes")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to flood")
    parser.add_argument("--path", default=PLAY_PATH, help="the method's path")
    parser.add_argument("--hold", action="store_true", help="keep back each message's last byte")
    args = parser.parse_args()
    if not 1 <= args.streams <= MAX_STREAMS or not 1 <= args.connections <= args.streams:
        parser.error(f"--streams must be in 1..{MAX_STREAMS}, --connections in 1..--streams")
    if not 1 <= args.size <= MAX_SIZE or not 0 < args.seconds <= MAX_SECONDS:
        parser.error(f"--size must be in 1..{MAX_SIZE}, --seconds in (0, {MAX_SECONDS:g}]")
    with tempfile.TemporaryDirectory(prefix="hello-flood-") as tmp:
        server, port = start_server(Path(tmp) / "data")
        try:
            time.sleep(1.0)  # settle: the idle figure below is the server at rest
            idle = memory_kib(server.pid)
            print(f"server at rest: RSS {idle['VmRSS'] / 1024:.0f} MiB")
            flood(port, server.pid, args)
        finally:
            server.terminate()
            server.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
