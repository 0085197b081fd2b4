"""arena.server.exports: ExportGames' pages are bounded, resumable and lossless."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from arena import store as st
from arena.server.exports import export_page, game_message, stored_game
from arena.store.export import stored_games
from arena.testing.demo_data import play_demo_tournament


@pytest.fixture
def store(tmp_path: Path) -> Iterator[st.Store]:
    with st.Store.open(tmp_path / "data") as opened:
        play_demo_tournament(opened, tmp_path / "bots", bots=("a", "b", "c"))
        yield opened


@pytest.mark.parametrize("page_size", [1, 2, 5, 100])
def test_pages_walk_every_game_once_reading_at_most_a_page(store: st.Store, page_size: int) -> None:
    every = [g.game_id for g in stored_games(store)]
    sent: list[int] = []
    after, pages = 0, 0
    while True:
        page = export_page(store, None, after, None, page_size)
        assert len(page.games) <= page_size
        sent += [m.game_id for m in page.games]
        pages += 1
        if page.done:
            break
        after = page.last_id
    assert sent == every
    assert pages == len(every) // page_size + 1


def test_a_page_resumes_after_the_game_id_given(store: st.Store) -> None:
    every = [g.game_id for g in stored_games(store)]
    page = export_page(store, None, every[2], None)
    assert [m.game_id for m in page.games] == every[3:] and page.done


def test_games_ended_after_the_cut_are_not_sent(store: st.Store) -> None:
    games = list(stored_games(store))
    cut = games[2].finished_at
    sent = [m.game_id for m in export_page(store, None, 0, cut).games]
    assert sent == [g.game_id for g in games if g.finished_at <= cut]
    assert len(sent) < len(games)  # the cut leaves some out


@pytest.mark.parametrize(
    ("winner", "startup"),
    [(0, (0.0, 0.0)), (1, (1250.5, 0.0)), (None, (0.0, 40.25)), (0, (812.0, 3.5))],
    ids=["seat0", "seat1-seat0-launched", "draw-seat1-launched", "both-launched"],
)
def test_a_message_gives_back_the_stored_game(
    store: st.Store, winner: int | None, startup: tuple[float, float]
) -> None:
    game = replace(next(stored_games(store)), winner_seat=winner, startup_ms=startup)
    assert stored_game(game_message(game)) == game


def test_a_message_from_an_arena_that_sends_no_start_up_reads_zero(store: st.Store) -> None:
    game = replace(next(stored_games(store)), startup_ms=(5.0, 6.0))
    message = game_message(game)
    del message.startup_ms[:]
    assert stored_game(message) == replace(game, startup_ms=(0.0, 0.0))


@pytest.mark.parametrize(
    "field", ["bots", "versions", "rating_before", "statuses", "time_ms", "startup_ms"]
)
def test_a_message_without_two_seats_is_refused(store: st.Store, field: str) -> None:
    message = game_message(next(stored_games(store)))
    getattr(message, field).pop()
    with pytest.raises(ValueError, match="not of two seats"):
        stored_game(message)
