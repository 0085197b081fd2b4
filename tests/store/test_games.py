"""Tournaments and games: a finished game is stored with its rating update, once."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace

import pytest

from arena.referee.types import BotStatus, GameReport
from arena.store import (
    NotFoundError,
    Store,
    StoreError,
    TournamentConfig,
    add_bot_version,
    bot_failures,
    game_record,
    game_stderr,
    get_bot,
    get_tournament,
    leaderboard,
    list_games,
    list_matches,
    think_ms_per_game,
)
from arena.tournament.policy.config import TournamentError
from arena.tournament.policy.results import store_game, tournament_crosstable, tournament_standings
from arena.tournament.policy.rounds import create_tournament
from arena.tournament.rating.ratings import Rating, rate_game

from .conftest import MakeBot


def _report(
    index: int,
    seats: tuple[str, str],
    winner: str | None,
    statuses: dict[str, BotStatus] | None = None,
) -> GameReport:
    return GameReport(
        index=index, bots_by_seat=seats, winner=winner,
        reason="points" if winner else "draw", statuses=statuses or {},
        actions=42, time_ms={seats[0]: 10.0, seats[1]: 12.5},
        record={"format": "kahuna-record/1", "deal": [], "actions": [], "index": index},
    )  # fmt: skip


@pytest.fixture
def three_bots(store: Store, make_bot: MakeBot) -> list[str]:
    for name in ("a", "b", "c"):
        add_bot_version(store, make_bot(name, f"print({name!r})\n"))
    return ["a", "b", "c"]


def _snapshot(store: Store) -> list[tuple[object, ...]]:
    db = sqlite3.connect(store.data_dir / "arena.db")
    rows = []
    for table in ("bots", "bot_versions", "tournaments", "matches", "games", "rating_history"):
        rows += [(table, *r) for r in db.execute(f"SELECT * FROM {table} ORDER BY rowid")]
    return rows


def test_round_robin_is_scheduled_whole(store: Store, three_bots: list[str]) -> None:
    t = create_tournament(
        store, "rr", "round_robin", three_bots, TournamentConfig(games_per_match=4)
    )
    matches = list_matches(store, t.id)
    assert len(matches) == 3 and all(m.games == 4 for m in matches)
    assert {frozenset((m.first, m.second)) for m in matches} == {
        frozenset(p) for p in (("a", "b"), ("a", "c"), ("b", "c"))
    }
    assert (t.games_scheduled, t.games_played, t.status) == (12, 0, "created")


TC, TE, NF = TournamentConfig, TournamentError, NotFoundError  # the table below fits


@pytest.mark.parametrize(
    ("name", "fmt", "bots", "config", "message", "error"),
    [
        ("bad name!", "swiss", ["a", "b"], TC(), "tournament name", TE),
        ("t", "knockout", ["a", "b"], TC(), "format must be", TE),
        ("t", "swiss", ["a"], TC(), "at least two", TE),
        ("t", "swiss", ["a", "a"], TC(), "at least two", TE),
        ("t", "swiss", ["a", "zz"], TC(), "no bot 'zz'", NF),
        ("t", "swiss", ["a", "b"], TC(games_per_match=0), "games_per_match", TE),
        ("t", "swiss", ["a", "b"], TC(rounds=-1), "rounds", TE),
        ("t", "swiss", ["a", "b"], TC(rounds=2), "2 bots has at most 1 round", TE),
        ("t", "swiss", ["a", "b", "c"], TC(rounds=4), "at most 3 round", TE),
        ("t", "round_robin", ["a", "b"], TC(rounds=1), "Swiss tournaments only", TE),
    ],
    ids=["name", "format", "one-bot", "duplicate", "unknown-bot", "zero-games", "rounds",
         "rounds-over-2-bots", "rounds-over-3-bots", "rounds-round-robin"],
)
def test_bad_tournaments_are_refused_and_nothing_is_stored(
    store: Store, three_bots: list[str], name: str, fmt: str, bots: list[str],
    config: TournamentConfig, message: str, error: type[Exception],
) -> None:  # fmt: skip
    before = _snapshot(store)
    with pytest.raises(error, match=message):
        create_tournament(store, name, fmt, bots, config)
    assert _snapshot(store) == before


def test_a_game_is_stored_with_its_rating_update_and_history(
    store: Store, three_bots: list[str]
) -> None:
    t = create_tournament(store, "rr", "round_robin", three_bots, TournamentConfig())
    match = next(m for m in list_matches(store, t.id) if {m.first, m.second} == {"a", "b"})
    game_id = store_game(store, match.id, _report(0, ("b", "a"), "b"))
    assert game_id is not None
    expected_b, expected_a = rate_game(Rating(), Rating(), winner=0)
    rows = {r.entry.bot: r.entry for r in leaderboard(store)}
    assert (rows["b"].mu, rows["b"].sigma) == pytest.approx((expected_b.mu, expected_b.sigma))
    assert (rows["a"].mu, rows["a"].sigma) == pytest.approx((expected_a.mu, expected_a.sigma))
    assert (rows["b"].wins, rows["a"].losses, rows["c"].games) == (1, 1, 0)
    assert next(r.entry.bot for r in leaderboard(store)) == "b"
    assert [p.game_id for p in get_bot(store, "a").history] == [game_id]
    game = list_games(store, tournament_id=t.id)[0]
    assert (game.bots, game.winner, game.reason, game.round) == (
        ("b", "a"),
        "b",
        "points",
        match.round,
    )
    assert game_record(store, game_id)["index"] == 0


def test_a_game_stored_twice_is_counted_once(store: Store, three_bots: list[str]) -> None:
    t = create_tournament(store, "rr", "round_robin", three_bots, TournamentConfig())
    match = list_matches(store, t.id)[0]
    seats = (match.first, match.second)
    assert store_game(store, match.id, _report(0, seats, seats[0])) is not None
    before = _snapshot(store)
    assert store_game(store, match.id, _report(0, seats, seats[1])) is None
    assert _snapshot(store) == before


def test_match_finishes_with_its_last_game_and_failures_are_counted(
    store: Store, three_bots: list[str]
) -> None:
    t = create_tournament(store, "rr", "round_robin", three_bots, TournamentConfig())
    match = list_matches(store, t.id)[0]
    x, y = match.first, match.second
    store_game(store, match.id, _report(0, (x, y), y, {x: BotStatus.TIMEOUT}))
    assert list_matches(store, t.id)[0].finished_at is None
    store_game(store, match.id, _report(1, (y, x), None))
    done = list_matches(store, t.id)[0]
    assert done.finished_at is not None and done.games_played == (0, 1)
    row = {r.entry.bot: r.entry for r in leaderboard(store)}[x]
    assert (row.games, row.draws, row.losses, row.timeouts) == (2, 1, 1, 1)
    assert row.rate(row.timeouts) == 0.5
    assert get_tournament(store, t.id).games_played == 2


def test_a_failed_bots_stderr_is_stored_apart_from_the_public_record(
    store: Store, three_bots: list[str]
) -> None:
    t = create_tournament(store, "rr", "round_robin", three_bots, TournamentConfig())
    match = list_matches(store, t.id)[0]
    x, y = match.first, match.second
    report = replace(
        _report(0, (y, x), y, {x: BotStatus.CRASH}), stderr={x: "secret plans\nBoom"}
    )
    game_id = store_game(store, match.id, report)
    assert game_id is not None
    assert "secret" not in json.dumps(game_record(store, game_id))
    assert game_stderr(store, game_id) == {1: "secret plans\nBoom"}
    [failure] = bot_failures(store, x)
    assert (failure.game_id, failure.seat, failure.status) == (game_id, 1, "crash")
    assert failure.stderr == "secret plans\nBoom" and failure.version
    assert bot_failures(store, y) == []
    store_game(store, match.id, _report(1, (x, y), None))
    assert [f.game_id for f in bot_failures(store, x)] == [game_id]


@pytest.mark.parametrize(
    ("index", "seats"), [(2, ("a", "b")), (-1, ("a", "b")), (0, ("a", "c"))],
    ids=["index-past-end", "negative-index", "wrong-bot"],
)  # fmt: skip
def test_a_game_that_is_not_the_matchs_is_refused_and_nothing_changes(
    store: Store, three_bots: list[str], index: int, seats: tuple[str, str]
) -> None:
    t = create_tournament(store, "rr", "round_robin", ["a", "b"], TournamentConfig())
    match = list_matches(store, t.id)[0]
    before = _snapshot(store)
    with pytest.raises(StoreError, match="does not belong"):
        store_game(store, match.id, _report(index, seats, seats[0]))
    assert _snapshot(store) == before


def test_standings_and_crosstable_come_from_stored_games(
    store: Store, three_bots: list[str]
) -> None:
    t = create_tournament(store, "rr", "round_robin", three_bots, TournamentConfig())
    for match in list_matches(store, t.id):
        winner = min(match.first, match.second)  # alphabetical: a beats everyone
        store_game(store, match.id, _report(0, (match.first, match.second), winner))
        store_game(store, match.id, _report(1, (match.second, match.first), winner))
    standings = tournament_standings(store, t.id)
    assert [(s.bot, s.points) for s in standings] == [("a", 4.0), ("b", 2.0), ("c", 0.0)]
    assert tournament_crosstable(store, t.id)[("a", "c")] == 2.0


def test_a_leaderboard_row_never_mixes_versions(store: Store, make_bot: MakeBot) -> None:
    add_bot_version(store, make_bot("a"))
    add_bot_version(store, make_bot("b"))
    t = create_tournament(store, "one", "round_robin", ["a", "b"], TournamentConfig())
    m = list_matches(store, t.id)[0]
    store_game(store, m.id, _report(0, (m.first, m.second), "a"))
    add_bot_version(store, make_bot("a", "print('v2')\n"))
    rows = leaderboard(store)
    a_rows = [r.entry for r in rows if r.entry.bot == "a"]
    assert len(a_rows) == 2 and sorted(r.games for r in a_rows) == [0, 1]
    assert len(leaderboard(store, latest_only=True)) == 2


def test_think_time_per_game_is_the_mean_over_both_seats(
    store: Store, three_bots: list[str]
) -> None:
    assert think_ms_per_game(store) == {}
    t = create_tournament(store, "rr", "round_robin", three_bots, TournamentConfig())
    match = next(m for m in list_matches(store, t.id) if {m.first, m.second} == {"a", "b"})
    store_game(store, match.id, _report(0, ("a", "b"), "a"))  # a 10.0 ms, b 12.5 ms
    store_game(store, match.id, _report(1, ("b", "a"), "b"))  # b 10.0 ms, a 12.5 ms
    version = {name: get_bot(store, name).versions[0].version for name in three_bots}
    assert think_ms_per_game(store) == {
        ("a", version["a"]): pytest.approx(11.25),
        ("b", version["b"]): pytest.approx(11.25),
    }


def test_migrating_to_v4_moves_old_records_stderr_to_the_private_table(
    store: Store, three_bots: list[str]
) -> None:
    t = create_tournament(store, "rr", "round_robin", three_bots, TournamentConfig())
    match = list_matches(store, t.id)[0]
    x, y = match.first, match.second
    old_detail = "process exited with status 1; stderr ends: my plans: secret | Boom; bye"
    record = {"format": "kahuna-record/1", "match": {"failures": [
        {"seat": 1, "bot": x, "status": "crash", "detail": old_detail}]}}  # fmt: skip
    report = replace(_report(0, (y, x), y, {x: BotStatus.CRASH}), record=record)
    game_id = store_game(store, match.id, report)
    db = sqlite3.connect(store.data_dir / "arena.db")  # as an arena before v4 stored it
    db.executescript(  # and without v5's secret, v6's ladder, v7's commitment, v8's reason,
        # v9's totals, the limits and token expiry, the games' public timing, rejected games,
        # the games people play at /play and their pool, the games' start-up times, the
        # ladder's owners
        "DROP TABLE ladder_owners;"
        " ALTER TABLE games DROP COLUMN startup0_ms; ALTER TABLE games DROP COLUMN startup1_ms;"
        " DROP TABLE play_games; DROP TABLE play_people; DROP TABLE play_bots;"
        " DROP TABLE user_limits; ALTER TABLE tokens DROP COLUMN expires_at;"
        " ALTER TABLE tokens DROP COLUMN revoked_at; ALTER TABLE bot_versions DROP COLUMN bytes;"
        " DROP TABLE rejected_games; DROP INDEX games_by_finish;"
        " ALTER TABLE games DROP COLUMN started_at;"
        " ALTER TABLE games DROP COLUMN action_ms;"
        " DROP TABLE ladder_totals; DROP TABLE tournament_games;"
        " ALTER TABLE tournaments DROP COLUMN games_played;"
        " ALTER TABLE tournaments DROP COLUMN games_scheduled;"
        " DROP TABLE game_stderr; ALTER TABLE tournaments DROP COLUMN secret;"
        " ALTER TABLE tournaments DROP COLUMN commitment;"
        " ALTER TABLE tournaments DROP COLUMN interrupted_reason;"
        " DROP TABLE ladders; DROP INDEX matches_by_tournament;"
        " ALTER TABLE bots DROP COLUMN withdrawn_by; ALTER TABLE bots DROP COLUMN withdrawn_at;"
        " PRAGMA user_version = 3;"
    )
    db.close()
    store.close()
    with Store.open(store.data_dir) as migrated:
        assert game_id is not None
        failure = game_record(migrated, game_id)["match"]["failures"][0]  # type: ignore[index]
        assert failure["detail"] == "process exited with status 1"
        assert game_stderr(migrated, game_id) == {1: "my plans: secret\nBoom; bye"}
        assert [f.stderr for f in bot_failures(migrated, x)] == ["my plans: secret\nBoom; bye"]
