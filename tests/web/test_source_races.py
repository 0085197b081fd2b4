"""The aggregate pages' caches under concurrent requests, each race forced.

``StoreSource`` keeps the leaderboard (its intervals read every rated game) with
the state it was computed from; the spectator delay (``DelayLine``) keeps each
view's answers with when they were computed. The worst interleavings: an answer
computed from the store before a game was rated, kept after the answer that
includes it (never served for the newer store), and a game that ends while an
answer is computed (that answer is never shown before the game is public).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena import store as st
from arena.store.db import utc_now
from arena.testing.demo_data import DemoTournament, play_demo_tournament, play_games
from arena.testing.waiting import wait_until
from arena.tournament.view.spectator_delay import MAX_VIEWS, stamp
from arena.web import source as source_module
from arena.web.app import WebApp
from arena.web.live import epoch_s
from arena.web.source import StoreSource

DELAY_S = 60.0


@dataclass
class Running:
    store: st.Store
    demo: DemoTournament

    def rate_a_game(self) -> int:
        [game_id] = play_games(self.store, self.demo.tournament_id, max_games=1)
        return game_id


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    """A store with a round robin running and no game played yet."""
    store = st.Store.open(tmp_path / "data")
    demo = play_demo_tournament(store, tmp_path / "bots", bots=("ann", "bob"), max_games=0)
    try:
        yield Running(store, demo)
    finally:
        assert demo.lease is not None
        demo.lease.release()
        store.close()


def games_shown(rows: Any) -> int:
    return sum(row.games for row in rows)


def test_a_leaderboard_computed_before_a_game_and_kept_last_is_not_served_after_it(
    running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request computes the leaderboard from the store as it was before a game was
    rated, and keeps it after another request kept the board with that game: the next
    request gets the board with the game.

    The race, forced: the first request, its rows read, is held until the game is rated
    and the newer board kept."""
    source = StoreSource(running.store)
    intervals = source_module.leaderboard_intervals
    rows_read, newer_kept = threading.Event(), threading.Event()

    def held(store: st.Store, rows: Any) -> Any:
        if threading.current_thread().name == "stale":
            rows_read.set()
            assert newer_kept.wait(10), "the newer board was never kept"
        return intervals(store, rows)

    monkeypatch.setattr(source_module, "leaderboard_intervals", held)
    stale_rows: list[Any] = []
    stale = threading.Thread(target=lambda: stale_rows.append(source.leaderboard()),
                             name="stale")  # fmt: skip
    stale.start()
    assert rows_read.wait(10)
    running.rate_a_game()
    newer = source.leaderboard()
    assert games_shown(newer) == 2  # one game, two bots
    newer_kept.set()
    stale.join(20)
    assert games_shown(stale_rows[0]) == 0  # it answers the store it read
    assert games_shown(source.leaderboard()) == 2, "the board from before the game came back"


def test_a_tournament_table_computed_before_a_game_is_not_served_after_it(
    running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same race for a tournament's table (standings, crosstable, games), kept per
    state of the tournament: the one computed before the game and kept last is never
    the answer once the game is stored.

    The race, forced: the first request, its tournament row read, is held until the game
    is stored and the newer table kept."""
    source = StoreSource(running.store)
    table = source_module.tournament_table
    row_read, newer_kept = threading.Event(), threading.Event()

    def held(store: st.Store, row: st.TournamentRow) -> Any:
        if threading.current_thread().name == "stale":
            row_read.set()
            assert newer_kept.wait(10), "the newer table was never kept"
        return table(store, row)

    monkeypatch.setattr(source_module, "tournament_table", held)
    tournament_id = running.demo.tournament_id
    stale_details: list[Any] = []
    stale = threading.Thread(target=lambda: stale_details.append(source.tournament(tournament_id)),
                             name="stale")  # fmt: skip
    stale.start()
    assert row_read.wait(10)
    running.rate_a_game()
    newer = source.tournament(tournament_id)
    assert newer is not None and newer.summary.games_played == 1
    newer_kept.set()
    stale.join(20)
    assert stale_details[0].summary.games_played == 0  # it answers the row it read
    again = source.tournament(tournament_id)
    assert again is not None and again.summary.games_played == 1, "the table before the game"


class Clock:
    """Real time until ``fixed`` is set."""

    def __init__(self) -> None:
        self.fixed: float | None = None

    def __call__(self) -> float:
        return time.time() if self.fixed is None else self.fixed


def test_a_game_that_ends_while_the_board_is_computed_is_not_shown_before_the_delay(
    running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a spectator delay, a game rated while the leaderboard is being computed is in
    that answer: the answer is never shown as of a moment before the game ended.

    The interleaving, forced: the computation begins, the game is rated, then the
    computation reads the store."""
    source, clock = StoreSource(running.store), Clock()
    app = WebApp(source, spectator_delay_s=DELAY_S, clock=clock)
    leaderboard = source.leaderboard
    began: list[str] = []
    ended: list[str] = []
    armed = False

    def game_ends_meanwhile() -> Any:
        if armed and not began:
            began.append(stamp(time.time()))
            wait_until(lambda: utc_now() > began[0], "the next millisecond", 5,
                       interval_s=0.001)  # fmt: skip
            game_id = running.rate_a_game()
            ended.append(st.get_game(running.store, game_id).finished_at)
        return leaderboard()

    monkeypatch.setattr(source, "leaderboard", game_ends_meanwhile)
    assert app.handle("GET", "/api/leaderboard", {}).status == 200  # the board before it
    armed = True
    app.handle("GET", "/api/leaderboard", {})  # computed while the game ended
    assert began[0] < ended[0]
    clock.fixed = epoch_s(ended[0]) - 0.0005 + DELAY_S  # the cut: just before the game ended
    assert began[0] <= stamp(clock.fixed - DELAY_S) < ended[0]
    response = app.handle("GET", "/api/leaderboard", {})
    assert response.status == 200, response.body
    board = json.loads(response.body)["leaderboard"]
    assert sum(row["games"] for row in board) == 0, "a game shown before it was public"


def test_a_flood_of_bot_pages_leaves_the_delayed_front_page_its_history(
    running: Running,
) -> None:
    """With a spectator delay each view answers from the answers it kept; a stranger asking
    for more bot pages than are kept (names that do not exist cost nothing to make up)
    while games end does not push out the leaderboard's: it still answers as of the cut,
    not "not public yet"."""
    clock = Clock()
    app = WebApp(StoreSource(running.store), spectator_delay_s=DELAY_S, clock=clock)
    assert app.handle("GET", "/api/leaderboard", {}).status == 200  # its first answer, kept
    asked = utc_now()
    for number in range(MAX_VIEWS + 1):
        app.handle("GET", f"/api/bots/nobody-{number}", {})
    wait_until(lambda: utc_now() > asked, "the next millisecond", 5, interval_s=0.001)
    game_id = running.rate_a_game()
    ended = st.get_game(running.store, game_id).finished_at
    clock.fixed = epoch_s(ended) - 0.0005 + DELAY_S  # the cut: just before the game ended
    response = app.handle("GET", "/api/leaderboard", {})
    assert response.status == 200, response.body
    board = json.loads(response.body)["leaderboard"]
    assert sum(row["games"] for row in board) == 0
