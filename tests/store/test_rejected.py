"""Refused games from Ray nodes: kept per tournament with their node, never as games."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from arena.store import (
    CURRENT_VERSION,
    Store,
    TournamentConfig,
    add_bot_version,
    add_rejected_game,
    list_matches,
    rejected_games,
)
from arena.store.rejected import MAX_PROBLEM_CHARS
from arena.store.schema import MIGRATIONS, REJECTED_GAMES
from arena.tournament.policy.rounds import create_tournament

from .conftest import MakeBot


def _two_cups(store: Store, make_bot: MakeBot) -> tuple[int, int, int, int]:
    """Two tournaments of bots a and b: their ids and a match id of each."""
    for name in ("a", "b"):
        add_bot_version(store, make_bot(name, f"print({name!r})\n"))
    first = create_tournament(store, "one", "round_robin", ["a", "b"], TournamentConfig())
    second = create_tournament(store, "two", "round_robin", ["a", "b"], TournamentConfig())
    return (first.id, list_matches(store, first.id)[0].id,
            second.id, list_matches(store, second.id)[0].id)  # fmt: skip


def test_a_refused_game_is_kept_with_its_node_under_its_tournament_only(
    store: Store, make_bot: MakeBot
) -> None:
    one, match_one, two, match_two = _two_cups(store, make_bot)
    problem = "game 3: the deal is not the one its seed derives"
    add_rejected_game(store, match_id=match_one, game_index=3, node_ip="10.0.0.2",
                      node_id="ab" * 28, problem=problem)  # fmt: skip
    add_rejected_game(store, match_id=match_two, game_index=0, node_ip="10.0.0.3",
                      node_id="cd" * 28, problem="x" * (MAX_PROBLEM_CHARS + 50))  # fmt: skip
    [kept] = rejected_games(store, one)
    assert (kept.match_id, kept.game_index, kept.node_ip, kept.node_id) == (
        match_one, 3, "10.0.0.2", "ab" * 28)
    assert kept.problem == problem
    [other] = rejected_games(store, two)
    assert other.node_ip == "10.0.0.3" and len(other.problem) == MAX_PROBLEM_CHARS
    with closing(sqlite3.connect(store.data_dir / "arena.db")) as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 0


def test_the_migration_adds_the_table_to_a_database_of_the_version_before(
    tmp_path: Path, make_bot: MakeBot
) -> None:
    """A database one step before ``rejected_games`` keeps its tournaments and gains it."""
    data = tmp_path / "data"
    with Store.open(data) as store:
        one, match_one, _two, _match_two = _two_cups(store, make_bot)
    before = MIGRATIONS.index(REJECTED_GAMES)
    with closing(sqlite3.connect(data / "arena.db")) as db:
        db.execute("DROP TABLE rejected_games")
        for column in ("wins", "draws", "losses"):  # and the ladder's W/D/L, the step after
            db.execute(f"ALTER TABLE ladder_totals DROP COLUMN {column}")
        for table in ("play_games", "play_people", "play_bots"):  # and the people at /play
            db.execute(f"DROP TABLE {table}")
        db.execute("ALTER TABLE bots DROP COLUMN withdrawn_by")  # and who withdrew a bot
        for column in ("used_ms", "used_at", "charged_ms"):  # and the ladder's runner time
            db.execute(f"ALTER TABLE ladder_totals DROP COLUMN {column}")
        for column in ("startup0_ms", "startup1_ms"):  # and the games' start-up times
            db.execute(f"ALTER TABLE games DROP COLUMN {column}")
        db.execute("DROP TABLE ladder_owners")  # and who is on the ladder
        db.execute(f"PRAGMA user_version = {before}")
        db.commit()
    with Store.open(data) as store:
        add_rejected_game(store, match_id=match_one, game_index=1, node_ip="10.0.0.2",
                          node_id="ef" * 28, problem="forged")  # fmt: skip
        assert [r.game_index for r in rejected_games(store, one)] == [1]
        assert len(list_matches(store, one)) == 1
    with closing(sqlite3.connect(data / "arena.db")) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
