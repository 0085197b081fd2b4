"""What a namespaced Ray cluster like the tests' shared one costs to start and to keep idle.
Run (as root): python3 benchmarks/ray_idle.py ['{"RAY_name": "value", ...}']

A head and two match nodes of two slots (tests/tournament/shared.py's shape), started
with ``arena.testing.ray_cluster``, every process counted by a cgroup v2 group this
process enters first: the CPU seconds of the start, of the next 10 s, and per second
over the 30 idle seconds after. The optional JSON adds environment variables to every
node's Ray processes (Ray's ``RAY_<setting>`` overrides). Prints one JSON line.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.sandbox.cgroups import read_keyed  # noqa: E402
from arena.testing.ray_cluster import NetnsCluster  # noqa: E402
from benchmarks.suite_cpu import members, unified_root  # noqa: E402


def main() -> None:
    extra: dict[str, str] = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    hierarchy = unified_root(Path("/proc/mounts").read_text())
    group = hierarchy / f"suite35-ray-idle-{os.getpid()}"
    group.mkdir()
    (group / "cgroup.procs").write_text(str(os.getpid()))
    root = Path(tempfile.mkdtemp(prefix="kray-idle-"))
    cluster = NetnsCluster(
        root, workers=({"kahuna_sandbox": 2.0}, {"kahuna_sandbox": 2.0}), worker_cpus=2,
        head_cpus=2, env={"PYTHONPATH": str(ROOT), **extra},
    )  # fmt: skip

    def used() -> float:
        return read_keyed(group / "cpu.stat")["usage_usec"] / 1e6

    try:
        before, started = used(), time.monotonic()
        cluster.__enter__()
        up, wall = used(), time.monotonic() - started
        time.sleep(10)
        settled = used()
        time.sleep(30)
        idle = (used() - settled) / 30
        print(json.dumps({"env": extra, "start_cpu_s": round(up - before, 2),
                          "start_wall_s": round(wall, 1), "next_10_s_cpu_s":
                          round(settled - up, 2), "idle_cpu_s_per_s": round(idle, 4)}))  # fmt: skip
    finally:
        cluster.close()
        shutil.rmtree(root, ignore_errors=True)
        (hierarchy / "cgroup.procs").write_text(str(os.getpid()))
        for pid in members(group):
            os.kill(pid, signal.SIGKILL)
        while members(group):
            time.sleep(0.05)
        group.rmdir()


if __name__ == "__main__":
    main()
