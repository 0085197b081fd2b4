"""People's games at /play in the store: each a one-game tournament kept out of the
tournament lists (still stored and shown by id), and the people's pool, which a rated
game updates in the game's own transaction while the bots' ratings never move."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from arena.referee.types import BotStatus, GameReport
from arena.store import (
    NotFoundError,
    PlannedMatch,
    PlannedRound,
    Store,
    StoreError,
    TournamentConfig,
    add_bot_version,
    get_tournament,
    get_version,
    insert_tournament,
    latest_version_ids,
    list_games,
    list_matches,
    list_tournaments,
    register_remote_bot,
)
from arena.store.models import MuSigma, SeatFailures, TournamentFormat
from arena.store.play import (
    PlaySeat,
    insert_play_tournament,
    is_play_tournament,
    people_pool,
    play_games,
    record_play_game,
)
from arena.store.schema import CURRENT_VERSION, MIGRATIONS, PLAY_POOL, run_step

from .conftest import MakeBot

RATED = None
NONE = (SeatFailures(), SeatFailures())


def _shift(person: MuSigma, bot: MuSigma, winner: int | None) -> tuple[MuSigma, MuSigma]:
    """A visible people's update: the winner gains 1, the loser loses 1 (a draw: nothing)."""
    gain = 0.0 if winner is None else 1.0 if winner == 0 else -1.0
    return (person[0] + gain, person[1] - 0.5), (bot[0] - gain, bot[1] - 0.5)


def _report(seats: tuple[str, str], winner: str | None,
            statuses: dict[str, BotStatus] | None = None) -> GameReport:  # fmt: skip
    return GameReport(
        index=0, bots_by_seat=seats, winner=winner, reason="points" if winner else "draw",
        statuses=statuses or {}, actions=30, time_ms={seats[0]: 5.0, seats[1]: 6.0},
        record={"format": "kahuna-record/1", "deal": [], "actions": []},
    )  # fmt: skip


@pytest.fixture
def people(store: Store, make_bot: MakeBot) -> Store:
    add_bot_version(store, make_bot("rnd"))
    add_bot_version(store, make_bot("mine"), owner="ann")
    register_remote_bot(store, "human-ann", owner="ann")
    register_remote_bot(store, "human-bob", owner="bob")
    return store


def _table(store: Store, user: str, bot: str, seat: int, reason: str | None,
           name: str = "") -> int:  # fmt: skip
    """A play table's tournament as /play stores it; its match id."""
    human = f"human-{user}"
    first, second = (human, bot) if seat == 0 else (bot, human)
    entrants = latest_version_ids(store, [first, second])
    row = insert_play_tournament(
        store, name or f"play-{user}-{len(list_tournaments(store, with_play=True))}", entrants,
        TournamentConfig(games_per_match=1),
        [PlannedRound(1, (PlannedMatch(first, second, 1, 0),))],
        PlaySeat(user, entrants[bot], seat, reason),
    )  # fmt: skip
    return list_matches(store, row.id)[0].id


def _ratings(store: Store, *names: str) -> list[tuple[float, float, int]]:
    return [(v.mu, v.sigma, v.games) for v in (get_version(store, n) for n in names)]


@pytest.mark.parametrize(("seat", "winner", "result", "person", "bot"), [
    (0, "human-ann", "win", (26.0, 25 / 3 - 0.5, 1, 1, 0, 0), (24.0, 1, 0, 0, 1)),
    (1, "human-ann", "win", (26.0, 25 / 3 - 0.5, 1, 1, 0, 0), (24.0, 1, 0, 0, 1)),
    (1, "rnd", "loss", (24.0, 25 / 3 - 0.5, 1, 0, 0, 1), (26.0, 1, 1, 0, 0)),
    (0, None, "draw", (25.0, 25 / 3 - 0.5, 1, 0, 1, 0), (25.0, 1, 0, 1, 0)),
], ids=["win-seat0", "win-seat1", "loss", "draw"])  # fmt: skip
def test_a_rated_game_moves_the_peoples_pool_and_never_the_bots_ratings(
    people: Store, seat: int, winner: str | None, result: str,
    person: tuple[float, ...], bot: tuple[float, ...],
) -> None:  # fmt: skip
    match_id = _table(people, "ann", "rnd", seat, RATED)
    seats = ("human-ann", "rnd") if seat == 0 else ("rnd", "human-ann")
    before = _ratings(people, "rnd", "human-ann")
    game_id = record_play_game(people, match_id, _report(seats, winner), failures=NONE,
                               people=_shift)  # fmt: skip
    assert game_id is not None
    assert [(mu, sigma) for mu, sigma, _ in _ratings(people, "rnd", "human-ann")] == [
        (mu, sigma) for mu, sigma, _ in before]  # the bots' pool: unmoved
    persons, bots = people_pool(people)
    [ann] = persons
    assert (ann.name, ann.version) == ("ann", None)
    assert (ann.mu, ann.sigma, ann.games, ann.wins, ann.draws, ann.losses) == person
    [rnd] = bots
    assert (rnd.name, rnd.version) == ("rnd", get_version(people, "rnd").version)
    assert (rnd.mu, rnd.games, rnd.wins, rnd.draws, rnd.losses) == bot
    [row] = play_games(people, "ann")
    assert (row.game_id, row.result, row.rated, row.seat, row.bot) == (
        game_id, result, True, seat, "rnd")
    assert row.person_before == (25.0, 25 / 3) and row.person_after == (person[0], person[1])


