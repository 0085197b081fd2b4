"""Schema v8 -> v9: the running totals are filled from the history, whole or not at all.

A v8 database is made as a v8 arena leaves it (its eight steps, then
the rows its writers stored: bots, versions, a ladder and a round robin with
matches and games, some unfinished). Opening it migrates it; the totals then
equal what the history gives (the reads from the history alone,
``tests/store/ladder_history.py``). A migration killed (SIGKILL) at any point
leaves v8 as it was, and the next open migrates it; a full disk or a
read-only store is refused with one line saying so, left at v8.
"""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.store import (
    RECENT_KEPT,
    LadderEntrantRow,
    Store,
    StoreError,
    get_tournament,
    ladder_entrants,
    list_games,
)
from arena.store.schema import CURRENT_VERSION, MIGRATIONS, _apply_next, run_step
from arena.store.totals import LadderTotals, read_ladder_totals
from arena.testing.examples import examples
from tests.server.test_disk_full import SmallDisk, small_disk
from tests.store.ladder_history import (
    history_entrants,
    history_games,
    history_totals,
    history_tournament_games,
    same_entrants,
)

LADDER, CUP = 1, 2


def make_v8(path: Path, matches: list[tuple[int, int, int]], versions: int) -> None:
    """A v8 database at ``path`` holding ``versions`` bot versions (one per bot), a ladder
    with ``matches`` (first, second, games stored of 2; indices into the versions) in
    order, and a round robin of the first two versions with one game stored."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")  # as arena's stores are
    db.execute("BEGIN")
    for step in MIGRATIONS[:8]:
        run_step(db, step)
    for i in range(1, versions + 1):
        db.execute("INSERT INTO bots (id, name, created_at) VALUES (?, ?, 't')", (i, f"b{i}"))
        db.execute(
            "INSERT INTO bot_versions (id, bot_id, version, directory, command, runtime,"
            " created_at, mu, sigma) VALUES (?, ?, 'v', 'd', '[]', 'python', 't', ?, 2)",
            (i, i, 20 + i),
        )  # fmt: skip
    for tid, name, kind in ((LADDER, "ladder", "ladder"), (CUP, "cup", "round_robin")):
        db.execute(
            "INSERT INTO tournaments (id, name, format, status, config, created_at, secret)"
            " VALUES (?, ?, ?, 'running', '{}', 't', x'00')",
            (tid, name, kind),
        )
    db.execute("INSERT INTO ladders VALUES (?, '{}', 't')", (LADDER,))
    played = [(LADDER, n, first + 1, second + 1, games) for n, (first, second, games) in
              enumerate(matches, start=1)]  # fmt: skip
    if versions >= 2:
        played.append((CUP, 1, 1, 2, 1))
    for tid, number, first, second, games in played:
        match_id = db.execute(
            "INSERT INTO matches (tournament_id, round, first_id, second_id, games, seed,"
            " finished_at) VALUES (?, ?, ?, ?, 2, 0, ?)",
            (tid, number, first, second, "t" if games == 2 else None),
        ).lastrowid  # fmt: skip
        for index in range(games):
            seats = (first, second)[:: 1 if index == 0 else -1]
            db.execute(
                "INSERT INTO games (match_id, game_index, seat0_id, seat1_id, winner_seat,"
                " reason, status0, status1, actions, time0_ms, time1_ms, record, finished_at)"
                " VALUES (?, ?, ?, ?, 0, 'points', 'ok', 'ok', 3, 1, 1, '{}', 't')",
                (match_id, index, *seats),
            )  # fmt: skip
    db.execute("PRAGMA user_version = 8")
    db.execute("COMMIT")
    db.close()


@dataclass(frozen=True)
class History:
    """What the history alone gives (``tests/store/ladder_history.py``): the figures the
    store's totals and reads must equal."""

    totals: dict[int, LadderTotals]
    entrants: list[LadderEntrantRow]
    tournament_games: dict[int, tuple[int, int]]  # tournament -> (played, scheduled)
    game_ids: dict[int, list[int]]  # tournament -> its games, as listed

    @classmethod
    def read(cls, db: sqlite3.Connection, recent: int = 5) -> History:
        return cls(
            history_totals(db, LADDER, RECENT_KEPT),
            history_entrants(db, LADDER, recent),
            {tid: history_tournament_games(db, tid) for tid in (LADDER, CUP)},
            {tid: [r[0] for r in history_games(db, tid, limit=100_000)] for tid in (LADDER, CUP)},
        )


