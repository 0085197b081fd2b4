"""arena.export: the Parquet files read back equal the stored records; only public games."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from arena import store as st
from arena.export.tables import DECISIONS_SCHEMA, GAMES_SCHEMA, _walls
from arena.export.writer import export_public_games, write_games
from arena.kahuna import (
    Action,
    observation_to_json,
    observe,
    parse_action,
    parse_record,
    play_random_game,
    replay_steps,
)
from arena.kahuna.encoding import encode_observation
from arena.kahuna.legal import legal_actions
from arena.store.export import stored_games
from arena.store.models import INITIAL_MU, INITIAL_SIGMA
from arena.testing.demo_data import play_demo_tournament, report_for
from arena.tournament.policy.results import store_game


@pytest.fixture
def store(tmp_path: Path) -> Iterator[st.Store]:
    with st.Store.open(tmp_path / "data") as opened:
        yield opened


def _read(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows


def test_the_files_read_back_equal_the_stored_records(store: st.Store, tmp_path: Path) -> None:
    demo = play_demo_tournament(store, tmp_path / "bots", bots=("a", "b", "c"), games_per_match=2)
    summary = export_public_games(store, tmp_path / "out", batch_games=2, batch_decisions=50)
    games = _read(summary.games_path)
    decisions = _read(summary.decisions_path)
    assert pq.read_schema(summary.games_path) == GAMES_SCHEMA
    assert pq.read_schema(summary.decisions_path) == DECISIONS_SCHEMA
    assert [g["game_id"] for g in games] == sorted(demo.game_ids)
    assert (summary.games, summary.decisions, summary.withheld) == (len(games), len(decisions), 0)
    by_game: dict[int, list[dict[str, Any]]] = {}
    for decision in decisions:
        by_game.setdefault(decision["game_id"], []).append(decision)
    for game in games:
        stored = st.get_game(store, game["game_id"])
        record = st.game_record(store, game["game_id"])
        assert json.loads(game["record"]) == record
        assert (game["tournament"], game["match_id"], game["round"], game["game_index"]) == (
            stored.tournament, stored.match_id, stored.round, stored.game_index
        )
        assert (game["seat0_bot"], game["seat1_bot"]) == stored.bots
        assert (game["seat0_version"], game["seat1_version"]) == stored.versions
        assert (game["winner_seat"], game["reason"]) == (stored.winner_seat, stored.reason)
        assert (game["seat0_status"], game["seat1_status"]) == stored.statuses
        assert (game["seat0_time_ms"], game["seat1_time_ms"]) == stored.time_ms
        assert game["finished_at"] == stored.finished_at
        assert game["actions"] == stored.actions == len(parse_record(game["record"]).actions)
        result = parse_record(game["record"]).result
        assert result is not None
        assert (game["seat0_points"], game["seat1_points"]) == result.points
        _check_decisions(by_game[game["game_id"]], json.dumps(record))


def _check_decisions(rows: list[dict[str, Any]], record_json: str) -> None:
    record = parse_record(record_json)
    assert [r["ply"] for r in rows] == list(range(len(record.actions)))
    steps = list(replay_steps(record))
    for row, step, (seat, action) in zip(rows, steps, record.actions, strict=False):
        state = step.state
        assert row["seat"] == state.to_move
        assert seat in (None, row["seat"])
        assert parse_action(row["action"]) is action
        seen = observe(state, row["seat"])
        expected = observation_to_json(seen)
        expected.pop("history")
        assert json.loads(row["observation"]) == expected
        assert row["history_length"] == len(seen.history)
        assert row["observation_vector"] == pytest.approx(encode_observation(seen))
        assert row["legal_actions"] == [a.text() for a in legal_actions(state)]
        assert row["wall_ms"] is None  # demo records carry no per-decision timings


def test_ratings_before_chain_into_ratings_after(store: st.Store, tmp_path: Path) -> None:
    play_demo_tournament(store, tmp_path / "bots", bots=("a", "b", "c"), games_per_match=4)
    games = _read(export_public_games(store, tmp_path / "out").games_path)
    last: dict[tuple[str, str], tuple[float, float]] = {}
    for game in games:
        for seat in (0, 1):
            key = (game[f"seat{seat}_bot"], game[f"seat{seat}_version"])
            before = (game[f"seat{seat}_mu_before"], game[f"seat{seat}_sigma_before"])
            assert before == last.get(key, (INITIAL_MU, INITIAL_SIGMA))
            last[key] = (game[f"seat{seat}_mu_after"], game[f"seat{seat}_sigma_after"])
    board = {(row.entry.bot, row.entry.version): row.entry for row in st.leaderboard(store)}
    for key, (mu, sigma) in last.items():
        assert (board[key].mu, board[key].sigma) == pytest.approx((mu, sigma))


def test_a_game_not_yet_public_is_absent_until_its_deal_is_played(
    store: st.Store, tmp_path: Path
) -> None:
    demo = play_demo_tournament(
        store, tmp_path / "bots", bots=("a", "b"), games_per_match=4, max_games=3
    )
    assert demo.lease is not None
    withheld = [g for g in demo.game_ids if st.record_withheld(store, g) is not None]
    assert len(withheld) == 1  # game 2 waits for game 3 (the same deal, seats swapped)
    summary = export_public_games(store, tmp_path / "out")
    exported = {g["game_id"] for g in _read(summary.games_path)}
    assert exported == set(demo.game_ids) - set(withheld)
    assert {d["game_id"] for d in _read(summary.decisions_path)} == exported
    assert summary.withheld == 1
    [match] = st.list_matches(store, demo.tournament_id)
    record = play_random_game(match.seed + 3)
    store_game(store, match.id, report_for(3, (match.second, match.first), record))
    again = export_public_games(store, tmp_path / "out")
    assert withheld[0] in {g["game_id"] for g in _read(again.games_path)}
    assert again.withheld == 0
    demo.lease.release()


def test_one_tournament_or_ladder_only(store: st.Store, tmp_path: Path) -> None:
    first = play_demo_tournament(store, tmp_path / "bots", name="one", bots=("a", "b"))
    second = play_demo_tournament(store, tmp_path / "bots", name="two", bots=("a", "b"))
    summary = export_public_games(store, tmp_path / "out", second.tournament_id)
    assert {g["tournament"] for g in _read(summary.games_path)} == {"two"}
    assert [g["game_id"] for g in _read(summary.games_path)] == list(second.game_ids)
    assert not set(first.game_ids) & {d["game_id"] for d in _read(summary.decisions_path)}


def test_games_are_read_and_written_a_batch_at_a_time(store: st.Store, tmp_path: Path) -> None:
    demo = play_demo_tournament(store, tmp_path / "bots", bots=("a", "b", "c"), games_per_match=2)
    assert [g.game_id for g in stored_games(store, page_size=2)] == sorted(demo.game_ids)
    summary = export_public_games(store, tmp_path / "out", batch_games=2, batch_decisions=100)
    games_file = pq.ParquetFile(summary.games_path)
    decisions_file = pq.ParquetFile(summary.decisions_path)
    assert games_file.metadata.num_row_groups == len(demo.game_ids) // 2
    assert decisions_file.metadata.num_row_groups >= summary.decisions // 200
    with pytest.raises(ValueError, match="page_size must be at least 1"):
        next(stored_games(store, page_size=0))


def test_an_interrupted_export_leaves_no_file(
    store: st.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    play_demo_tournament(store, tmp_path / "bots", bots=("a", "b"))
    import arena.export.writer as writer

    def broken(game: object) -> object:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(writer, "game_rows", broken)
    with pytest.raises(RuntimeError, match="disk on fire"):
        export_public_games(store, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_an_export_that_fails_at_its_last_file_leaves_the_previous_pair_as_it_was(
    store: st.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills as the decisions file is closed (its last row group and footer):
    games.parquet must not be replaced either, or the directory would pair this export's
    games with the previous export's decisions."""
    import errno

    import arena.export.writer as writer

    play_demo_tournament(store, tmp_path / "bots", bots=("a", "b"))
    out = tmp_path / "out"
    export_public_games(store, out)
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    play_demo_tournament(store, tmp_path / "bots2", bots=("c", "d"), name="second")

    class FullAtClose(pq.ParquetWriter):  # type: ignore[misc]
        def close(self) -> None:
            super().close()
            if self.schema.equals(DECISIONS_SCHEMA):
                raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer.pq, "ParquetWriter", FullAtClose)
    with pytest.raises(OSError, match="No space left"):
        export_public_games(store, out)
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


