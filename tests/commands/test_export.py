"""`arena export` as a user runs it: a real process on a real store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from arena import store as st
from arena.store.served_delay import serve_with_delay
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


@pytest.mark.parametrize(
    ("served_s", "extra", "exported", "delay_s"),
    [
        (3600.0, [], 0, 3600),
        (3600.0, ["--spectator-delay-s", "7200"], 0, 7200),
        (3600.0, ["--spectator-delay-s", "0", "--allow-shorter-delay"], 2, 0),
        (0.0, [], 2, 0),
    ],
    ids=["the-stored-delay-by-default", "a-longer-one", "shorter-when-told",
         "control: a server without a delay"],
)  # fmt: skip
def test_export_keeps_the_delay_arena_serve_stored(
    data_dir: Path, tmp_path: Path, served_s: float, extra: list[str], exported: int,
    delay_s: float,
) -> None:
    with st.Store.open(data_dir) as store:
        serve_with_delay(store, served_s)
    out = tmp_path / "out"
    done = _arena("export", "--data-dir", str(data_dir), "--tournament", "cup",
                  "--out", str(out), "--json", *extra)  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["games"] == pq.read_table(out / "games.parquet").num_rows == exported
    assert (summary["withheld"], summary["spectator_delay_s"]) == (2 - exported, delay_s)


def test_export_refuses_a_shorter_delay_than_the_stored_one_naming_it(
    data_dir: Path, tmp_path: Path
) -> None:
    with st.Store.open(data_dir) as store:
        serve_with_delay(store, 3600.0)
    done = _arena("export", "--data-dir", str(data_dir), "--out", str(tmp_path / "out"),
                  "--spectator-delay-s", "60")  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert ("--spectator-delay-s 60 is shorter than this data directory's spectator delay of"
            " 3600 seconds") in done.stderr
    assert "give --allow-shorter-delay" in done.stderr
    assert not (tmp_path / "out").exists()