def assert_totals_from_history(
    data: Path, recent: int = 5, history: History | None = None
) -> None:
    """Open ``data`` (migrating it); its totals and what is read from them are the history's:
    ``history``, read before from an untouched copy of the same store, or else read here."""
    with Store.open(data) as store, closing(sqlite3.connect(data / "arena.db")) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        expected = history if history is not None else History.read(db, recent)
        assert read_ladder_totals(db, LADDER) == expected.totals
        assert same_entrants(ladder_entrants(store, LADDER, recent=recent), expected.entrants)
        for tid in (LADDER, CUP):
            row = get_tournament(store, tid)
            assert (row.games_played, row.games_scheduled) == expected.tournament_games[tid]
            games = list_games(store, tournament_id=tid, limit=100_000)
            assert [g.id for g in games] == expected.game_ids[tid]


def version_of(path: Path) -> int:
    with closing(sqlite3.connect(path)) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def tables_of(path: Path) -> set[str]:
    with closing(sqlite3.connect(path)) as db:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master")}


matches_strategy = st.lists(
    st.tuples(st.integers(0, 4), st.integers(1, 4), st.integers(0, 2)), max_size=40
)


@pytest.mark.slow  # long: a simulation or many generated cases
@settings(max_examples=examples(30), deadline=None)
@given(matches_strategy, st.integers(1, 5))
def test_a_v8_store_migrates_to_totals_equal_to_its_history(
    tmp_path_factory: pytest.TempPathFactory, drawn: list[tuple[int, int, int]], versions: int
) -> None:
    """Any v8 ladder history (matches finished, half played and unplayed; a bot that played
    none; a round robin beside it). Control: before opening, there are no totals."""
    data = tmp_path_factory.mktemp("data")
    matches = [(a % versions, (a + s) % versions, g) for a, s, g in drawn if versions > 1]
    make_v8(data / "arena.db", matches, versions)
    assert "ladder_totals" not in tables_of(data / "arena.db")  # the control: v8 has none
    assert_totals_from_history(data)


def test_more_matches_than_the_opponents_kept(tmp_path: Path) -> None:
    """Only the latest RECENT_KEPT opponents are kept, newest first."""
    rng = random.Random(7)
    matches = [(rng.randrange(3), 3, 2) for _ in range(2 * RECENT_KEPT + 17)]
    make_v8(tmp_path / "arena.db", matches, 4)
    assert_totals_from_history(tmp_path, recent=RECENT_KEPT)
    with closing(sqlite3.connect(tmp_path / "arena.db")) as db:
        fourth = read_ladder_totals(db, LADDER)[4]
    assert fourth.matches == 2 * RECENT_KEPT + 17 and len(fourth.recent) == RECENT_KEPT
    assert fourth.recent[0] == matches[-1][0] + 1


_KILLER = """
import os, signal, sqlite3, sys
from arena.store.schema import migrate
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode = WAL")
db.execute("PRAGMA synchronous = FULL")
steps = 0
def step():
    global steps
    steps += 1
    if steps == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
    return 0
db.set_progress_handler(step, 100)
migrate(db)
"""