P = parse_action("pass")
D = parse_action("draw deck")


@pytest.mark.parametrize(
    ("match", "actions", "expected"),
    [
        ({"timings": [{"seat": 0, "wall_ms": 1.5}, {"seat": 1, "wall_ms": 2}]},
         ((0, P), (1, D)), [1.5, 2.0]),
        ({"timings": [{"seat": 0, "wall_ms": 1.5}]}, ((0, P), (1, D)), None),
        ({"timings": [{"seat": 1, "wall_ms": 1.5}, {"seat": 1, "wall_ms": 2}]},
         ((0, P), (1, D)), None),
        ({"timings": [{"seat": 0, "wall_ms": "x"}, {"seat": 1, "wall_ms": 2}]},
         ((0, P), (1, D)), None),
        ({"timings": [{"seat": 0, "wall_ms": True}, {"seat": 1, "wall_ms": 2}]},
         ((0, P), (1, D)), None),
        (None, ((0, P),), None),
        ({"timings": "many"}, ((0, P),), None),
    ],
    ids=["aligned", "short", "wrong-seat", "text", "boolean", "no-match", "not-a-list"],
)  # fmt: skip
def test_wall_times_are_taken_only_when_they_line_up_with_the_actions(
    match: object, actions: tuple[tuple[int, Action], ...], expected: list[float] | None
) -> None:
    assert _walls(match, actions) == expected


