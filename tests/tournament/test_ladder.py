"""The ladder with real bots in real processes: joins and leaves live, kill -9 and resume."""

from __future__ import annotations

import argparse
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.commands.ladder import prepare_ladder
from arena.referee import load_bot
from arena.sandbox.process import wait_gone
from arena.store import (
    INTERRUPTED,
    Store,
    add_bot_version,
    find_ladder,
    get_tournament,
    get_version,
    ladder_settings,
    set_withdrawn,
)
from arena.tournament.ladder import LadderRunner
from tests.tournament.test_runner import _descendants

REPO = Path(__file__).resolve().parents[2]
RANDOM_BOT = REPO / "sample_bots" / "python_random"

pytestmark = pytest.mark.slow


def _bot(tmp: Path, name: str) -> Path:
    target = tmp / "bots" / name
    shutil.copytree(RANDOM_BOT, target, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (target / "bot.toml").read_text()
    (target / "bot.toml").write_text(toml.replace('name = "python_random"', f'name = "{name}"'))
    return target


def _add(data: Path, tmp: Path, *names: str) -> None:
    with Store.open(data) as store:
        for name in names:
            add_bot_version(store, load_bot(_bot(tmp, name)))


def _rows(data: Path, sql: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(data / "arena.db")
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def _games(data: Path) -> list[tuple[object, ...]]:
    return _rows(data, "SELECT id, match_id, game_index, seat0_id, record FROM games ORDER BY id")


def _wait(what: str, until: Callable[[], bool], timeout_s: float = 240) -> None:
    deadline = time.monotonic() + timeout_s
    while not until():
        assert time.monotonic() < deadline, f"timed out waiting: {what}"
        time.sleep(0.3)


def _serve(data: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--ladder", "--concurrency", "2",
         "--ladder-placement-matches", "1", "--data-dir", str(data)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip


def test_kill_9_of_the_server_loses_no_game_and_the_ladder_goes_on(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _add(data, tmp_path, "a", "b", "c")
    server = _serve(data)
    _wait("three stored games", lambda: len(_games(data)) >= 3)
    family = _descendants(server.pid)
    server.send_signal(signal.SIGKILL)
    server.wait(10)
    assert wait_gone(sorted(family), 20), "a worker or bot outlived the killed server"
    before = _games(data)
    unfinished = {
        r[0] for r in _rows(data, "SELECT m.id FROM matches m WHERE m.finished_at IS NULL")
    }
    with Store.open(data) as store:
        ladder = find_ladder(store, "ladder")
        assert ladder is not None
        assert get_tournament(store, ladder).status is INTERRUPTED
    server = _serve(data)
    try:
        _wait(
            "the killed run's matches resumed and finished, and more games",
            lambda: (
                len(_games(data)) >= len(before) + 4
                and not unfinished
                & {r[0] for r in _rows(data, "SELECT id FROM matches WHERE finished_at IS NULL")}
            ),
        )
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(60) == 0, server.stderr.read() if server.stderr else ""
    after = _games(data)
    assert after[: len(before)] == before, "a stored game was lost or changed"
    played = _rows(data, "SELECT m.games, COUNT(g.id) FROM matches m JOIN games g"
                   " ON g.match_id = m.id GROUP BY m.id")  # fmt: skip
    assert all(count <= games for games, count in played), "a game stored twice"
    assert all(g[2] < 2 for g in after)


def test_a_new_bot_joins_and_a_withdrawn_bot_leaves_without_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _add(data, tmp_path, "a")  # alone: nobody to play until b comes
    args = argparse.Namespace(
        ladder_name="ladder", concurrency=2, **{f"ladder_{k}": None for k in (
            "games_per_match", "seed", "action_ms", "bank_ms", "placement_matches",
            "placement_in_play", "max_repeat")},
    )  # fmt: skip
    with Store.open(data) as store:
        ladder = prepare_ladder(store, args)
        runner = LadderRunner(store, ladder, concurrency=2)
        thread = threading.Thread(target=runner.run)
        thread.start()
        try:
            time.sleep(1)
            assert _rows(data, "SELECT COUNT(*) FROM matches") == [(0,)]
            _add(data, tmp_path, "b")
            _wait("a game", lambda: len(_games(data)) >= 1)
            _add(data, tmp_path, "c")  # submitted while the ladder runs
            c_id = _rows(data, "SELECT MAX(id) FROM bot_versions")[0][0]
            _wait(
                "c's placement",
                lambda: (
                    _rows(data, f"SELECT COUNT(*) FROM games WHERE {c_id} IN (seat0_id, seat1_id)")[
                        0
                    ][0]
                    >= 2
                ),
            )
            set_withdrawn(store, "a", True)
            a_id = _rows(data, "SELECT v.id FROM bot_versions v JOIN bots b ON b.id = v.bot_id"
                         " WHERE b.name = 'a'")[0][0]  # fmt: skip
            since = _rows(data, "SELECT MAX(id) FROM matches")[0][0]
            _wait(
                "four more matches",
                lambda: _rows(data, f"SELECT COUNT(*) FROM matches WHERE id > {since}")[0][0] >= 4,
            )
        finally:
            runner.stop()
            thread.join(60)
        later = _rows(data, f"SELECT first_id, second_id FROM matches WHERE id > {since}")
        assert all(a_id not in pair for pair in later), "a withdrawn bot was scheduled"
        assert get_version(store, "c").games >= 2
    assert not thread.is_alive()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--ladder-games-per-match", "3"], "games_per_match must be even"),
        (["--ladder-max-repeat", "0"], "max_repeat must be a whole number from 1"),
        (["--ladder-name", "bad name"], "--ladder-name 'bad name'"),
    ],
    ids=["odd-games", "no-repeat", "bad-name"],
)
def test_bad_ladder_flags_are_refused_in_one_line_and_nothing_is_stored(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--ladder", *flags,
         "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert _rows(tmp_path / "data", "SELECT COUNT(*) FROM tournaments") == [(0,)]


def test_settings_given_once_are_kept_and_a_flag_replaces_one(tmp_path: Path) -> None:
    data = tmp_path / "data"
    args = argparse.Namespace(
        ladder_name="ladder", concurrency=3, **{f"ladder_{k}": None for k in (
            "games_per_match", "seed", "action_ms", "bank_ms", "placement_matches",
            "placement_in_play", "max_repeat")},
    )  # fmt: skip
    with Store.open(data) as store:
        first = argparse.Namespace(**{**vars(args), "ladder_max_repeat": 2})
        ladder = prepare_ladder(store, first)
        second = {**vars(args), "concurrency": None, "ladder_games_per_match": 4}
        again = prepare_ladder(store, argparse.Namespace(**second))
        assert again == ladder
        config, settings = ladder_settings(store, ladder)
    assert config.games_per_match == 4
    assert (settings["max_repeat"], settings["concurrency"]) == (2, 3)
