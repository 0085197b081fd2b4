"""`arena demo` as a newcomer runs it: a real round robin of the sample bots."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from arena.cli import main
from arena.commands.demo import DEMO_BOTS, sample_bots
from tests.cli import arena_in_process


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip


@pytest.mark.slow  # arena processes and the sample bots
def test_demo_plays_a_stored_rated_round_robin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo runs as a process; what it stored is read back by the leaderboard and
    audit commands in this process (``arena.cli.main``)."""
    data = str(tmp_path / "data")
    done = arena("demo", "--data-dir", data, "--games", "2", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "demo-1: standings (finished" in done.stdout
    assert main(["leaderboard", "--data-dir", data, "--json"]) == 0
    board = json.loads(capsys.readouterr().out)
    playing = {name for name in DEMO_BOTS if name in {s.name for s in sample_bots()[0]}}
    assert {row["bot"] for row in board} == playing
    # every bot met every other bot in a 2-game match: 2 * (n - 1) games each
    assert all(row["games"] == 2 * (len(playing) - 1) for row in board)

    again = arena("demo", "--data-dir", data, "--games", "2", "--no-progress")
    assert again.returncode == 0, again.stderr
    assert "already stored" in again.stdout  # unchanged bots are not smoke-tested again
    assert "demo-2: standings (finished" in again.stdout
    # the same --seed (the default 1) deals the same cards, and the seeded sample bots
    # play the same games, though demo-2 is another tournament in a fuller directory
    assert _games(tmp_path / "data", "demo-1") == _games(tmp_path / "data", "demo-2")
    capsys.readouterr()
    audited = main(["audit", "demo-2", "--data-dir", data])
    out, err = capsys.readouterr()
    assert audited == 0 and "pass" in out, err
    assert "created with --seed" in out


def _games(data: Path, name: str) -> list[tuple[object, ...]]:
    """(round, first, second, game index, deal, reshuffles, actions) of every game."""
    db = sqlite3.connect(data / "arena.db")
    rows = db.execute(
        "SELECT m.round, m.first_id, m.second_id, g.game_index, g.record FROM games g"
        " JOIN matches m ON m.id = g.match_id JOIN tournaments t ON t.id = m.tournament_id"
        " WHERE t.name = ? ORDER BY m.round, m.first_id, g.game_index",
        (name,),
    ).fetchall()
    db.close()
    assert rows
    out = []
    for r in rows:
        record = json.loads(r[4])
        out.append((*r[:4], record["deal"], record.get("reshuffles"), record["actions"]))
    return out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--games", "0"], "arena: --games must be at least 1, got 0"),
        (["--games", "101"], "arena: games_per_match must be a whole number from 1 to 100"),
        (["--seed", "-1"], "arena: seed must be a whole number from 0 to 2147483647"),
        (["--concurrency", "0"], "arena: --concurrency must be from 1 to 1024, got 0"),
        (["--concurrency", "1025"], "arena: --concurrency must be from 1 to 1024, got 1025"),
    ],
    ids=["zero-games", "too-many-games", "negative-seed", "zero-concurrency", "huge-concurrency"],
)
def test_demo_refuses_bad_flags_before_storing_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    """In this process (``arena.cli.main``, what the ``arena`` process runs): the refusal
    is the command's own, and the store it opened holds no bot and no tournament."""
    data = tmp_path / "data"
    status, out, err = arena_in_process(capsys, "demo", "--data-dir", str(data), *flags)
    assert status == 2 and out == ""  # a bad flag value, as argparse's
    assert err.startswith(message) and err.count("\n") == 1, err
    assert _stored(data) == (0, 0)


def _stored(data: Path) -> tuple[int, int]:
    """How many bot versions and tournaments ``data`` holds (none: no database)."""
    if not (data / "arena.db").exists():
        return 0, 0
    with closing(sqlite3.connect(data / "arena.db")) as db:
        versions, tournaments = db.execute(
            "SELECT (SELECT COUNT(*) FROM bot_versions), (SELECT COUNT(*) FROM tournaments)"
        ).fetchone()
    return int(versions), int(tournaments)