@pytest.fixture(scope="module")
def long_v8(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A v8 database with 20,000 ladder matches (its migration takes a while)."""
    rng = random.Random(3)
    path = tmp_path_factory.mktemp("long") / "arena.db"
    matches = [(rng.randrange(20), rng.randrange(1, 20), 2) for _ in range(20_000)]
    make_v8(path, [(a, (a + s) % 20, g) for a, s, g in matches], 20)
    return path


@pytest.fixture(scope="module")
def long_history(tmp_path_factory: pytest.TempPathFactory, long_v8: Path) -> History:
    """``long_v8``'s history, read once from a copy migrated without a fault: what each
    faulted store, once migrated, must give."""
    data = tmp_path_factory.mktemp("untouched")
    (data / "arena.db").write_bytes(long_v8.read_bytes())
    Store.open(data).close()
    with closing(sqlite3.connect(data / "arena.db")) as db:
        history = History.read(db)
    assert_totals_from_history(data, history=history)  # the untouched copy agrees with it
    return history


@pytest.fixture(scope="module")
def migration_steps(tmp_path_factory: pytest.TempPathFactory, long_v8: Path) -> int:
    """How many times SQLite's progress handler runs while ``long_v8`` migrates to v9 (the
    steps after it are not this test's)."""
    copy = tmp_path_factory.mktemp("count") / "arena.db"
    copy.write_bytes(long_v8.read_bytes())
    db = sqlite3.connect(copy, isolation_level=None)
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    db.set_progress_handler(count, 100)
    _apply_next(db)
    db.close()
    return steps[0]


@pytest.mark.slow
@pytest.mark.parametrize("share", [0.0, 0.05, 0.3, 0.6, 0.9, 0.999])
def test_a_migration_killed_at_any_point_leaves_v8_and_migrates_next_time(
    tmp_path: Path, long_v8: Path, long_history: History, migration_steps: int, share: float
) -> None:
    """The migrating process SIGKILLs itself once SQLite has run ``share`` of the
    migration's steps (by its progress handler). Control: it is killed every time."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "arena.db").write_bytes(long_v8.read_bytes())
    after = max(1, int(share * migration_steps))
    killed = subprocess.run(
        [sys.executable, "-c", _KILLER, str(data / "arena.db"), str(after)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert killed.returncode == -9, killed.stderr  # the control: it died mid-migration
    left = version_of(data / "arena.db")  # v8, or a later step's start when v9 committed
    assert 8 <= left < CURRENT_VERSION
    assert left > 8 or "ladder_totals" not in tables_of(data / "arena.db")
    assert_totals_from_history(data, history=long_history)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[SmallDisk]:
    with small_disk(tmp_path / "small") as mounted:
        yield mounted


@pytest.mark.slow
@pytest.mark.parametrize(
    ("free_kib", "message"),
    [
        (0, "cannot open the database: the data directory has no space left"),
        (36, f"cannot upgrade the database from schema v8 to v{CURRENT_VERSION}: the data"
         " directory has no space left ("),
        (36, "); free some, then retry; it is left at v8 as it was"),
    ],
    ids=["no-space-to-open", "space-runs-out-migrating", "space-runs-out-migrating-says-retry"],
)  # fmt: skip
def test_a_full_disk_refuses_the_migration_in_one_line_and_leaves_v8(
    disk: SmallDisk, long_v8: Path, long_history: History, free_kib: int, message: str
) -> None:
    """With no space at all SQLite cannot even make its -shm file (32 KiB); with 36 KiB
    it can, and the migration (33 KiB of WAL) runs out of space before its commit."""
    data = disk.root / "data"
    data.mkdir(mode=0o700)
    (data / "arena.db").write_bytes(long_v8.read_bytes())
    before = (data / "arena.db").read_bytes()
    disk.fill()
    os.truncate(disk.filler, disk.filler.stat().st_size - free_kib * 1024)
    with pytest.raises(StoreError) as refused:
        Store.open(data)
    assert "\n" not in str(refused.value)
    assert message in str(refused.value)
    assert (data / "arena.db").read_bytes() == before
    disk.free()
    assert_totals_from_history(data, history=long_history)


@pytest.mark.slow
def test_a_read_only_store_refuses_the_migration_in_one_line_and_is_left_alone(
    disk: SmallDisk, long_v8: Path, long_history: History
) -> None:
    data = disk.root / "data"
    data.mkdir(mode=0o700)
    (data / "bots").mkdir()
    (data / "arena.db").write_bytes(long_v8.read_bytes())
    before = (data / "arena.db").read_bytes()
    remount = ["mount", "-o", "remount,ro", str(disk.root)]
    subprocess.run(remount, check=True, capture_output=True)
    with pytest.raises(StoreError) as refused:
        Store.open(data)
    assert "\n" not in str(refused.value)
    assert "read-only" in str(refused.value).lower()
    assert (data / "arena.db").read_bytes() == before
    remount[2] = "remount,rw"
    subprocess.run(remount, check=True, capture_output=True)
    assert_totals_from_history(data, history=long_history)


@pytest.mark.slow
def test_a_read_only_database_file_refuses_the_migration_in_one_line(
    tmp_path: Path, long_v8: Path, long_history: History
) -> None:
    """The file alone mounted read-only (a writable directory: SQLite opens the file
    read-only and says so at the first write), as root may not be kept from writing by
    permissions."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "arena.db").write_bytes(long_v8.read_bytes())
    before = (data / "arena.db").read_bytes()
    target = str(data / "arena.db")
    bound = subprocess.run(["mount", "--bind", target, target], capture_output=True, text=True)
    if bound.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {bound.stderr.strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", target], check=True, capture_output=True)
        with pytest.raises(StoreError) as refused:
            Store.open(data)
    finally:
        subprocess.run(["umount", target], check=True, capture_output=True)
    assert "\n" not in str(refused.value)
    assert (
        f"cannot upgrade the database from schema v8 to v{CURRENT_VERSION}: the database is"
        " read-only"
        " (make it writable, then open it again); it is left at v8 as it was"
    ) in str(refused.value)
    assert (data / "arena.db").read_bytes() == before
    assert_totals_from_history(data, history=long_history)
