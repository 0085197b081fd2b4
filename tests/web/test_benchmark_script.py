"""benchmarks/web.py runs end to end on a tiny store (figures are not checked: see the script)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test here starts a process or a server

REPO = Path(__file__).resolve().parents[2]


def test_web_benchmark_runs_and_prints_its_figures(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "web.py"), "--games", "12", "--samples", "3",
         "--data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("game page /games/ID") and "median" in line for line in lines)
    assert lines[-1].startswith("game page: worst ")


def test_slow_clients_benchmark_runs_stops_by_itself_and_prints_latencies() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "web_slow_clients.py"), "--slow", "30",
         "--seconds", "2", "--byte-every", "0.2"],
        capture_output=True, text=True, timeout=120, check=False, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "30 slow clients (a header byte every 0.2 s) for 2 s"
    assert lines[1].startswith("normal requests: n=") and " p99 " in lines[1]
    assert lines[2] == "failed requests: 0"
