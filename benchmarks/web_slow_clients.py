"""Page latency while 500 slow clients hold connections to the web server.

    python3 benchmarks/web_slow_clients.py [--slow 500] [--seconds 20] [--byte-every 1.0]

Starts the web server on a free loopback port over a small demo store, then
opens --slow connections (loopback only; at most 2,000) that each send a
request header one byte every --byte-every seconds and never finish it, and
reopens any the server closes. Meanwhile one normal client GETs / and
/api/leaderboard in turn (a new connection each time) and the script prints
the p50/p99/max of those requests, how many failed and how many slow
connections the server cut. Everything stops after --seconds (at most 120).
"""

from __future__ import annotations

import argparse
import math
import selectors
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from arena import store as st
from arena.testing.demo_data import play_demo_tournament
from arena.web.server import create_web_server

MAX_SLOW = 2000
MAX_SECONDS = 120.0


def percentile(ordered: list[float], fraction: float) -> float:
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


class SlowClients:
    """Connections that dribble a header forever, on one thread with a selector."""

    def __init__(self, port: int, count: int, byte_every_s: float) -> None:
        self.port = port
        self.count = count
        self.byte_every_s = byte_every_s
        self.cut = 0
        self.refused = 0
        self.stop = threading.Event()
        self.header = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100_000

    def _open(self, selector: selectors.BaseSelector) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", self.port))
        selector.register(sock, selectors.EVENT_READ, [0])

    def run(self) -> None:
        selector = selectors.DefaultSelector()
        for _ in range(self.count):
            self._open(selector)
        next_byte = time.monotonic()
        while not self.stop.is_set():
            for key, _ in selector.select(timeout=0.05):  # the server answered or closed
                sock: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                if data.startswith(b"HTTP/1.1 503"):
                    self.refused += 1
                selector.unregister(sock)
                sock.close()
                self.cut += 1
                self._open(selector)
            if time.monotonic() >= next_byte:
                next_byte += self.byte_every_s
                for key in list(selector.get_map().values()):
                    sock = key.fileobj  # type: ignore[assignment]
                    sent = key.data
                    try:
                        sock.send(self.header[sent[0] : sent[0] + 1])
                        sent[0] += 1
                    except OSError:
                        pass  # not connected yet, or closed: the selector reports it
        for key in list(selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        selector.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--byte-every", type=float, default=1.0)
    args = parser.parse_args(argv)
    slow = min(max(args.slow, 0), MAX_SLOW)
    seconds = min(max(args.seconds, 1.0), MAX_SECONDS)
    with tempfile.TemporaryDirectory(prefix="arena-web-slow-") as tmp:
        store = st.Store.open(Path(tmp) / "data")
        play_demo_tournament(store, Path(tmp) / "bots", name="slow-clients", bots=("ann", "bob"))
        server, port = create_web_server(store, "127.0.0.1", 0)
        clients = SlowClients(port, slow, args.byte_every)
        thread = threading.Thread(target=clients.run, daemon=True)
        try:
            thread.start()
            time.sleep(min(2.0, seconds / 4))  # let the slow clients connect first
            latencies: list[float] = []
            failures: list[str] = []
            stop_at = time.monotonic() + seconds
            paths = ("/", "/api/leaderboard")
            while time.monotonic() < stop_at:
                url = f"http://127.0.0.1:{port}{paths[len(latencies) % 2]}"
                started = time.perf_counter()
                try:
                    with urllib.request.urlopen(url, timeout=10) as response:
                        response.read()
                    latencies.append((time.perf_counter() - started) * 1000)
                except (urllib.error.URLError, OSError) as error:
                    failures.append(f"{type(error).__name__}: {error}")
                time.sleep(0.02)
        finally:
            clients.stop.set()
            thread.join(timeout=10)
            server.stop()
            store.close()
    ordered = sorted(latencies)
    print(f"{slow} slow clients (a header byte every {args.byte_every:g} s) for {seconds:g} s")
    if ordered:
        print(
            f"normal requests: n={len(ordered)}  p50 {statistics.median(ordered):.1f} ms"
            f"  p99 {percentile(ordered, 0.99):.1f} ms  max {ordered[-1]:.1f} ms"
        )
    print(f"failed requests: {len(failures)}" + (f" (first: {failures[0]})" if failures else ""))
    print(f"slow connections the server closed: {clients.cut} (of which 503: {clients.refused})")
    return 0 if ordered and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