def test_an_abandoned_game_is_a_rated_loss(people: Store) -> None:
    """The person's seat timed out (left the page): the bot won; rated as that loss."""
    match_id = _table(people, "ann", "rnd", 0, RATED)
    report = _report(("human-ann", "rnd"), "rnd", {"human-ann": BotStatus.TIMEOUT})
    record_play_game(people, match_id, report, failures=NONE, people=_shift)
    [row] = play_games(people, "ann")
    assert (row.result, row.rated) == ("loss", True)
    assert people_pool(people)[0][0].losses == 1


def test_an_unrated_table_stays_unrated_and_a_rated_one_can_be_unrated_with_a_reason(
    people: Store,
) -> None:
    unrated = _table(people, "ann", "rnd", 0, "duplicate mode")
    record_play_game(people, unrated, _report(("human-ann", "rnd"), "human-ann"),
                     failures=NONE, people=_shift)  # fmt: skip
    rated = _table(people, "ann", "rnd", 1, RATED)
    record_play_game(people, rated, _report(("rnd", "human-ann"), "human-ann"),
                     failures=NONE, people=None, unrated_reason="the bot crashed")  # fmt: skip
    assert people_pool(people) == ([], [])
    assert [(r.rated, r.unrated_reason) for r in play_games(people, "ann")] == [
        (False, "the bot crashed"), (False, "duplicate mode")]
    with pytest.raises(StoreError, match="unrated_reason"):
        record_play_game(people, rated, _report(("rnd", "human-ann"), None),
                         failures=NONE, people=None)  # fmt: skip


def test_a_game_is_rated_once(people: Store) -> None:
    match_id = _table(people, "ann", "rnd", 0, RATED)
    report = _report(("human-ann", "rnd"), "human-ann")
    assert record_play_game(people, match_id, report, failures=NONE, people=_shift) is not None
    assert record_play_game(people, match_id, report, failures=NONE, people=_shift) is None
    assert people_pool(people)[0][0].games == 1


def test_only_a_play_match_is_recorded_as_one(people: Store) -> None:
    row = insert_tournament(
        people, "cup", TournamentFormat.ROUND_ROBIN,
        latest_version_ids(people, ["rnd", "mine"]),
        TournamentConfig(games_per_match=1),
        [PlannedRound(1, (PlannedMatch("rnd", "mine", 1, 0),))],
    )  # fmt: skip
    match_id = list_matches(people, row.id)[0].id
    with pytest.raises(NotFoundError, match="not a game at /play"):
        record_play_game(people, match_id, _report(("rnd", "mine"), "rnd"), failures=NONE,
                         people=_shift)  # fmt: skip
    assert list_games(people) == []


def test_play_tournaments_are_kept_out_of_the_lists_but_stored(people: Store) -> None:
    """Control: ``with_play`` lists them."""
    cup = insert_tournament(
        people, "cup", TournamentFormat.ROUND_ROBIN,
        latest_version_ids(people, ["rnd", "mine"]),
        TournamentConfig(games_per_match=1),
    )  # fmt: skip
    match_id = _table(people, "ann", "rnd", 0, RATED)
    game_id = record_play_game(people, match_id, _report(("human-ann", "rnd"), "rnd"),
                               failures=NONE, people=_shift)  # fmt: skip
    [play] = [t for t in list_tournaments(people, with_play=True) if t.id != cup.id]
    assert [t.name for t in list_tournaments(people)] == ["cup"]
    assert is_play_tournament(people, play.id) and not is_play_tournament(people, cup.id)
    assert get_tournament(people, play.id).name == play.name  # still shown by id
    assert [g.id for g in list_games(people, tournament_id=play.id)] == [game_id]


def test_each_person_lists_only_their_own_games(people: Store) -> None:
    _table(people, "ann", "rnd", 0, RATED)
    _table(people, "bob", "rnd", 1, RATED)
    _table(people, "ann", "mine", 1, "your own bot")
    assert [(r.user, r.bot, r.result) for r in play_games(people, "ann")] == [
        ("ann", "mine", None), ("ann", "rnd", None)]
    assert [r.user for r in play_games(people, "bob")] == ["bob"]
    assert play_games(people, "carol") == []
    assert len(play_games(people, "ann", limit=1)) == 1


def test_a_person_sits_in_seat_0_or_1(people: Store) -> None:
    with pytest.raises(StoreError, match="seat 0 or 1"):
        _table(people, "ann", "rnd", 2, RATED)
    assert list_tournaments(people, with_play=True) == []


