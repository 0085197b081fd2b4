"""What each test of a unit starts: bot launches, Ray drivers, arena processes, per test.
Run: python3 benchmarks/unit_execs.py [--out DIR] [PATH ...]

A test's CPU (``benchmarks/suite_cpu.py``) says how much, not what of: here one pytest
of PATHs (default: the shared Ray unit, ``tests/scheduling.py``'s ``SHARED`` with its
head) runs under ``strace -f --seccomp-bpf -e trace=execve``, which follows every
process the tests start (bots, Ray's daemons, forkserver children), and this module,
loaded into that pytest as a plugin, writes each test's start and end. Each exec is
then counted in the test it fell in (or "(between tests)"). A bot launch is its
sandbox's ``setpriv`` exec (the last step before ``python3 bot.py``: counting both
would count each bot twice). strace's stops cost CPU, so time the unit with
suite_cpu.py, not here. Needs strace (and root for the Ray tests).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.scheduling import SHARED  # noqa: E402

CLOCK_ENV = "UNIT_EXECS_CLOCK"
KINDS = ("bot", "ray driver", "arena tournament", "arena other", "python other", "nsenter")
_EXEC = re.compile(r'\d+ ([\d.]+) execve\("([^"]*)", \[(.*?)\]')


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """As a plugin: "start end node-id" of each test (setup to teardown), appended to
    ``$UNIT_EXECS_CLOCK``."""
    out = os.environ.get(CLOCK_ENV)
    started = time.time()
    yield
    if out:
        with open(out, "a") as handle:
            handle.write(f"{started:.6f} {time.time():.6f} {item.nodeid}\n")


def kind(program: str, args: str) -> str | None:
    """What an exec of ``program`` with (strace's rendering of) ``args`` starts."""
    if program.endswith("/setpriv"):
        return "bot"
    if program.endswith("/nsenter"):
        return "nsenter"
    if "python" not in Path(program).name or '"bot.py"' in args:
        return None
    if "arena.testing.ray_driver" in args:
        return "ray driver"
    if '"arena", "tournament"' in args:
        return "arena tournament"
    if '"arena"' in args:
        return "arena other"
    return "python other"


def count(clock: Path, log: Path) -> dict[str, collections.Counter[str]]:
    """Each test's execs by ``kind`` (successful execs only)."""
    tests = []
    for line in clock.read_text().splitlines():
        start, end, nodeid = line.split(" ", 2)
        tests.append((float(start), float(end), nodeid))
    counts: dict[str, collections.Counter[str]] = {n: collections.Counter() for *_, n in tests}
    for line in log.read_text(errors="replace").splitlines():
        found = _EXEC.match(line)
        if not found or "= -1 " in line:
            continue
        what = kind(found.group(2), found.group(3))
        if what is None:
            continue
        at = float(found.group(1))
        test = next((n for start, end, n in tests if start <= at <= end), "(between tests)")
        counts.setdefault(test, collections.Counter())[what] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", help="test files (default: the shared Ray unit)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/unit_execs"),
                        help="where the strace log and the clock go")  # fmt: skip
    args = parser.parse_args()
    head = next(iter(SHARED.values()))
    paths = args.paths or [head, *(path for path, unit in SHARED.items() if unit == head)]
    args.out.mkdir(parents=True, exist_ok=True)
    clock, log = args.out / "clock", args.out / "strace"
    clock.unlink(missing_ok=True)
    env = {**os.environ, CLOCK_ENV: str(clock), "PYTHONPATH": str(ROOT),
           "KAHUNA_EXAMPLES": os.environ.get("KAHUNA_EXAMPLES", "full")}  # fmt: skip
    argv = ["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=execve", "-ttt", "-o", str(log),
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
            "-p", "benchmarks.unit_execs", *paths]  # fmt: skip
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    print(lines[-1] if lines else done.stderr[-2000:])
    counts = count(clock, log)
    print("| test | " + " | ".join(KINDS) + " |")
    print("|---" * (len(KINDS) + 1) + "|")
    for test, counted in counts.items():
        print(f"| `{test.split('::', 1)[-1]}` | " + " | ".join(str(counted[k]) for k in KINDS)
              + " |")  # fmt: skip
    total: collections.Counter[str] = collections.Counter()
    for counted in counts.values():
        total.update(counted)
    print("| total | " + " | ".join(str(total[k]) for k in KINDS) + " |")


if __name__ == "__main__":
    main()
