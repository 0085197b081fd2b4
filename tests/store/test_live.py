"""Live games: entries appended in order, a replayed game starts afresh, storing ends it."""

from __future__ import annotations

import pytest

from arena.referee.types import GameReport
from arena.store import (
    NotFoundError,
    Store,
    StoreError,
    TournamentConfig,
    TournamentStatus,
    acquire_lease,
    add_bot_version,
    add_live_actions,
    end_live_game,
    find_game,
    get_live_game,
    in_play_at,
    list_live_games,
    list_matches,
    live_entries,
    set_status,
    start_live_game,
)
from arena.tournament.policy.results import store_game
from arena.tournament.policy.rounds import create_tournament

from .conftest import MakeBot

HEAD = {"format": "kahuna-record/1", "deal": ["HUNA"], "bots": ["a", "b"]}


@pytest.fixture
def match_id(store: Store, make_bot: MakeBot) -> int:
    for name in ("a", "b"):
        add_bot_version(store, make_bot(name, f"print({name!r})\n"))
    create_tournament(store, "t", "round_robin", ["a", "b"], TournamentConfig())
    return list_matches(store, 1)[0].id


def test_entries_come_back_in_order_and_after_a_position(store: Store, match_id: int) -> None:
    live_id = start_live_game(store, match_id, 0, HEAD)
    assert add_live_actions(store, match_id, 0, [{"seat": 0, "type": "pass"}]) == 1
    assert add_live_actions(store, match_id, 0, [{"seat": 1, "type": "draw"}] * 2) == 3
    live = get_live_game(store, match_id, 0)
    assert (live.id, live.head, live.actions, live.tournament_id) == (live_id, HEAD, 3, 1)
    assert [e.seq for e in live_entries(store, live_id)] == [0, 1, 2]
    assert [e.entry for e in live_entries(store, live_id, after_seq=1)] == [
        {"seat": 1, "type": "draw"}
    ]
    assert [g.game_index for g in list_live_games(store, tournament_id=1)] == [0]


def test_a_game_played_again_starts_afresh(store: Store, match_id: int) -> None:
    start_live_game(store, match_id, 1, HEAD)
    add_live_actions(store, match_id, 1, [{"seat": 1, "type": "pass"}])
    again = start_live_game(store, match_id, 1, {**HEAD, "try": 2})
    assert live_entries(store, again) == []
    assert get_live_game(store, match_id, 1).head["try"] == 2


def test_storing_the_game_ends_its_live_view(store: Store, match_id: int) -> None:
    live_id = start_live_game(store, match_id, 0, HEAD)
    add_live_actions(store, match_id, 0, [{"seat": 0, "type": "pass"}])
    report = GameReport(
        index=0, bots_by_seat=("a", "b"), winner="a", reason="points", statuses={},
        actions=1, time_ms={}, record={"format": "kahuna-record/1"},
    )  # fmt: skip
    game_id = store_game(store, match_id, report)
    assert list_live_games(store) == [] and live_entries(store, live_id) == []
    found = find_game(store, match_id, 0)
    assert found is not None and found.id == game_id
    assert find_game(store, match_id, 1) is None


@pytest.mark.parametrize(
    ("match_delta", "game_index", "error"),
    [(1000, 0, NotFoundError), (0, 2, StoreError), (0, -1, StoreError)],
    ids=["no-match", "index-past-games", "negative-index"],
)
def test_bad_live_games_are_refused(
    store: Store, match_id: int, match_delta: int, game_index: int, error: type[Exception]
) -> None:
    with pytest.raises(error):
        start_live_game(store, match_id + match_delta, game_index, HEAD)
    assert list_live_games(store) == []


def test_actions_need_a_started_game_and_end_drops_it(store: Store, match_id: int) -> None:
    with pytest.raises(NotFoundError, match="not being played"):
        add_live_actions(store, match_id, 0, [{"seat": 0, "type": "pass"}])
    start_live_game(store, match_id, 0, HEAD)
    end_live_game(store, match_id, 0)
    with pytest.raises(NotFoundError):
        get_live_game(store, match_id, 0)


def test_a_stopped_runner_s_live_views_are_no_games_in_play(store: Store, match_id: int) -> None:
    """A runner stopped (Ctrl-C, SIGTERM, a full disk, kill -9) leaves its live views until
    its next run: while no process runs the tournament (it reads interrupted) no page or call
    offers them as games in play, which would never move again."""
    set_status(store, 1, TournamentStatus.RUNNING)
    cut = "9999-01-01T00:00:00.000+00:00"  # every start is before it
    with acquire_lease(store, 1, name="t"):
        start_live_game(store, match_id, 0, HEAD)
        add_live_actions(store, match_id, 0, [{"seat": 0, "type": "pass"}])
        assert [g.game_index for g in list_live_games(store)] == [0]
        assert get_live_game(store, match_id, 0).actions == 1
        assert [(g.match_id, g.game_index) for g in in_play_at(store, cut)] == [(match_id, 0)]
    # the runner is gone (its lease with it); the live view is still stored
    assert list_live_games(store) == [] and list_live_games(store, tournament_id=1) == []
    with pytest.raises(NotFoundError, match="not being played"):
        get_live_game(store, match_id, 0)
    assert in_play_at(store, cut) == [] and in_play_at(store, cut, tournament_id=1) == []
    with acquire_lease(store, 1, name="t"):  # its next run finds it, and drops it
        assert [g.game_index for g in list_live_games(store, tournament_id=1)] == [0]
