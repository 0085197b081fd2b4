"""What one keep-alive request to /api/live costs the web server: wall time a request
for a client asking one after another on one connection, and the server's CPU a request.

    python3 benchmarks/web_keepalive.py [--requests 3000] [--baseline-tree DIR]

The server runs in this process over an empty store (with the live answer
interval ``arena serve`` uses, where the code has one); the client is a separate
process. With ``--baseline-tree DIR`` the figures of the code at DIR (run with
it on ``PYTHONPATH``) are printed first, then this checkout's.
"""

from __future__ import annotations

import argparse
import inspect
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
CLIENT = """
import socket, sys
port, requests = int(sys.argv[1]), int(sys.argv[2])
connection = socket.create_connection(("127.0.0.1", port))
answers = connection.makefile("rb")
for _ in range(requests):
    connection.sendall(b"GET /api/live HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
    length = 0
    while (line := answers.readline()) != b"\\r\\n":
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    answers.read(length)
"""


def measure(requests: int) -> None:
    from arena import store as st
    from arena.web import create_web_server

    options: dict[str, float] = {}
    if "live_answer_s" in inspect.signature(create_web_server).parameters:
        from arena.web.live_answers import LIVE_ANSWER_S

        options["live_answer_s"] = LIVE_ANSWER_S
    with tempfile.TemporaryDirectory(prefix="keepalive-") as work:
        store = st.Store.open(Path(work) / "data")
        server, port = create_web_server(store, "127.0.0.1", 0, **options)  # type: ignore[arg-type]
        before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        subprocess.run([sys.executable, "-c", CLIENT, str(port), str(requests)], check=True)
        after, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - started
        server.stop()
        store.close()
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    one, five, _ = os.getloadavg()
    print(f"load {one:.2f} {five:.2f}: {requests} keep-alive GET /api/live: wall"
          f" {wall / requests * 1e6:.0f} us, server CPU {cpu / requests * 1e6:.0f} us"
          " a request")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--baseline-tree", type=Path, metavar="DIR")
    args = parser.parse_args(argv)
    if args.baseline_tree is None:
        measure(args.requests)
        return 0
    for label, tree in (("before", args.baseline_tree.resolve()), ("after", CHECKOUT)):
        print(f"{label} ({tree}): ", end="", flush=True)
        env = {**os.environ, "PYTHONPATH": str(tree)}
        subprocess.run([sys.executable, __file__, "--requests", str(args.requests)],
                       cwd=tree, env=env, check=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
