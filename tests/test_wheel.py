"""The arena installed from its wheel, away from any source checkout.

Builds the wheel from a copy of the sources, installs it into a fresh venv
(its dependencies from the package index, through pip's cache) and, from a
directory outside the repository and with no ``PYTHONPATH``, runs
``arena demo`` and a sandboxed ``arena match``: everything the arena needs at
run time (the Python SDK and the generated code mounted into the sandbox,
the smoke-match bot, the sample bots) must come from the installed package.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("arena", "sample_bots", "pyproject.toml", "README.md")
# What a checkout holds beside its sources: .ci/run builds the kits in place (ts_random's
# dist/, rust_random's target/) and installs npm packages; a wheel is built from sources.
JUNK = shutil.ignore_patterns(
    "__pycache__", "*.pyc", "node_modules", "*.egg-info", "build", "dist", "target"
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def run(argv: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(
        [str(arg) for arg in argv], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def test_the_wheel_runs_the_arena_outside_the_checkout(tmp_path: Path) -> None:
    """One test, so that xdist builds and installs the wheel once."""
    venv = install_wheel(tmp_path / "wheel")
    check_installed_files(venv)
    check_demo(venv, tmp_path / "elsewhere")
    check_sandboxed_match(venv, tmp_path / "bots")


def install_wheel(work: Path) -> Path:
    """A fresh venv (no system site-packages) with the arena installed from its wheel."""
    work.mkdir()
    source = work / "src"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():  # symlinks=True keeps arena/_data/sample_bots a link
            shutil.copytree(ROOT / name, source / name, symlinks=True, ignore=JUNK)
        else:
            shutil.copy(ROOT / name, source / name)
    dist = work / "dist"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--quiet", "-w", dist, source], cwd=work)  # fmt: skip
    (wheel,) = dist.glob("kahuna_arena-*.whl")
    env_dir = work / "venv"  # without pip of its own: this pip installs into it (--python)
    run([sys.executable, "-m", "venv", "--without-pip", env_dir], cwd=work)
    run([sys.executable, "-m", "pip", "--python", env_dir / "bin" / "python", "install",
         "--quiet", wheel], cwd=work)  # fmt: skip
    shutil.copy(wheel, env_dir / "installed.whl")
    shutil.rmtree(source)  # nothing may come from the sources from here on
    return env_dir


def check_installed_files(venv: Path) -> None:
    site = run([venv / "bin" / "python", "-c", "import arena; print(arena.__file__)"], cwd=venv)
    assert site.stdout.strip().startswith(str(venv)), site.stdout
    files = set(zipfile.ZipFile(venv / "installed.whl").namelist())
    for shipped in ("arena/_data/sample_bots/sdk/python/kahuna_bot/client.py",
                    "arena/_data/sample_bots/python_random/bot.toml",
                    "arena/_data/sample_bots/go_random/main.go",
                    "arena/_data/sample_bots/cpp_random/bot.cc",
                    "arena/_data/sample_bots/ts_random/src/bot.ts",
                    "arena/protocol/gen/kahuna/v1/referee_pb2.py",
                    "arena/web/static/viewer.js", "arena/web/templates/base.html"):  # fmt: skip
        assert shipped in files, f"{shipped} is not in the wheel"
    for unwanted in ("arena/testing/", "node_modules/", "__pycache__/", "/target/", "/dist/"):
        assert not any(unwanted in name for name in files), unwanted  # the product only


def check_demo(venv: Path, outside: Path) -> None:
    outside.mkdir()
    done = run([venv / "bin" / "arena", "demo", "--data-dir", outside / "data", "--games", "2",
                "--no-progress"], cwd=outside)  # fmt: skip
    assert "demo-1: standings (finished" in done.stdout, done.stdout
    board = run([venv / "bin" / "arena", "leaderboard", "--data-dir", outside / "data",
                 "--json"], cwd=outside)  # fmt: skip
    bots = {row["bot"] for row in json.loads(board.stdout)}
    assert {"python_greedy", "python_random"} <= bots, bots
    kits = run([venv / "bin" / "arena", "bot", "new", "--list"], cwd=outside)
    for language in ("python", "javascript", "go", "rust", "java", "cpp", "typescript"):
        assert language in kits.stdout, kits.stdout
    run([venv / "bin" / "arena", "bot", "new", "go", "my_go_bot"], cwd=outside)
    assert (outside / "my_go_bot" / "main.go").is_file()
    assert (outside / "my_go_bot" / "kahuna" / "run.go").is_file()


def check_sandboxed_match(venv: Path, bots: Path) -> None:
    """Two copied bots that import only the SDK: kahuna_bot and kahuna.v1 come from the wheel."""
    for name in ("python_greedy", "python_random"):
        shutil.copytree(ROOT / "sample_bots" / name, bots / name, ignore=JUNK)
    probe = run([venv / "bin" / "arena", "sandbox-check"], cwd=bots)
    assert "untrusted bots can run" in probe.stdout, probe.stdout  # so the match is sandboxed
    done = run([venv / "bin" / "arena", "match", "python_greedy", "python_random", "--games", "2",
                "--seed", "3", "--json"], cwd=bots)  # fmt: skip
    report = json.loads(done.stdout)
    assert len(report["games"]) == 2
    assert all(set(game["status"].values()) == {"ok"} for game in report["games"]), report
    assert sum(report["score"].values()) == 2
