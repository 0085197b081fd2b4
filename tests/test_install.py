"""scripts/install, the README's first command: the package and `arena demo`, nothing else.

Run on a copy of the repository's files into a fresh virtual environment (with
this Python's packages visible, so that the dependencies come from here; the
build backend from pip's cache or index), it must end with a real demo
tournament stored in the data directory it was given. Its refusals name the
argument and exit 2.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test here starts a process or a server

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ROOT / "scripts" / "install"


def _tracked_copy(to: Path) -> Path:
    """The repository's tracked files as they are in the working tree, in a new directory."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree
        target = to / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)
    return to


@pytest.mark.parametrize(
    ("argv", "status", "says"),
    [
        pytest.param(["--bogus"], 2, "unknown argument '--bogus'", id="unknown"),
        pytest.param(["--help"], 0, "scripts/install --no-demo", id="help"),
    ],
)
def test_arguments(argv: list[str], status: int, says: str) -> None:
    done = subprocess.run(
        [str(INSTALL), *argv], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == status, done.stderr
    assert says in done.stdout + done.stderr


def test_too_old_a_python_is_refused(tmp_path: Path) -> None:
    old = tmp_path / "python3"
    old.write_text("#!/bin/sh\n[ \"$1\" = --version ] && echo 'Python 3.9.2' && exit 0\nexit 1\n")
    old.chmod(0o755)
    done = subprocess.run(
        [str(INSTALL), "--no-demo"], capture_output=True, text=True, timeout=30, check=False,
        env={**os.environ, "PYTHON": str(old)},
    )  # fmt: skip
    assert done.returncode == 1
    assert "Python 3.9.2 is too old: Kahuna Arena needs 3.11 or later" in done.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_install_then_demo_in_a_fresh_venv(tmp_path: Path) -> None:
    repo = _tracked_copy(tmp_path / "repo")
    venv = tmp_path / "venv"
    subprocess.run(  # its pip is this Python's, as every other package
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        check=True,
    )
    data = tmp_path / "data"
    env = {
        key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    env.update(
        VIRTUAL_ENV=str(venv),
        PATH=f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}",
        PYTHON=str(venv / "bin" / "python"),
        KAHUNA_ARENA_DATA=str(data),
    )
    done = subprocess.run(
        [str(repo / "scripts" / "install")], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=840, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "== arena demo" in done.stdout
    assert "Leaderboard" in done.stdout
    # The venv's arena is the copy's, and the demo's tournament is stored, finished.
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import arena; print(arena.__file__)"],
        env=env, capture_output=True, text=True, check=True, cwd=tmp_path,
    )  # fmt: skip
    assert where.stdout.strip().startswith(str(repo)), where.stdout
    with sqlite3.connect(data / "arena.db") as db:
        rows = db.execute("SELECT name, status FROM tournaments").fetchall()
    assert rows == [("demo-1", "finished")]
