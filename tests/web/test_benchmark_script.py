"""benchmarks/web.py runs end to end on a tiny store (figures are not checked: see the script)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