def test_the_referees_timings_become_wall_ms(store: st.Store, tmp_path: Path) -> None:
    demo = play_demo_tournament(store, tmp_path / "bots", bots=("a", "b"), games_per_match=2)
    [match] = st.list_matches(store, demo.tournament_id)
    del match  # the demo's records have no timings: store one that has
    tournament = play_demo_tournament(
        store, tmp_path / "bots", name="timed", bots=("a", "b"), max_games=0, finish=False
    )
    [timed] = st.list_matches(store, tournament.tournament_id)
    record = play_random_game(5)
    report = report_for(0, (timed.first, timed.second), record)
    timings = [{"seat": seat, "wall_ms": float(i)} for i, (seat, _) in enumerate(record.actions)]
    report = replace(report, record={**report.record, "match": {"timings": timings}})
    game_id = store_game(store, timed.id, report)
    st.set_status(store, tournament.tournament_id, st.TournamentStatus.FINISHED)
    summary = export_public_games(store, tmp_path / "out", tournament.tournament_id)
    rows = [d for d in _read(summary.decisions_path) if d["game_id"] == game_id]
    assert [d["wall_ms"] for d in rows] == [float(i) for i in range(len(record.actions))]
    assert tournament.lease is not None
    tournament.lease.release()


def test_the_writer_never_buffers_more_than_a_batch(
    store: st.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory is one batch (plus one game's decisions), however many games are stored."""
    import arena.export.writer as writer

    demo = play_demo_tournament(store, tmp_path / "bots", bots=("a", "b", "c"), games_per_match=4)
    buffered: dict[str, int] = {}
    add = writer._Sink.add

    def watched(self: writer._Sink, rows: list[dict[str, Any]]) -> None:
        add(self, rows)
        buffered[self.path.name] = max(buffered.get(self.path.name, 0), len(self.rows))

    monkeypatch.setattr(writer._Sink, "add", watched)
    summary = export_public_games(store, tmp_path / "out", batch_games=3, batch_decisions=300)
    assert summary.games == len(demo.game_ids) == 12
    longest = max(g["actions"] for g in _read(summary.games_path))
    assert buffered["games.parquet"] < 3
    assert buffered["decisions.parquet"] < 300 + longest


@pytest.mark.parametrize(
    ("carried", "expected"),
    [
        ({}, (0.0, 0.0)),
        ({0: 1250.5}, (1250.5, 0.0)),
        ({1: 40.25}, (0.0, 40.25)),
        ({0: 812.0, 1: 3.5}, (812.0, 3.5)),
    ],
    ids=["none-carried", "seat0-launched", "seat1-launched", "both-launched"],
)
def test_each_seats_start_up_is_its_column_in_milliseconds(
    store: st.Store, tmp_path: Path, carried: dict[int, float], expected: tuple[float, float]
) -> None:
    """The start-up time the game carries (``games.startup{0,1}_ms``) by seat, as the
    thinking time is; a game without any (the bots already running) reads 0."""
    tournament = play_demo_tournament(
        store, tmp_path / "bots", name="boot", bots=("a", "b"), max_games=0, finish=False
    )
    [match] = st.list_matches(store, tournament.tournament_id)
    seats = (match.second, match.first)  # seat 0 is not the match's first bot
    report = report_for(0, seats, play_random_game(11))
    report = replace(report, startup_ms={seats[seat]: ms for seat, ms in carried.items()})
    game_id = store_game(store, match.id, report)
    st.set_status(store, tournament.tournament_id, st.TournamentStatus.FINISHED)
    [row] = _read(export_public_games(store, tmp_path / "out", tournament.tournament_id).games_path)
    assert row["game_id"] == game_id
    assert (row["seat0_startup_ms"], row["seat1_startup_ms"]) == expected
    assert list(row)[list(row).index("seat1_time_ms") + 1 :][:2] == [
        "seat0_startup_ms", "seat1_startup_ms"
    ]
    assert tournament.lease is not None
    tournament.lease.release()


def test_a_game_stored_before_start_up_was_kept_exports_zero(
    store: st.Store, tmp_path: Path
) -> None:
    """The column's default for an older store's games (schema v17 adds it as 0)."""
    play_demo_tournament(store, tmp_path / "bots", bots=("a", "b"))
    with store.reading() as db:
        defaults = {row["name"]: row["dflt_value"]
                    for row in db.execute("PRAGMA table_info(games)")}  # fmt: skip
    assert defaults["startup0_ms"] == defaults["startup1_ms"] == "0"
    games = _read(export_public_games(store, tmp_path / "out").games_path)
    assert games and all((g["seat0_startup_ms"], g["seat1_startup_ms"]) == (0.0, 0.0)
                         for g in games)  # fmt: skip


def test_two_exports_into_one_directory_at_once_each_write_their_own_pair(
    store: st.Store, tmp_path: Path
) -> None:
    """A second export runs to its end while the first is writing (a cron run that
    overlaps the last): neither writes into the other's files, and the directory ends
    with the pair of the export that finished last, whole and matched."""
    first = play_demo_tournament(store, tmp_path / "bots", name="one", bots=("a", "b"))
    play_demo_tournament(store, tmp_path / "bots", name="two", bots=("a", "b", "c"))
    out = tmp_path / "out"
    every = list(stored_games(store))

    def overlapped() -> Iterator[Any]:
        for index, game in enumerate(every):
            if index == 2:
                inner = export_public_games(store, out, first.tournament_id, batch_games=1)
                assert inner.games == len(first.game_ids)
            yield game

    outer = write_games(overlapped(), out, batch_games=1, batch_decisions=10)
    assert outer.games == len(every)
    assert sorted(path.name for path in out.iterdir()) == ["decisions.parquet", "games.parquet"]
    games = _read(out / "games.parquet")
    assert [g["game_id"] for g in games] == [g.game_id for g in every]
    assert {d["game_id"] for d in _read(out / "decisions.parquet")} == {
        g.game_id for g in every
    }


@pytest.mark.parametrize("planted", ["link", "file"])
def test_nothing_already_in_the_directory_is_written_through_or_removed(
    store: st.Store, tmp_path: Path, planted: str
) -> None:
    """A name in --out that someone made beforehand (a link to another file, a file) is no
    export's temporary file: the export neither writes through it nor deletes it."""
    play_demo_tournament(store, tmp_path / "bots", bots=("a", "b"))
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    names = [f".{name}.partial" for name in ("games.parquet", "decisions.parquet")]
    for name in names:
        if planted == "link":
            (out / name).symlink_to(victim)
        else:
            (out / name).write_text("keep me")
    summary = export_public_games(store, out)
    assert summary.games == 2 and len(_read(summary.games_path)) == 2
    assert victim.read_text() == "keep me"
    for name in names:
        assert (out / name).is_symlink() is (planted == "link")
        assert (out / name).read_text() == "keep me"


@pytest.mark.parametrize("taken", ["games.parquet", "decisions.parquet"])
def test_a_directory_at_a_files_name_is_refused_before_anything_is_replaced(
    store: st.Store, tmp_path: Path, taken: str
) -> None:
    play_demo_tournament(store, tmp_path / "bots", bots=("a", "b"))
    out = tmp_path / "out"
    export_public_games(store, out)
    kept = {path.name: path.read_bytes() for path in out.iterdir()}
    play_demo_tournament(store, tmp_path / "bots2", name="second", bots=("c", "d"))
    (out / taken).unlink()
    (out / taken).mkdir()
    with pytest.raises(IsADirectoryError, match=f"{taken} there is a directory"):
        export_public_games(store, out)
    other = "decisions.parquet" if taken == "games.parquet" else "games.parquet"
    assert (out / other).read_bytes() == kept[other]
    assert sorted(path.name for path in out.iterdir()) == ["decisions.parquet", "games.parquet"]


def test_the_pair_is_renamed_into_place_only_under_the_directorys_lock(
    store: st.Store, tmp_path: Path
) -> None:
    """Another export holding the lock (renaming its own pair) keeps this one's files out
    of the final names until it lets go: the two pairs never interleave."""
    import threading

    from arena.export.writer import _locked
    from arena.testing.waiting import assert_stays, wait_until

    play_demo_tournament(store, tmp_path / "bots", bots=("a", "b"))
    out = tmp_path / "out"
    out.mkdir()
    done: list[object] = []
    with _locked(out):
        worker = threading.Thread(target=lambda: done.append(export_public_games(store, out)))
        worker.start()
        wait_until(lambda: len(list(out.glob(".decisions.parquet.*.partial"))) == 1 or None,
                   "the export writing its files")  # fmt: skip
        assert_stays(lambda: not (out / "games.parquet").exists() and not done, 0.3,
                     "no file renamed while another export holds the lock")  # fmt: skip
    worker.join(timeout=30)
    assert done and (out / "games.parquet").exists() and (out / "decisions.parquet").exists()
