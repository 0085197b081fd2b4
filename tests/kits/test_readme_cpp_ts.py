"""The C++ and TypeScript sections of sample_bots/README.md, run as written.

Every shell command in their ```bash blocks runs here, in order, in a fresh
directory that sees the repository's sample_bots/ (as a newcomer's checkout
would), with `arena` this checkout's: the kit is started with `arena bot
new`, its code generated, built, and played against python_random. The
`NAME/build.sh` line's build is the one cache's (``building.built_in_place``:
that build.sh run once per CI run on the same sources under the same name, in
.ci/run's build step). The `apt-get install` lines are what .ci/run installs:
each package they name must be in .ci/run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from arena.referee import BotStatus

from .building import BUILD_TIMEOUT_S, built_in_place, kit, missing_tools

REPO = Path(__file__).resolve().parents[2]
README = REPO / "sample_bots" / "README.md"
CI_RUN = REPO / ".ci" / "run"
SECTIONS = {
    "cpp_random": "## C++: the `cpp_random` kit",
    "ts_random": "## TypeScript: the `ts_random` kit",
}
BUILD_LINE = re.compile(r"(\S+)/build\.sh")
BLOCK = re.compile(r"^[ \t]*```bash\n(.*?)^[ \t]*```", re.MULTILINE | re.DOTALL)
FAILURES = [status.value for status in BotStatus if status is not BotStatus.OK]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # builds: C++ takes ~30 s of CPU


def section(heading: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else len(text)]


def commands(heading: str) -> list[str]:
    lines = []
    for block in BLOCK.findall(section(heading)):
        lines += [line.strip() for line in block.splitlines() if line.strip()]
    return lines


@pytest.mark.parametrize("kit", sorted(SECTIONS))
def test_the_section_has_every_part_a_newcomer_needs(kit: str) -> None:
    text = section(SECTIONS[kit])
    for part in ("Generate code", "Connect", "Build", "What to ship", "What the sandbox gives",
                 "unix:///run/kahuna/referee.sock", "arena bot new"):  # fmt: skip
        assert part in text, part


@pytest.mark.parametrize("kit", sorted(SECTIONS))
def test_install_lines_are_what_ci_installs(kit: str) -> None:
    ci = set(CI_RUN.read_text(encoding="utf-8").split())
    for line in commands(SECTIONS[kit]):
        words = shlex.split(line)
        if words[:2] == ["apt-get", "install"]:
            for package in (word for word in words[2:] if not word.startswith("-")):
                assert package in ci, f".ci/run lacks {package}"


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_every_command_of_the_section_runs(name: str, tmp_path: Path) -> None:
    missing = missing_tools(kit(name))
    if missing:
        pytest.skip(f"{name} needs {', '.join(missing)} (.ci/run installs them)")
    lines = [line for line in commands(SECTIONS[name]) if not line.startswith("apt-get ")]
    assert any(line.startswith("arena bot new") for line in lines)
    assert any(line.startswith("arena match") for line in lines)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    arena = bin_dir / "arena"  # this checkout's arena, as `pip install -e .` would put it
    arena.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m arena "$@"\n')
    arena.chmod(0o755)
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "sample_bots").symlink_to(REPO / "sample_bots")
    python_path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": python_path}
    segments: list[list[str]] = [[]]  # the lines between the builds, each run by bash
    builds: list[str] = []
    for line in lines:
        build = BUILD_LINE.fullmatch(line)
        if build is None:
            segments[-1].append(line)
        else:
            builds.append(build.group(1))
            segments.append([])
    assert builds, "the section never runs its build.sh"
    stdout = ""
    for number, segment in enumerate(segments):
        if number:  # the build.sh line: its build of these sources (built_in_place)
            built_in_place(kit(name), work / builds[number - 1])
        script = "set -euo pipefail\n" + "\n".join(segment) + "\n"
        done = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True,
                              text=True, timeout=2 * BUILD_TIMEOUT_S)  # fmt: skip
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        stdout += done.stdout
    assert "score:" in stdout, stdout
    games = [line for line in stdout.splitlines() if re.match(r"\d+\s", line)]
    assert len(games) == 2, stdout
    for game in games:
        assert not any(status in game for status in FAILURES), game
