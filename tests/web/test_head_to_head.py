"""/h2h?a=BOT&b=OTHER: two bots' games against each other, counted from the first's side
over every version and tournament; refusals name what is wrong."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from arena import store as st
from arena.referee import load_bot
from arena.referee.types import GameReport
from arena.testing.demo_data import write_bot_dir
from arena.tournament.policy.results import store_game
from arena.tournament.policy.rounds import create_tournament
from arena.web.app import WebApp
from arena.web.source import StoreSource


def _report(index: int, seats: tuple[str, str], winner: str | None) -> GameReport:
    return GameReport(
        index=index, bots_by_seat=seats, winner=winner, reason="points" if winner else "draw",
        statuses={}, actions=3, time_ms={seats[0]: 1.0, seats[1]: 2.0},
        record={"format": "kahuna-record/1", "deal": [], "actions": [], "index": index},
    )  # fmt: skip


@contextmanager
def _played(tmp_path: Path) -> Iterator[WebApp]:
    """ann and bob: ann won 2, drew 1, lost 1 against bob; cat played ann once (not counted)."""
    with st.Store.open(tmp_path / "data") as store:
        for name in ("ann", "bob", "cat"):
            st.add_bot_version(store, load_bot(write_bot_dir(tmp_path / "bots", name)))
        cup = create_tournament(store, "cup", "round_robin", ["ann", "bob", "cat"],
                                st.TournamentConfig(games_per_match=4))  # fmt: skip
        for match in st.list_matches(store, cup.id):
            pair = (match.first, match.second)
            if set(pair) == {"ann", "bob"}:
                results = ["ann", "ann", None, "bob"]
            elif set(pair) == {"ann", "cat"}:
                results = ["cat"]
            else:
                results = []
            for index, winner in enumerate(results):
                seats = pair if index % 2 == 0 else pair[::-1]
                store_game(store, match.id, _report(index, seats, winner))
        yield WebApp(StoreSource(store))


def test_two_bots_games_are_counted_from_the_first_bots_side(tmp_path: Path) -> None:
    """Control: bob's side is the mirror; the same counts for any two bots would fail it."""
    with _played(tmp_path) as app:
        page = app.handle("GET", "/h2h", {"a": "ann", "b": "bob"})
        as_json = json.loads(app.handle("GET", "/api/h2h", {"a": "ann", "b": "bob"}).body)
        mirror = json.loads(app.handle("GET", "/api/h2h", {"a": "bob", "b": "ann"}).body)
        bot_page = app.handle("GET", "/bots/ann", {}).body.decode()
    assert page.status == 200
    text = page.body.decode()
    assert "won <strong>2</strong>, drew <strong>1</strong> and lost <strong>1</strong>" in text
    assert "62.5%" in text
    assert (as_json["wins"], as_json["draws"], as_json["losses"]) == (2, 1, 1)
    assert (mirror["wins"], mirror["draws"], mirror["losses"]) == (1, 1, 2)
    assert len(as_json["games"]) == 4
    assert all(set(g["bots"]) == {"ann", "bob"} for g in as_json["games"])
    assert '<form class="compare" method="get" action="/h2h">' in bot_page
    assert "<option>bob</option>" in bot_page and "<option>ann</option>" not in bot_page


@pytest.mark.parametrize(
    ("query", "status", "words"),
    [
        ({"a": "ann"}, 400, "name two bots"),
        ({"a": "ann", "b": "ann"}, 400, "two different bots"),
        ({"a": "ann", "b": "nobody"}, 404, "no bot named 'nobody'\""),
        ({"a": "nobody", "b": "bob"}, 404, "no bot named 'nobody'\""),
        ({"a": "nobody", "b": "none"}, 404, "no bot named 'nobody' or 'none'\""),
    ],
)
def test_a_bad_pair_is_refused_naming_the_problem(
    tmp_path: Path, query: dict[str, str], status: int, words: str
) -> None:
    with _played(tmp_path) as app:
        response = app.handle("GET", "/api/h2h", query)
    assert response.status == status and words in response.body.decode()
