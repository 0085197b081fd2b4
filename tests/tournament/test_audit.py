"""`arena audit`: a stored tournament passes; altering its seed, a record, a result or a
rating makes it fail naming what differs; the seed stays secret until it is finished."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from arena import store as st
from arena.kahuna import Record
from arena.kahuna.records import play_random_game
from arena.referee.seeds import deal_seed, seed_commitment
from arena.testing.demo_data import add_demo_bots, report_for
from arena.tournament.audit import audit_tournament
from arena.tournament.results import store_game
from arena.tournament.rounds import create_tournament

BOTS = ("alpha", "beta", "gamma")


def _game(seed: int, choices: int) -> Record:
    """A random game on the deal and reshuffles of ``seed``, actions chosen by ``choices``."""
    return play_random_game(seed, choices=choices)


def _play(store: st.Store, tournament_id: int) -> None:
    secret = st.tournament_secret(store, tournament_id)
    for match in st.list_matches(store, tournament_id):
        for index in range(match.games):
            seats = (match.first, match.second) if index % 2 == 0 else (match.second, match.first)
            record = _game(deal_seed(secret, match.seed, index // 2), match.id * 100 + index)
            store_game(store, match.id, report_for(index, seats, record))


@pytest.fixture
def finished(tmp_path: Path) -> tuple[Path, int]:
    data = tmp_path / "data"
    with st.Store.open(data) as store:
        add_demo_bots(store, tmp_path / "bots", BOTS)
        config = st.TournamentConfig(games_per_match=4, seed=3)
        tournament = create_tournament(store, "audited", "round_robin", list(BOTS), config)
        assert tournament.commitment is not None
        assert st.revealed_secret(store, tournament.id) is None  # created: secret
        st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
        _play(store, tournament.id)
        assert st.revealed_secret(store, tournament.id) is None  # running: still secret
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        return data, tournament.id


def test_a_finished_tournament_passes_and_its_commitment_is_the_revealed_seeds(
    finished: tuple[Path, int],
) -> None:
    data, tournament_id = finished
    with st.Store.open(data) as store:
        report = audit_tournament(store, "audited")
        secret = st.revealed_secret(store, tournament_id)
        assert secret is not None
        parameters = json.loads(st.tournament_parameters(store, tournament_id))
    assert report.ok, report.problem
    assert report.games == 12
    assert report.revealed_secret == secret.hex()
    assert report.commitment == seed_commitment(secret, st.tournament_parameters(
        st.Store.open(data), tournament_id))  # fmt: skip
    assert parameters["entrants"][0][0] == "alpha" and parameters["config"]["seed"] == 3
    assert "pass" in report.text()


def test_an_unfinished_tournament_cannot_be_audited(tmp_path: Path) -> None:
    with st.Store.open(tmp_path / "d") as store:
        add_demo_bots(store, tmp_path / "bots", BOTS[:2])
        create_tournament(store, "early", "round_robin", list(BOTS[:2]), st.TournamentConfig())
        report = audit_tournament(store, "early")
    assert not report.ok and report.revealed_secret is None
    assert "revealed only once it is finished" in (report.problem or "")


def _first_game(db: sqlite3.Connection) -> tuple[int, dict[str, object]]:
    game_id, record = db.execute("SELECT id, record FROM games ORDER BY id LIMIT 1").fetchone()
    return game_id, json.loads(record)


def _alter_secret(db: sqlite3.Connection) -> None:
    db.execute("UPDATE tournaments SET secret = randomblob(32)")


def _alter_config(db: sqlite3.Connection) -> None:
    db.execute("UPDATE tournaments SET config = json_set(config, '$.seed', 4)")


def _alter_deal(db: sqlite3.Connection) -> None:
    game_id, record = _first_game(db)
    deal = list(record["deal"])  # type: ignore[call-overload]
    first = next(i for i, card in enumerate(deal) if card != deal[0])
    deal[0], deal[first] = deal[first], deal[0]
    record["deal"] = deal
    db.execute("UPDATE games SET record = ? WHERE id = ?", (json.dumps(record), game_id))


def _alter_reshuffle(db: sqlite3.Connection) -> None:
    game_id, record = _first_game(db)
    reshuffles = record["reshuffles"]
    assert isinstance(reshuffles, list) and reshuffles and len(set(reshuffles[0])) > 1
    first = reshuffles[0]
    j = next(i for i, card in enumerate(first) if card != first[0])
    first[0], first[j] = first[j], first[0]
    db.execute("UPDATE games SET record = ? WHERE id = ?", (json.dumps(record), game_id))


def _alter_action(db: sqlite3.Connection) -> None:
    game_id, record = _first_game(db)
    actions = record["actions"]
    assert isinstance(actions, list)
    record["actions"] = actions[:3] + actions[4:]
    db.execute("UPDATE games SET record = ? WHERE id = ?", (json.dumps(record), game_id))


def _alter_result(db: sqlite3.Connection) -> None:
    db.execute("UPDATE games SET winner_seat = 1 - winner_seat WHERE id ="
               " (SELECT MIN(id) FROM games WHERE winner_seat IS NOT NULL)")  # fmt: skip


def _alter_rating(db: sqlite3.Connection) -> None:
    db.execute("UPDATE rating_history SET mu = mu + 0.5 WHERE id = (SELECT MAX(id) FROM"
               " rating_history)")  # fmt: skip


@pytest.mark.parametrize(
    ("alter", "named"),
    [
        (_alter_secret, "published commitment"),
        (_alter_config, "published commitment"),
        (_alter_deal, "the deal differs"),
        (_alter_reshuffle, "reshuffle of round 2 differs"),
        (_alter_action, "does not replay"),
        (_alter_result, "the stored result is"),
        (_alter_rating, "stored rating after the game"),
    ],
)
def test_an_altered_store_fails_naming_what_differs(
    finished: tuple[Path, int], alter: Callable[[sqlite3.Connection], None], named: str
) -> None:
    data, _ = finished
    db = sqlite3.connect(data / "arena.db")
    alter(db)
    db.commit()
    db.close()
    with st.Store.open(data) as store:
        report = audit_tournament(store, "audited")
    assert not report.ok
    assert named in (report.problem or ""), report.problem


@pytest.mark.slow
def test_the_cli_passes_then_fails_with_exit_1(finished: tuple[Path, int]) -> None:
    import subprocess
    import sys

    data, _ = finished
    command = [sys.executable, "-m", "arena", "audit", "audited", "--data-dir", str(data)]
    ok = subprocess.run(command, capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and "pass" in ok.stdout, ok.stderr
    db = sqlite3.connect(data / "arena.db")
    _alter_deal(db)
    db.commit()
    db.close()
    bad = subprocess.run(command, capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and "FAIL" in bad.stderr and "the deal differs" in bad.stderr
