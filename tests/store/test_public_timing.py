"""The schema step after v9: each stored game keeps when it began and when each action was
applied (from its live view), the spectator delay's clock; games stored before keep NULLs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from arena.store import (
    CURRENT_VERSION,
    Store,
    first_event_after,
    game_finished_at,
    in_play_at,
    stored_timing,
)
from arena.store.schema import MIGRATIONS, run_step


def _v9_database(data: Path) -> None:
    data.mkdir()
    db = sqlite3.connect(data / "arena.db")
    for step in MIGRATIONS[:9]:
        run_step(db, step)
    db.execute("INSERT INTO bots (id, name, created_at) VALUES (1, 'old', 't')")
    db.execute(
        "INSERT INTO bot_versions (id, bot_id, version, directory, command, runtime, created_at,"
        " mu, sigma) VALUES (7, 1, 'v', 'd', '[]', 'python', 't', 25, 8)"
    )
    db.execute(
        "INSERT INTO tournaments (id, name, format, status, config, created_at, secret)"
        " VALUES (3, 'cup', 'round_robin', 'finished', '{}', 't', x'00')"
    )
    db.execute(
        "INSERT INTO matches (id, tournament_id, round, first_id, second_id, games, seed)"
        " VALUES (11, 3, 1, 7, 7, 2, 5)"
    )
    db.execute(
        "INSERT INTO games (id, match_id, game_index, seat0_id, seat1_id, winner_seat, reason,"
        " status0, status1, actions, time0_ms, time1_ms, record, finished_at) VALUES"
        " (21, 11, 0, 7, 7, 0, 'points', 'ok', 'ok', 5, 1, 1, '{}',"
        " '2026-12-05T07:00:00.000+00:00')"
    )
    db.execute("PRAGMA user_version = 9")
    db.commit()
    db.close()


def test_a_v9_store_keeps_its_games_and_gives_them_no_times(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _v9_database(data)
    with Store.open(data) as store:
        timing = stored_timing(store, 11, 0)
        assert timing is not None
        assert (timing.game_id, timing.started_at, timing.action_ms) == (21, None, None)
        assert game_finished_at(store, 21) == "2026-12-05T07:00:00.000+00:00"
        before = "2026-12-05T06:59:00.000+00:00"
        assert first_event_after(store, before) == "2026-12-05T07:00:00.000+00:00"
        assert first_event_after(store, "2026-12-05T07:00:00.000+00:00") is None
        assert in_play_at(store, before) == []  # no start kept: never shown as in play
    check = sqlite3.connect(data / "arena.db")
    assert check.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
    indexes = {r[0] for r in check.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert "games_by_finish" in indexes
