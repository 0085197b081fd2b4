"""The CPU and wall of one `arena ...` process that only parses its flags, per command.

    python3 benchmarks/cli_start.py [--repeats 7] [--tree NAME=PATH ...]

Tests, the README's and the kits' checks and record checkers start `python3 -m
arena` many times; a command that only parses (``--help``) costs what starting
the CLI costs: the interpreter and the imports. Each ``--tree`` is a source tree
whose ``arena`` package is put first on ``PYTHONPATH`` (default: this checkout,
as ``this``); the trees and the commands are run in rounds, each round in an
order rotated by one (``_alternate``), and each figure is the median over the
rounds of the process's CPU (user + system, its children included) and wall.
Every tree is byte-compiled first (``compileall``), as an installed one is.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _alternate import load_text, rotated, spread

REPO = Path(__file__).resolve().parents[1]

COMMANDS = (
    ("tournament list --help", ["tournament", "list", "--help"]),
    ("bot list --help", ["bot", "list", "--help"]),
    ("serve --help", ["serve", "--help"]),
    ("match --help", ["match", "--help"]),
    ("replay --help", ["replay", "--help"]),
    ("--help (every command)", ["--help"]),
)


def launch(tree: Path, words: list[str]) -> tuple[float, float]:
    """CPU seconds and wall seconds of one `python3 -m arena WORDS` with ``tree`` first."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "arena", *words], env=env, check=True,
                   stdout=subprocess.DEVNULL, cwd=tree)  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="rounds (default 7)")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=PATH",
                        help="a tree holding an arena package (default: this=.)")  # fmt: skip
    args = parser.parse_args()
    trees = [(name, Path(path).resolve()) for name, _, path in
             (given.partition("=") for given in args.tree)] or [("this", REPO)]  # fmt: skip
    for _name, path in trees:  # each tree's bytecode made, as an installation has it
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(path / "arena")], check=True)
    settings = [(tree, command) for tree in trees for command in COMMANDS]
    cpu: dict[tuple[str, str], list[float]] = {}
    wall: dict[tuple[str, str], list[float]] = {}
    print(load_text(), "at the start")
    for round_index in range(args.repeats):
        for (name, path), (label, words) in rotated(settings, round_index):
            spent, took = launch(path, words)
            cpu.setdefault((name, label), []).append(spent)
            wall.setdefault((name, label), []).append(took)
    print(load_text(), "at the end")
    print("| command | tree | CPU s, median [quartiles] (range) | wall s, median |")
    print("|---|---|---|---|")
    for label, _words in COMMANDS:
        for name, _path in trees:
            key = (name, label)
            print(f"| `arena {label}` | {name} | {spread(cpu[key])} |"
                  f" {statistics.median(wall[key]):.3f} |")  # fmt: skip


if __name__ == "__main__":
    main()
