"""`arena export` as a user runs it: a real process on a real store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from arena import store as st
from arena.testing.demo_data import play_demo_tournament

pytestmark = pytest.mark.slow


def _arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    with st.Store.open(tmp_path / "data") as store:
        play_demo_tournament(store, tmp_path / "bots", name="cup", bots=("a", "b"))
        play_demo_tournament(store, tmp_path / "bots", name="other", bots=("a", "b"))
    return tmp_path / "data"


def test_export_one_tournament_to_parquet(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _arena("export", "--data-dir", str(data_dir), "--tournament", "cup",
                  "--out", str(out), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    games = pq.read_table(out / "games.parquet").to_pylist()
    assert summary["games"] == len(games) == 2 and summary["withheld"] == 0
    assert {g["tournament"] for g in games} == {"cup"}
    assert summary["decisions"] == pq.read_metadata(out / "decisions.parquet").num_rows > 0


@pytest.mark.parametrize(("delay_s", "exported"), [("3600", 0), ("86400", 0), ("0", 2)],
                         ids=["within-the-delay", "the-longest-delay", "control: no delay"])
def test_games_within_the_spectator_delay_are_left_out(
    data_dir: Path, tmp_path: Path, delay_s: str, exported: int
) -> None:
    out = tmp_path / "out"
    done = _arena("export", "--data-dir", str(data_dir), "--tournament", "cup",
                  "--out", str(out), "--spectator-delay-s", delay_s, "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["games"] == pq.read_table(out / "games.parquet").num_rows == exported
    assert summary["withheld"] == 2 - exported


@pytest.mark.parametrize(
    ("extra", "status", "message"),
    [
        (["--tournament", "nope"], 1, "no tournament 'nope'"),
        (["--out", "FILE"], 1, "is not a directory"),
        ([], 2, "the following arguments are required: --out"),
        (["--spectator-delay-s", "-1"], 2, "--spectator-delay-s: the spectator delay must be"),
        (["--spectator-delay-s", "86400.5"], 2, "must be at most 86400 seconds"),
        (["--spectator-delay-s", "1e11"], 2, "must be at most 86400 seconds (a day, as arena"),
        (["--spectator-delay-s", "1e300"], 2, "must be at most 86400 seconds"),
    ],
    ids=["unknown-tournament", "out-is-a-file", "no-out", "negative-delay", "over-a-day",
         "before-year-one", "overflow"],
)
def test_bad_requests_are_refused_by_name(
    data_dir: Path, tmp_path: Path, extra: list[str], status: int, message: str
) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    out = ["--out", str(tmp_path / "out")] if extra and "--out" not in extra else []
    args = [str(a_file) if value == "FILE" else value for value in extra]
    done = _arena("export", "--data-dir", str(data_dir), *out, *args)
    assert done.returncode == status, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
