"""The test suite's cost in wall and CPU seconds: the inner loop against its targets.
Run: python3 benchmarks/inner_loop.py [--workers 2] [--rounds 2] [--select "not slow"]
     [--modes quick,full] [--durations 15] [PATH ...]

Runs ``pytest -m SELECT`` (``--workers`` > 0 adds ``-n WORKERS``) once per mode
and round, the modes alternating and their order rotated each round so that
load from other work on the machine spreads over them. A mode is the value of
``KAHUNA_EXAMPLES`` (``quick``: the inner loop's share of property-test
examples; ``full``: what ``scripts/check`` runs). Printed per run: wall
seconds, CPU seconds (user + system of pytest and everything it started), the
load average, and pytest's verdict; with ``--durations``, the slowest tests of
the last run. Targets (docs/guide/contributing.md): the inner loop, ``-m "not
slow" -n 2``, under 60 s wall on 2 quiet cores; the whole suite (``--select
"not soak"``, mode ``full``) under 10 minutes.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(mode: str, args: argparse.Namespace) -> tuple[float, float, str, str]:
    """One pytest run: wall seconds, CPU seconds, its summary line and its output."""
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", args.select]
    if args.workers > 0:
        argv += ["-n", str(args.workers)]
    if args.durations:
        argv += [f"--durations={args.durations}"]
    env = {**os.environ, "KAHUNA_EXAMPLES": mode, "PYTHONPATH": str(ROOT)}
    cpu_before, started = _cpu_s(), time.monotonic()
    done = subprocess.run(argv + args.paths, cwd=ROOT, env=env, capture_output=True, text=True)
    wall, cpu = time.monotonic() - started, _cpu_s() - cpu_before
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return wall, cpu, (lines[-1] if lines else done.stderr.strip()[-200:]), done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="pytest -n (0: no xdist)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--select", default="not slow", help="pytest -m expression")
    parser.add_argument("--modes", default="quick,full", help="KAHUNA_EXAMPLES values")
    parser.add_argument("--durations", type=int, default=0, help="show the N slowest tests")
    parser.add_argument("paths", nargs="*", help="test paths (default: all of tests/)")
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    output = ""
    for round_no in range(args.rounds):
        for mode in modes[round_no % len(modes):] + modes[: round_no % len(modes)]:
            wall, cpu, summary, output = run_once(mode, args)
            load = os.getloadavg()[0]
            print(f"round {round_no + 1} {mode:5s} wall {wall:6.1f} s  cpu {cpu:6.1f} s  "
                  f"load {load:4.1f}  {summary}", flush=True)  # fmt: skip
    if args.durations:
        start = output.find("slowest")
        print(output[start:].split("=====", 1)[0] if start >= 0 else "")


if __name__ == "__main__":
    main()
