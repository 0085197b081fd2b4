"""Each test file's whole CPU: pytest and everything it starts, counted by a cgroup.
Run: python3 benchmarks/suite_cpu.py [--costliest N] [--rounds R] [--examples full] [PATH ...]

``time`` and ``getrusage`` miss what is not waited for by its parent: Ray's daemons,
a forkserver's children, a bot reaped by another process. Here each run of pytest is
put into a cgroup of its own in the unified (v2) hierarchy before it starts anything
(the child writes itself into ``cgroup.procs`` between fork and exec), so every process
it starts, and every process those start, is counted in that group's ``cpu.stat``
``usage_usec`` whoever reaps it. The kernel keeps that count without the cpu
controller, so a hybrid machine's ``/sys/fs/cgroup/unified`` serves as well.

The package and the bots' SDK are byte-compiled first, as ``scripts/check`` does before
pytest (with ``PYTHONDONTWRITEBYTECODE`` set, every process would otherwise compile what
it imports).
PATHs are run one at a time, each alone (never the whole suite, never ``-n``). With no
PATH, the first N units of ``tests/scheduling.py``'s ``COSTLIEST``, a unit being the
files ``pytest -n`` hands to one worker together (``SHARED``: they share a session
fixture, so they run in one pytest here too). Each run waits for its group to empty
(up to ``--linger`` seconds: a daemon that outlives pytest is still the file's CPU),
reports what was left, ends it, and removes the group. Printed: one line per run as it
ends, then a table of CPU and wall seconds per unit (the median over rounds), costliest
first. ``--tests N`` also prints each unit's N costliest tests (setup, call and
teardown: the group's CPU over each, read by this module as a pytest plugin). Needs
root (it writes cgroup files).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.sandbox.cgroups import read_keyed  # noqa: E402
from tests.scheduling import COSTLIEST, SHARED  # noqa: E402


@dataclass(frozen=True)
class Run:
    unit: str
    cpu_s: float
    user_s: float
    system_s: float
    wall_s: float
    left: int
    summary: str
    tests: dict[str, float] = field(default_factory=dict)  # node id -> CPU s


GROUP_ENV = "SUITE_CPU_GROUP"
TESTS_ENV = "SUITE_CPU_TESTS"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """As a plugin (``-p benchmarks.suite_cpu``): the group's CPU over each test, appended
    to ``$SUITE_CPU_TESTS`` as "usec node-id" lines."""
    group, out = os.environ.get(GROUP_ENV), os.environ.get(TESTS_ENV)
    if not group or not out:
        yield
        return
    before = read_keyed(Path(group) / "cpu.stat")["usage_usec"]
    yield
    spent = read_keyed(Path(group) / "cpu.stat")["usage_usec"] - before
    with open(out, "a") as handle:
        handle.write(f"{spent} {item.nodeid}\n")


def unified_root(mounts: str) -> Path:
    """Where the cgroup v2 hierarchy is mounted (``/sys/fs/cgroup``, or its ``unified``)."""
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2] == "cgroup2":
            return Path(fields[1])
    raise SystemExit("no cgroup2 hierarchy in /proc/mounts: cannot count CPU by cgroup")


def units(costliest: int) -> list[list[str]]:
    """The first ``costliest`` units of COSTLIEST, each with the files SHARED adds to it."""
    chosen = []
    for head in COSTLIEST[:costliest]:
        chosen.append([head] + [path for path, unit in SHARED.items() if unit == head])
    return chosen


def members(group: Path) -> list[int]:
    return [int(pid) for pid in (group / "cgroup.procs").read_text().split()]


def run_unit(files: list[str], root: Path, examples: str, linger_s: float) -> Run:
    """One pytest of ``files`` in a fresh cgroup: its CPU once the group is empty."""
    name = Path(files[0]).stem
    group = root / f"suite35-{name}-{os.getpid()}"
    group.mkdir()
    procs = str(group / "cgroup.procs")

    def enter() -> None:  # in the child, before exec: nothing started yet escapes
        with open(procs, "w") as handle:
            handle.write(str(os.getpid()))

    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
            "-p", "benchmarks.suite_cpu", *files]  # fmt: skip
    env = {**os.environ, "KAHUNA_EXAMPLES": examples, "PYTHONPATH": str(ROOT),
           GROUP_ENV: str(group), TESTS_ENV: f"/tmp/{group.name}.tests"}  # fmt: skip
    per_test = Path(env[TESTS_ENV])
    per_test.unlink(missing_ok=True)
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv, cwd=ROOT, env=env, capture_output=True, text=True, preexec_fn=enter
        )
        wall = time.monotonic() - started
        deadline = time.monotonic() + linger_s
        while members(group) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = members(group)
        stat = read_keyed(group / "cpu.stat")
        for pid in left:  # outlived pytest and the linger: counted, then ended
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        while members(group):
            time.sleep(0.05)
    finally:
        _remove(group)
    tests: dict[str, float] = {}
    if per_test.exists():
        for line in per_test.read_text().splitlines():
            usec, nodeid = line.split(" ", 1)
            tests[nodeid] = int(usec) / 1e6
        per_test.unlink()
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    summary = lines[-1] if lines else done.stderr.strip()[-200:]
    return Run(
        unit=" + ".join(files),
        cpu_s=stat["usage_usec"] / 1e6,
        user_s=stat["user_usec"] / 1e6,
        system_s=stat["system_usec"] / 1e6,
        wall_s=wall,
        left=len(left),
        summary=summary,
        tests=tests,
    )


def _remove(group: Path) -> None:
    for _ in range(100):
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.05)
    print(f"warning: could not remove {group}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--costliest", type=int, default=25,
                        help="with no PATH: the first N units of COSTLIEST")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=1, help="runs of each unit, interleaved")
    parser.add_argument("--examples", default="full", help="KAHUNA_EXAMPLES")
    parser.add_argument("--linger", type=float, default=15.0,
                        help="seconds to wait for the group to empty after pytest")  # fmt: skip
    parser.add_argument("--tests", type=int, default=0,
                        help="also print each unit's N costliest tests")  # fmt: skip
    parser.add_argument("paths", nargs="*", help="test files, each run alone")
    parser.add_argument("--no-compile", action="store_true",
                        help="do not byte-compile arena and the SDK first")  # fmt: skip
    args = parser.parse_args()
    if not args.no_compile:  # as scripts/check does: every process then loads it compiled
        for tree in (["-x", "/_data/", "arena"], ["sample_bots/sdk/python"]):
            subprocess.run([sys.executable, "-m", "compileall", "-q", *tree], cwd=ROOT, check=True)
    chosen = [[path] for path in args.paths] if args.paths else units(args.costliest)
    root = unified_root(Path("/proc/mounts").read_text())
    runs: dict[str, list[Run]] = {}
    for round_no in range(args.rounds):
        for files in chosen:
            run = run_unit(files, root, args.examples, args.linger)
            runs.setdefault(run.unit, []).append(run)
            print(f"round {round_no + 1}  cpu {run.cpu_s:7.1f} s (user {run.user_s:6.1f}, "
                  f"sys {run.system_s:5.1f})  wall {run.wall_s:7.1f} s  left {run.left}  "
                  f"load {os.getloadavg()[0]:4.1f}  {run.unit}: {run.summary}",
                  flush=True)  # fmt: skip
            for nodeid, cpu in sorted(run.tests.items(), key=lambda t: -t[1])[: args.tests]:
                print(f"    {cpu:7.1f} s  {nodeid}", flush=True)
    rows = sorted(
        ((statistics.median(r.cpu_s for r in rs), statistics.median(r.wall_s for r in rs), unit)
         for unit, rs in runs.items()),
        reverse=True,
    )  # fmt: skip
    print("\n| file | CPU s | wall s |\n|---|---|---|")
    for cpu, wall, unit in rows:
        print(f"| `{unit}` | {cpu:.1f} | {wall:.1f} |")
    print(f"| total | {sum(r[0] for r in rows):.1f} | {sum(r[1] for r in rows):.1f} |")


if __name__ == "__main__":
    main()
