"""Builds of the starter kits, made once per test run and shared by its workers.

A kit is copied (without its build outputs, as `arena bot new` copies it)
into a directory named after the kit and the hash of its sources, under the
run's shared temporary root, and built there with its own build script. A
file lock makes the pytest-xdist workers of one run build each kit once; a
later test asking for the same sources gets the finished directory.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.commands.kits import copy_sources, sample_bots_dir
from arena.referee.botdir import content_hash

BUILD_TIMEOUT_S = 600
TOOLS = {"cpp_random": ("g++", "protoc", "grpc_cpp_plugin", "pkg-config"), "ts_random": ("npm",)}


@dataclass(frozen=True)
class Built:
    directory: Path
    build_s: float  # 0.0 when another worker (or test) had built it


def shared_root(factory: pytest.TempPathFactory) -> Path:
    """A directory every xdist worker of this run sees (the parent of their base temps)."""
    base = factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    path = root / "kit-builds"
    path.mkdir(exist_ok=True)
    return path


def needs_tools(kit: str) -> None:
    missing = [tool for tool in TOOLS.get(kit, ()) if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{kit} needs {', '.join(missing)} (.ci/run installs them)")


def build_kit(source: Path, root: Path, *, name: str | None = None) -> Built:
    """``source`` copied under ``root`` and built there, or the build already made."""
    needs_tools(source.name)
    staging = root / f".staging-{source.name}-{os.getpid()}-{time.monotonic_ns()}"
    copy_sources(source, staging)
    target = root / f"{name or source.name}-{content_hash(staging)}"
    with (root / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root / f"{target.name}.built"  # beside the bot: not part of its version
        if done.is_file():
            shutil.rmtree(staging)
            return Built(target, 0.0)
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
        build_s = run_build(target)
        done.write_text(f"{build_s:.1f}\n")
    return Built(target, build_s)


def run_build(directory: Path) -> float:
    """Runs ``directory/build.sh``; its wall time in seconds. A failed build fails the test."""
    started = time.monotonic()
    done = subprocess.run(
        ["./build.sh"], cwd=directory, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S
    )
    assert done.returncode == 0, f"{directory}/build.sh failed:\n{done.stdout}\n{done.stderr}"
    return time.monotonic() - started


def kit_source(kit: str) -> Path:
    return sample_bots_dir() / kit
