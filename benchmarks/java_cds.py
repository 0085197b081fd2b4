"""Java launch to Hello with and without the arena's class-data archive.

    python3 benchmarks/java_cds.py [--rounds N] [--bot DIR] [--before PYTHONPATH]

Target: a Java bot's launch to its first message under 400 ms, as `arena bot
check` measures it (the sandbox, the default limits: one core).

Each round runs `arena bot check DIR --json` once per setting, with one
scenario per connection (``LAUNCH_SCENARIOS``: one launch per variant, the
four launches of a whole check, without its other games; ``--all`` plays
every scenario), in an order rotated from round to
round (benchmarks/_alternate.py):

- **before**: another checkout's arena (``--before``, a PYTHONPATH such as
  /work/main; left out when not given);
- **no archive**: this arena with ``--no-class-archive``;
- **archive**: this arena with the archive it built for the bot;
- **garbage archive**: the same, the archive's file overwritten with random
  bytes of the same length but for a dynamic archive's first four (so it is
  offered): what a corrupt archive costs, the JVM must refuse it and start
  with the JDK's default archive alone.

Printed per setting: the medians over rounds of each check's median launch to
Hello (wall) and its CPU to Hello (the bot's cgroup), with the spread, and the
load average before and after. Build the kit first (python3 -m tests.kits.building).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _alternate import load_text, rotated, spread

from arena.referee import load_bot
from arena.sandbox import javacds

ROOT = Path(__file__).resolve().parent.parent
LAUNCH_SCENARIOS = ("plain_seat0", "strategic", "tactical", "strategic_tactical")


def check(pythonpath: str, bot: Path, data: Path, *extra: str) -> tuple[float, float | None]:
    """One `arena bot check --json` of the arena at ``pythonpath`` (run there: ``-m``
    puts the working directory first on the path): its median launch to Hello and
    CPU to Hello, ms."""
    env = {**os.environ, "PYTHONPATH": pythonpath, "KAHUNA_ARENA_DATA": str(data)}
    done = subprocess.run(
        [sys.executable, "-m", "arena", "bot", "check", str(bot), "--json", *extra],
        env=env, cwd=pythonpath, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise SystemExit(
            f"no report from {pythonpath}: {done.stdout[-500:]} {done.stderr[-2000:]}"
        ) from None
    if not report["passed"]:
        failed = [s["name"] for s in report["scenarios"] if not s["passed"]]
        raise SystemExit(f"check failed ({pythonpath}, {extra}): {failed}")
    timing = report["timing"]
    return timing["launch_ms_median"], timing.get("launch_cpu_ms_median")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bot", type=Path, default=ROOT / "sample_bots" / "java_random")
    parser.add_argument("--before", default="", help="PYTHONPATH of the arena before")
    parser.add_argument("--all", action="store_true", help="every scenario of the check")
    args = parser.parse_args()
    scenarios = () if args.all else tuple(
        word for name in LAUNCH_SCENARIOS for word in ("--scenario", name)
    )  # fmt: skip
    spec = load_bot(args.bot)
    here = str(ROOT)
    with tempfile.TemporaryDirectory(prefix="kjcds-") as work:
        good, garbage = Path(work) / "good", Path(work) / "garbage"
        check(here, args.bot, good, *scenarios)  # builds the archive
        shelf = javacds.shelf_dir(good, spec.name, spec.version)
        archive = javacds.usable_archive(shelf, spec.directory)
        if archive is None:
            raise SystemExit("no archive was built")
        print(f"archive {archive.stat().st_size / 2**20:.1f} MiB")
        bad_shelf = javacds.shelf_dir(garbage, spec.name, spec.version)
        bad_shelf.mkdir(parents=True)
        bad = bad_shelf / archive.name
        size = archive.stat().st_size  # a dynamic archive's first bytes: offered, then refused
        bad.write_bytes(javacds.DYNAMIC_MAGIC + os.urandom(size - len(javacds.DYNAMIC_MAGIC)))
        settings: list[tuple[str, str, Path, tuple[str, ...]]] = [
            ("no archive", here, good, ("--no-class-archive",)),
            ("archive", here, good, ()),
            ("garbage archive", here, garbage, ()),
        ]
        if args.before:
            settings.insert(0, ("before", args.before, Path(work) / "before", ()))
        walls: dict[str, list[float]] = {name: [] for name, *_ in settings}
        cpus: dict[str, list[float]] = {name: [] for name, *_ in settings}
        print(load_text(), "(before)", flush=True)
        for round_index in range(args.rounds):
            for name, pythonpath, data, extra in rotated(settings, round_index):
                wall, cpu = check(pythonpath, args.bot, data, *scenarios, *extra)
                walls[name].append(wall)
                if cpu is not None:
                    cpus[name].append(cpu)
                print(f"  round {round_index + 1} {name:16} {wall:7.1f} ms"
                      + (f"  CPU {cpu:7.1f} ms" if cpu is not None else ""), flush=True)
            assert bad.read_bytes() != archive.read_bytes()
        print(load_text(), "(after)")
        for name, *_ in settings:
            print(f"{name:16} launch to Hello {spread(walls[name])}")
            if cpus[name]:
                print(f"{'':16} CPU to Hello    {spread(cpus[name])}")
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
