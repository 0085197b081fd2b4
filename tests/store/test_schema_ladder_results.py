"""Schema v9 -> the ladder's results: each ladder version's games won, drawn and lost are
counted from its stored games, and from then on kept with every game stored."""

from __future__ import annotations

import random
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.store import RECENT_KEPT, Store
from arena.store.schema import CURRENT_VERSION, MIGRATIONS
from arena.store.totals import read_ladder_totals
from tests.store.ladder_history import history_totals
from tests.store.test_schema_v9 import LADDER, make_v8, matches_strategy


def make_v9(path: Path, matches: list[tuple[int, int, int]], versions: int, seed: int) -> None:
    """``make_v8``'s store taken to v9, its games won by either seat or drawn at random."""
    make_v8(path, matches, versions)
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("BEGIN")
        step = MIGRATIONS[8]
        assert callable(step)
        step(db)
        draw = random.Random(seed)
        for (game_id,) in db.execute("SELECT id FROM games").fetchall():
            winner = draw.choice((0, 1, None))
            db.execute("UPDATE games SET winner_seat = ? WHERE id = ?", (winner, game_id))
        db.execute("PRAGMA user_version = 9")
        db.execute("COMMIT")


def columns_of(path: Path) -> set[str]:
    with closing(sqlite3.connect(path)) as db:
        return {r[1] for r in db.execute("PRAGMA table_info(ladder_totals)")}


@pytest.mark.slow  # long: many generated cases
@settings(max_examples=25, deadline=None)
@given(matches_strategy, st.integers(1, 5), st.integers(0, 2**32))
def test_a_v9_ladder_gets_the_results_its_games_give(
    tmp_path_factory: pytest.TempPathFactory,
    drawn: list[tuple[int, int, int]],
    versions: int,
    seed: int,
) -> None:
    """Control: the v9 store has no results; after opening, a result moved by one differs."""
    data = tmp_path_factory.mktemp("data")
    matches = [(a % versions, (a + s) % versions, g) for a, s, g in drawn if versions > 1]
    make_v9(data / "arena.db", matches, versions, seed)
    assert "wins" not in columns_of(data / "arena.db")  # the control: v9 keeps none
    with Store.open(data), closing(sqlite3.connect(data / "arena.db")) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
        stored = read_ladder_totals(db, LADDER)
        assert stored == history_totals(db, LADDER, RECENT_KEPT)
        played = sum(t.games for t in stored.values())
        assert sum(t.wins + t.draws + t.losses for t in stored.values()) == played
        if stored:  # the control: the comparison sees a result moved by one
            db.execute("UPDATE ladder_totals SET wins = wins + 1")
            assert read_ladder_totals(db, LADDER) != history_totals(db, LADDER, RECENT_KEPT)
