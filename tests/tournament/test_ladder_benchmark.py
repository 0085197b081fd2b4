"""benchmarks/ladder.py's reads and view run end to end on a small ladder (figures are not
checked: see the script). ``view`` is given this checkout as the other checkout too, so both
sides must answer alike."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test here starts a process or a server

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "ladder.py"), *args],
        capture_output=True, text=True, timeout=300, check=False, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.splitlines()


def test_view_serves_a_v8_store_and_its_migrated_copy_and_compares_their_answers() -> None:
    lines = _run(
        "view", "--before", str(REPO), "--matches", "300", "--rounds", "1", "--repeat", "1"
    )
    assert lines[0].startswith("built a v8 store: 20 entrants, 300 ladder matches, 599 games")
    assert lines[1].startswith("migrating the copy to v9")
    for what in ("GET /ladder", "GET /api/ladder", "GetLadder"):
        summary = next(line for line in lines if line.startswith(f"{what}: before "))
        assert summary.endswith("answers identical"), summary
    for what in ("GET /api/tournaments/1", "WatchTournament"):  # changed: a ladder's ranking
        summary = next(line for line in lines if line.startswith(f"{what}: before "))
        assert "each side's answers identical" in summary, summary
        assert summary.endswith("ranked as /api/ladder: before True, after True"), summary


def test_reads_migrates_its_store_and_times_the_three_reads() -> None:
    lines = _run("reads", "--matches", "300")
    assert lines[0].startswith("migrating to v9: ")
    labels = ("ladder_entrants", "ladder_history", "ladder_ratings")
    for line, label in zip(lines[1:], labels, strict=True):
        assert f", {label} (" in line and " median " in line, line