# --- the migration -------------------------------------------------------------------

STEP = MIGRATIONS.index(PLAY_POOL)


def _before_play_pool(path: Path) -> None:
    """A database at the version before PLAY_POOL: two bots, two people's remote seats, a
    play game stored the way /play stored it then, a tournament named like one (but not
    a person's), a person's seat in another user's ``play-`` name, and a name that both
    seats' owners prefix (ann's and ann-x's: counted once)."""
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        for step in MIGRATIONS[:STEP]:
            db.execute("BEGIN")
            run_step(db, step)
            db.execute("COMMIT")
        db.execute(f"PRAGMA user_version = {STEP}")
        now = "2026-01-01T00:00:00+00:00"
        for bot_id, name, owner, runtime in ((1, "rnd", None, "python"),
                                              (2, "human-ann", "ann", "remote"),
                                              (3, "greedy", "bob", "python"),
                                              (4, "human-bob", "bob", "remote"),
                                              (5, "human-ann-x", "ann-x", "remote")):  # fmt: skip
            db.execute("INSERT INTO bots (id, name, created_at, owner) VALUES (?, ?, ?, ?)",
                       (bot_id, name, now, owner))  # fmt: skip
            db.execute(
                "INSERT INTO bot_versions (id, bot_id, version, directory, command, runtime,"
                " created_at, mu, sigma) VALUES (?, ?, ?, ?, '[]', ?, ?, 25, 8.3)",
                (bot_id, bot_id, f"v{bot_id}", f"bots/{name}", runtime, now),
            )
        for tid, name, first, second, winner in ((1, "play-ann-abcdefgh", 1, 2, 1),
                                                  (2, "play-carol-x", 1, 3, 0),
                                                  (3, "play-ann-bob", 1, 4, 0),
                                                  (4, "play-ann-open", 2, 3, None),
                                                  (5, "play-ann-x-1", 2, 5, 1)):  # fmt: skip
            db.execute(
                "INSERT INTO tournaments (id, name, format, status, config, created_at)"
                " VALUES (?, ?, 'round_robin', 'finished', '{}', ?)",
                (tid, name, now),
            )
            db.execute(
                "INSERT INTO matches (id, tournament_id, round, first_id, second_id, games, seed)"
                " VALUES (?, ?, 1, ?, ?, 1, 0)",
                (tid, tid, first, second),
            )
            if tid != 4:  # this one never got its game stored
                db.execute(
                    "INSERT INTO games (match_id, game_index, seat0_id, seat1_id, winner_seat,"
                    " reason, status0, status1, actions, time0_ms, time1_ms, record,"
                    " finished_at) VALUES (?, 0, ?, ?, ?, 'points', 'ok', 'ok', 9, 1, 1, '{}', ?)",
                    (tid, first, second, winner, now),
                )


def test_the_migration_finds_the_play_games_stored_before(tmp_path: Path) -> None:
    """Control: before it, the list holds all four; after it, only the two that are not a
    person's game at /play; every game is kept, none rated."""
    data = tmp_path / "data"
    data.mkdir()
    _before_play_pool(data / "arena.db")
    with closing(sqlite3.connect(data / "arena.db")) as db:
        assert db.execute("SELECT COUNT(*) FROM tournaments").fetchone()[0] == 5
    with Store.open(data) as store:
        with closing(sqlite3.connect(data / "arena.db")) as db:
            assert db.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
        assert [t.name for t in list_tournaments(store)] == ["play-ann-bob", "play-carol-x"]
        assert len(list_tournaments(store, with_play=True)) == 5
        with closing(sqlite3.connect(data / "arena.db")) as db:
            assert db.execute("SELECT COUNT(*) FROM play_games WHERE tournament_id = 5"
                              ).fetchone()[0] == 1  # fmt: skip
        ann = [r for r in play_games(store, "ann") if r.tournament != "play-ann-x-1"]
        assert [(r.tournament, r.bot, r.seat, r.result, r.rated) for r in ann] == [
            ("play-ann-open", "greedy", 0, None, False),
            ("play-ann-abcdefgh", "rnd", 1, "win", False),
        ]
        assert all("before" in str(r.unrated_reason) for r in ann)
        assert play_games(store, "bob") == [] and people_pool(store) == ([], [])
        assert len(list_games(store)) == 4


def test_every_table_is_dealt_from_a_fresh_secret(people: Store) -> None:
    """No deal is dealt twice at /play: learning one (duplicate mode shows a deal again,
    after the game) tells nothing of the next table's."""
    from arena.store import tournament_secret

    matches = [_table(people, "ann", "rnd", n % 2, RATED) for n in range(6)]
    tournaments = {m: t.id for t in list_tournaments(people, with_play=True)
                   for m in [list_matches(people, t.id)[0].id]}  # fmt: skip
    secrets = {tournament_secret(people, tournaments[m]) for m in matches}
    assert len(secrets) == len(matches)
