"""`arena backup` while a real `arena serve --ladder` plays: each backup is a consistent
snapshot (ratings and totals agree with its games), restores to a directory holding
exactly its rows and bots, and every game in it is the server's game as stored."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.store.backup import verify_backup
from arena.testing.waiting import wait_until
from tests.commands.test_serve import _read_line
from tests.store.test_backup import fingerprint
from tests.tournament.test_ladder import _add, _assert_totals_are_the_history

pytestmark = pytest.mark.slow
BACKUPS = 3


def _rows(database: Path, sql: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def _game_count(database: Path) -> int:
    return int(_rows(database, "SELECT count(*) FROM games")[0][0])  # type: ignore[call-overload]


def _assert_ratings_are_the_history(database: Path) -> None:
    """Each version's rating and rated-game count are those its rating history ends with:
    a snapshot torn between a game and its rating update would differ."""
    versions = _rows(database, "SELECT id, mu, sigma, games FROM bot_versions")
    for version_id, mu, sigma, games in versions:
        history = _rows(database, "SELECT mu, sigma FROM rating_history WHERE bot_version_id ="
                        f" {version_id} ORDER BY game_id")  # fmt: skip
        assert len(history) == games
        if history:
            assert history[-1] == (mu, sigma)


def test_backups_taken_while_the_ladder_plays_are_consistent_and_restore(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _add(data, tmp_path, "a", "b", "c")
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--web-port", "0",
         "--ladder", "--concurrency", "2", "--data-dir", str(data), "--no-cpu-pinning"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        _read_line(process, r"listening on 127\.0\.0\.1:(\d+)")
        wait_until(lambda: _game_count(data / "arena.db") >= 2, "the ladder's first games", 120)
        for number in range(BACKUPS):
            dest = tmp_path / f"bk{number}"
            done = subprocess.run(
                [sys.executable, "-m", "arena", "backup", str(dest), "--data-dir", str(data),
                 "--json"], capture_output=True, text=True, timeout=120, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert json.loads(done.stdout)["games"] == _game_count(dest / "arena.db")
        assert process.poll() is None
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
    live_games = {row[0]: row for row in _rows(data / "arena.db", "SELECT * FROM games")}
    counts = [_game_count(tmp_path / f"bk{number}" / "arena.db") for number in range(BACKUPS)]
    assert counts == sorted(counts) and counts[0] >= 2
    for number in range(BACKUPS):
        backup = tmp_path / f"bk{number}"
        for row in _rows(backup / "arena.db", "SELECT * FROM games"):
            assert live_games[row[0]] == row  # the server's game, whole
        _assert_ratings_are_the_history(backup / "arena.db")
        _assert_totals_are_the_history(backup)
        restored = tmp_path / f"restored{number}"
        done = subprocess.run(
            [sys.executable, "-m", "arena", "restore", str(backup), "--data-dir", str(restored)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert fingerprint(restored)["rows"] == fingerprint(backup)["rows"]
        assert verify_backup(restored).bot_versions == 3
        board = subprocess.run(
            [sys.executable, "-m", "arena", "leaderboard", "--json", "--data-dir", str(restored)],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        ratings = {(row["bot"], row["mu"]) for row in json.loads(board.stdout)}
        stored = _rows(backup / "arena.db", "SELECT b.name, round(v.mu, 4) FROM bot_versions v"
                       " JOIN bots b ON b.id = v.bot_id")  # fmt: skip
        assert ratings == set(stored)
