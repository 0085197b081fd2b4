"""What the driver's check that a Ray head asks for the token costs (docs/DISTRIBUTED.md).

Starts a head (``arena ray-head``, in a network namespace: run as root) and,
ten times, a fresh process in its namespace that imports gRPC and asks the
head for its cluster id without the token (``arena.tournament.execution.ray_auth.
cluster_auth``, as `--ray` does before joining). Prints the medians of the
import and of the call, in ms. The arena's CLI has gRPC imported by then, so
the call is what the check adds to a tournament run's start.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from arena.testing.ray_cluster import NetnsCluster, ip_available

CHILD = r"""
import sys, time
t0 = time.perf_counter(); import grpc; t1 = time.perf_counter()
from arena.tournament.execution.ray_auth import cluster_auth
t2 = time.perf_counter(); found = cluster_auth(sys.argv[1]); t3 = time.perf_counter()
print(f"{(t1 - t0) * 1000:.1f} {(t3 - t2) * 1000:.1f} {found.value}")
"""


def main() -> int:
    problem = ip_available()
    if problem:
        print(f"cannot run: {problem}", file=sys.stderr)
        return 1
    repo = str(Path(__file__).resolve().parents[1])
    with tempfile.TemporaryDirectory(prefix="kray-probe") as root, NetnsCluster(
        Path(root), workers=(), head_cpus=0, env={"PYTHONPATH": repo}, subnet=44
    ) as cluster:
        imports, calls, found = [], [], set()
        for _ in range(10):
            done = subprocess.run(
                cluster.netns_argv(cluster.head, [sys.executable, "-c", CHILD, cluster.address]),
                env=cluster.node_env(cluster.head), capture_output=True, text=True, check=True,
            )  # fmt: skip
            imported, called, answer = done.stdout.split()
            imports.append(float(imported))
            calls.append(float(called))
            found.add(answer)
        print(f"import grpc: median {statistics.median(imports):.1f} ms"
              f" ({min(imports):.1f}-{max(imports):.1f})")  # fmt: skip
        print(f"cluster_auth: median {statistics.median(calls):.1f} ms"
              f" ({min(calls):.1f}-{max(calls):.1f}), the head: {', '.join(sorted(found))}")
        print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
