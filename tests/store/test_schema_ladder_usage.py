"""The schema step that keeps the ladder's runner time: a store from the step before gets each
ladder version's time charged from its stored games, as the running totals would have
charged them one by one."""

from __future__ import annotations

import math
import sqlite3
from contextlib import closing
from pathlib import Path

from arena.store import CURRENT_VERSION, LadderUsage, Store
from arena.store.schema import MIGRATIONS, _ladder_usage, run_step
from arena.store.totals import read_ladder_usage
from arena.store.usage import add_charge, game_charges

STEP = MIGRATIONS.index(_ladder_usage)
LADDER, CUP = 1, 2
# (match id, tournament, round, first, second)
MATCHES = [(1, LADDER, 1, 1, 2), (2, LADDER, 2, 2, 3), (3, CUP, 1, 1, 3), (4, LADDER, 3, 1, 3)]
# (game id, match id, index, seat0, seat1, time0_ms, time1_ms, started_at, finished_at)
GAMES = [
    (1, 1, 0, 1, 2, 900.0, 40.0, "2026-12-06T10:00:00.000+00:00", "2026-12-06T10:00:01.000+00:00"),
    (2, 1, 1, 2, 1, 30.0, 800.0, None, "2026-12-06T10:00:03.000+00:00"),
    (3, 2, 0, 2, 3, 50.0, 60.0, "2026-12-06T10:00:04.000+00:00", "2026-12-06T10:00:04.500+00:00"),
    (4, 3, 0, 1, 3, 700.0, 70.0, None, "2026-12-06T10:00:05.000+00:00"),  # the cup's: not charged
    (5, 4, 0, 3, 1, 20.0, 1000.0, "2026-12-06T10:00:06.000+00:00", "garbled"),
]


def _store_before(data: Path) -> None:
    """A store at the step before the ladder's runner time, with a ladder and a cup."""
    data.mkdir()
    with closing(sqlite3.connect(data / "arena.db")) as db:
        for migration in MIGRATIONS[:STEP]:
            run_step(db, migration)
        for bot in (1, 2, 3):
            db.execute(
                "INSERT INTO bots (id, name, created_at) VALUES (?, ?, 't')", (bot, f"b{bot}")
            )
            db.execute(
                "INSERT INTO bot_versions (id, bot_id, version, directory, command, runtime,"
                " created_at, mu, sigma) VALUES (?, ?, 'v', 'd', '[]', 'python', 't', 25, 8)",
                (bot, bot),
            )
        for tid, name, kind in ((LADDER, "ladder", "ladder"), (CUP, "cup", "round_robin")):
            db.execute(
                "INSERT INTO tournaments (id, name, format, status, config, created_at, secret)"
                " VALUES (?, ?, ?, 'running', '{}', 't', x'00')",
                (tid, name, kind),
            )
        db.executemany(
            "INSERT INTO matches (id, tournament_id, round, first_id, second_id, games, seed)"
            " VALUES (?, ?, ?, ?, ?, 2, 0)",
            MATCHES,
        )
        db.executemany(
            "INSERT INTO games (id, match_id, game_index, seat0_id, seat1_id, winner_seat, reason,"
            " status0, status1, actions, time0_ms, time1_ms, record, started_at, finished_at)"
            " VALUES (?, ?, ?, ?, ?, 0, 'points', 'ok', 'ok', 5, ?, ?, '{}', ?, ?)",
            GAMES,
        )
        for version in (1, 2, 3):  # the totals the step before kept (only their rows matter)
            db.execute(
                "INSERT INTO ladder_totals (tournament_id, bot_version_id, matches, last_match,"
                " in_play, games, recent) VALUES (?, ?, 1, 1, 0, 1, '[]')",
                (LADDER, version),
            )
        db.execute(f"PRAGMA user_version = {STEP}")
        db.commit()


def _expected() -> dict[int, LadderUsage]:
    """Each ladder version's time, its ladder games charged one by one as the store charges
    each game it stores, as of the ladder's clock then (every charge before it)."""
    ladder = {m[0] for m in MATCHES if m[1] == LADDER}
    kept: dict[int, LadderUsage] = {}
    now = 0.0
    for _, match, _, seat0, seat1, t0, t1, started, finished in GAMES:
        if match not in ladder:
            continue
        charges = game_charges((t0, t1), started, finished)
        for version, charge in zip((seat0, seat1), charges, strict=True):
            old = kept.get(version, LadderUsage())
            used, at = add_charge(old.used_ms, old.used_at, charge, now)
            kept[version] = LadderUsage(used, at, old.charged_ms + charge, old.games + 1)
        now += sum(charges)
    return kept


def test_a_store_from_the_step_before_gets_its_ladder_time_from_its_games(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    _store_before(data)
    with closing(sqlite3.connect(data / "arena.db")) as db:  # the control: none kept before
        assert "used_ms" not in {r[1] for r in db.execute("PRAGMA table_info(ladder_totals)")}
    with Store.open(data):
        pass
    with closing(sqlite3.connect(data / "arena.db")) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
        stored = read_ladder_usage(db, LADDER)
    expected = _expected()
    assert set(stored) == set(expected) == {1, 2, 3}
    for version, usage in stored.items():
        want = expected[version]
        assert math.isclose(usage.used_at, want.used_at)
        assert math.isclose(usage.used_ms, want.used_ms)
        assert math.isclose(usage.charged_ms, want.charged_ms)
    # the first game: 1000 ms of wall time, 940 of it thought: each seat is charged 30 more
    assert math.isclose(expected[2].charged_ms, 40 + 30 + 30 + 50 + (500 - 110) / 2)
    # the cup's game is no ladder time; a garbled finish charges the thinking only
    assert math.isclose(expected[1].charged_ms, 900 + 30 + 800 + 1000)
    assert stored[1].used_ms < stored[1].charged_ms  # older charges count for less
    assert math.isclose(stored[3].used_at, sum(u.charged_ms for u in stored.values()) - 1020)
