"""The ladder's page and JSON over a real store: standings with sigma, games, queue."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from arena.commands.remote import tournaments_lines
from arena.referee import load_bot
from arena.referee.types import GameReport
from arena.server.arena_service import ArenaService
from arena.store import (
    Store,
    TournamentConfig,
    add_bot_version,
    add_ladder_match,
    create_ladder,
    find_ladder,
    ladder_entrants,
    list_matches,
)
from arena.tournament.policy.results import store_game
from arena.tournament.policy.rounds import create_tournament
from arena.web.app import WebApp
from arena.web.source import StoreSource
from tests.cli import arena_in_process

REPO = Path(__file__).resolve().parents[2]


def _store(tmp_path: Path) -> Store:
    store = Store.open(tmp_path / "data")
    for name in ("alpha", "beta", "gamma"):
        target = tmp_path / "bots" / name
        shutil.copytree(REPO / "sample_bots" / "python_random", target)
        toml = (target / "bot.toml").read_text()
        (target / "bot.toml").write_text(toml.replace('"python_random"', f'"{name}"'))
        add_bot_version(store, load_bot(target))
    ladder = create_ladder(store, "ladder", TournamentConfig(), {"placement_matches": 1})
    ids = [r.version_id for r in ladder_entrants(store, ladder)]
    add_ladder_match(store, ladder, ids[0], ids[1], games=2, seed=3)
    return store


def test_the_ladder_page_shows_standings_with_sigma_and_the_queue(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        response = WebApp(StoreSource(store)).handle("GET", "/ladder", {})
    assert response.status == 200
    page = response.body.decode()
    assert 'id="ladder-standings"' in page and "± 8.33" in page
    assert page.count('href="/bots/gamma"') >= 2  # a standing and the queue (its placement)
    assert "(placement)" in page and "No games yet." in page
    assert "status-created" in page  # no server has run it yet


def test_the_ladder_json_has_every_column_and_unknown_ladders_are_404(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        app = WebApp(StoreSource(store))
        response = app.handle("GET", "/api/ladder/ladder", {})
        missing = app.handle("GET", "/api/ladder/other", {})
        page_missing = app.handle("GET", "/ladder/other", {})
    payload = json.loads(response.body)
    assert [s["bot"] for s in payload["standings"]] == ["alpha", "beta", "gamma"]
    first = payload["standings"][0]
    assert {"mu", "sigma", "conservative", "ladder_games", "in_play", "placing"} <= set(first)
    assert payload["queue"][0] == {"first": "gamma", "second": payload["queue"][0]["second"],
                                   "placement": True}  # fmt: skip
    assert missing.status == 404 and "no ladder named 'other'" in json.loads(missing.body)["error"]
    assert page_missing.status == 404


def test_a_ladders_tournament_page_is_its_ladder_page(tmp_path: Path) -> None:
    """/tournaments/ID of a ladder answers 303 to /ladder/NAME (the tournament page would
    read every game it ever played: 18 s after 100,000 matches); a round robin's is still
    its own page (the control)."""
    with _store(tmp_path) as store:
        cup = create_tournament(store, "cup", "round_robin", ["alpha", "beta"], TournamentConfig())
        ladder = find_ladder(store, "ladder")
        app = WebApp(StoreSource(store))
        moved = app.handle("GET", f"/tournaments/{ladder}", {})
        kept = app.handle("GET", f"/tournaments/{cup.id}", {})
    assert (moved.status, moved.headers["Location"]) == (303, "/ladder/ladder")
    assert kept.status == 200 and "cup" in kept.body.decode()


def test_the_front_pages_list_counts_the_ladders_bots(tmp_path: Path) -> None:
    """The ladder stores no entrants of its own: its row counts its standings' bots, as its
    page does (it read 0 bots beside a ladder of three), and gives its games no total."""
    with _store(tmp_path) as store:
        app = WebApp(StoreSource(store))
        listed = json.loads(app.handle("GET", "/api/tournaments", {}).body)["tournaments"]
        page = app.handle("GET", "/", {}).body.decode()
    (ladder,) = listed
    assert (ladder["bots"], ladder["games_scheduled"]) == (3, None)
    row = page[page.index(f'<tr data-tournament="{ladder["id"]}">') :]
    assert '<td class="num">3</td>\n  <td class="num">0</td>' in row[: row.index("</tr>")]


def test_the_clis_lists_count_the_ladders_bots_as_the_front_page_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`arena tournament list` and `arena remote tournament list` (its lines from the API's
    ListTournaments) give the ladder of three its 3 bots, not the 0 it stores; a round
    robin keeps its entrants (the control)."""
    with _store(tmp_path) as store:
        create_tournament(store, "cup", "round_robin", ["alpha", "beta"], TournamentConfig())
        status, out, _ = arena_in_process(capsys, "tournament", "list", "--data-dir",
                                          str(tmp_path / "data"))  # fmt: skip
        listed = ArenaService(store)._list_tournaments()
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines()]
    local = {row[1]: row for row in cells if row and row[0].isdigit()}
    remote = {line.split()[1]: line.split() for line in tournaments_lines(listed)[1:]}
    assert status == 0, out
    for rows in (local, remote):  # id name format status bots games ...
        assert (rows["ladder"][4], rows["cup"][4]) == ("3", "2"), rows
    assert [len(t.entrants) for t in listed.tournaments] == [2, 3]  # newest first


def test_the_ladders_recent_games_say_their_results_in_words(tmp_path: Path) -> None:
    """As every other page's games: "beta won: alpha had no bridge left on the board", not
    a winner beside the referee's code for the reason ("no_bridges")."""
    with _store(tmp_path) as store:
        ladder = find_ladder(store, "ladder")
        assert ladder is not None
        (match,) = list_matches(store, ladder)
        seats = (match.first, match.second)
        store_game(store, match.id, GameReport(
            index=0, bots_by_seat=seats, winner=seats[1], reason="no_bridges", statuses={},
            actions=3, time_ms={seats[0]: 1.0, seats[1]: 2.0},
            record={"format": "kahuna-record/1", "deal": [], "actions": [], "index": 0},
        ))  # fmt: skip
        page = WebApp(StoreSource(store)).handle("GET", "/ladder", {}).body.decode()
    start = page.index('id="ladder-games"')
    games = page[start : page.index("</table>", start)]
    assert f"{seats[1]} won: {seats[0]} had no bridge left on the board" in games
    assert "no_bridges" not in games
