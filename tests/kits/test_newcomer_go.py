"""A newcomer's Go path, run as written: a played match in ten minutes.

In a fresh directory that sees the repository's sample_bots/ (a checkout),
with `arena` this checkout's: `arena bot new go mybot`, then every command of
the bash block in the copy's own README.md, as a newcomer would paste them:
the build, then a match against python_random that must play both games with
no failure status. The copy's README must name the copy, not the kit, and
the Go section of sample_bots/README.md must show the very same commands.
The first-bot guide's block is run as written too, in a directory that is no
checkout.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from .building import BUILD_TIMEOUT_S, kit, missing_tools
from .test_readme_cpp_ts import BLOCK, FAILURES, section

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(BUILD_TIMEOUT_S)]


def _shell(script: str, work: Path, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    python_path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": python_path}
    return subprocess.run(["bash", "-c", "set -euo pipefail\n" + script], cwd=work, env=env,
                          capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)  # fmt: skip


def test_the_go_readme_of_a_new_bot_reaches_a_played_match(tmp_path: Path) -> None:
    missing = missing_tools(kit("go_random"))
    if missing:
        pytest.skip(f"go_random needs {', '.join(missing)} (.ci/run installs them)")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    arena = bin_dir / "arena"  # this checkout's arena, as `pip install -e .` would put it
    arena.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m arena "$@"\n')
    arena.chmod(0o755)
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "sample_bots").symlink_to(REPO / "sample_bots")

    created = _shell("arena bot new go mybot", work, bin_dir)
    assert created.returncode == 0, created.stderr
    assert "mybot/build.sh" in created.stdout  # the hint says how to build it
    readme = (work / "mybot" / "README.md").read_text(encoding="utf-8")
    assert "go_random" not in readme and "sample_bots/mybot" not in readme
    lines = [line.strip() for block in BLOCK.findall(readme)
             for line in block.splitlines() if line.strip()]  # fmt: skip
    assert lines[0].startswith("mybot/build.sh"), lines
    assert lines[-1].startswith("arena match mybot"), lines
    shown = re.search(r"^```\n(.*?)^```", section("## Go (`go_random`)"), re.M | re.S)
    assert shown is not None
    commands = ["arena bot new go mybot", *(line.split("#")[0].strip() for line in lines)]
    assert shown.group(1).splitlines() == commands

    done = _shell("\n".join(lines), work, bin_dir)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "score:" in done.stdout, done.stdout
    games = [line for line in done.stdout.splitlines() if re.match(r"\d+\s", line)]
    assert len(games) == 2, done.stdout
    for game in games:
        assert not any(status in game for status in FAILURES), game


def test_the_first_bot_guide_runs_as_written_outside_a_checkout(tmp_path: Path) -> None:
    """The first bash block of docs/guide/first-bot.md (a Go bot: new, build, check, match),
    pasted in an empty directory, as by someone who installed the arena and has no
    sample_bots/ beside them: every line runs and the match is played."""
    missing = missing_tools(kit("go_random"))
    if missing:
        pytest.skip(f"go_random needs {', '.join(missing)} (.ci/run installs them)")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    arena = bin_dir / "arena"
    arena.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m arena "$@"\n')
    arena.chmod(0o755)
    work = tmp_path / "elsewhere"
    work.mkdir()
    guide = (REPO / "docs" / "guide" / "first-bot.md").read_text(encoding="utf-8")
    lines = [line.split("#")[0].strip() for line in BLOCK.findall(guide)[0].splitlines()]
    assert any(line.startswith("arena match my_bot ") for line in lines), lines

    done = _shell("\n".join(filter(None, lines)), work, bin_dir)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "checks passed" in done.stdout and "score:" in done.stdout, done.stdout
