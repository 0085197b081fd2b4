"""Several finished games in one transaction (``store_games``): the same as one by one."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.store import Store, StoreError, TournamentConfig, add_bot_version, list_matches
from arena.tournament.policy.results import store_game, store_games
from arena.tournament.policy.rounds import create_tournament

from .conftest import MakeBot
from .test_games import _report, _snapshot


def _stored(data: Path, make_bot: MakeBot, batch: int | None) -> list[tuple[object, ...]]:
    """A round robin's games stored one by one (None) or ``batch`` at a time; the
    ratings, counters and history that result, timestamps left out."""
    with Store.open(data) as store:
        for name in ("a", "b", "c"):
            add_bot_version(store, make_bot(name, f"print({name!r})\n"))
        config = TournamentConfig(games_per_match=4)
        t = create_tournament(store, "rr", "round_robin", ["a", "b", "c"], config)
        reports = []
        for match in list_matches(store, t.id):
            for index in range(match.games):
                seats = (match.first, match.second)[:: 1 if index % 2 == 0 else -1]
                winner = None if index == 3 else seats[index % 2]
                reports.append((match.id, _report(index, seats, winner)))
        if batch is None:
            for match_id, report in reports:
                store_game(store, match_id, report)
        else:
            for start in range(0, len(reports), batch):
                store_games(store, reports[start : start + batch])
        rows = _snapshot(store)
    keep = ("bot_versions", "rating_history")
    return [tuple(v for v in row if not str(v).startswith("20")) for row in rows if row[0] in keep]


@pytest.mark.parametrize("batch", [1, 2, 5, 100], ids=lambda b: f"batch-{b}")
def test_games_stored_in_batches_rate_as_one_by_one(
    tmp_path: Path, make_bot: MakeBot, batch: int
) -> None:
    one_by_one = _stored(tmp_path / "one", make_bot, None)
    assert len([r for r in one_by_one if r[0] == "rating_history"]) == 2 * 12
    assert _stored(tmp_path / "batched", make_bot, batch) == one_by_one


def test_a_batch_is_all_or_nothing_and_stores_a_game_once(
    store: Store, make_bot: MakeBot
) -> None:
    for name in ("a", "b"):
        add_bot_version(store, make_bot(name, f"print({name!r})\n"))
    config = TournamentConfig(games_per_match=2)
    t = create_tournament(store, "rr", "round_robin", ["a", "b"], config)
    match = list_matches(store, t.id)[0]
    seats = (match.first, match.second)
    good = (match.id, _report(0, seats, seats[0]))
    bad = (match.id, _report(7, seats, None))  # no game 7 in a match of 2
    before = _snapshot(store)
    with pytest.raises(StoreError, match="does not belong"):
        store_games(store, [good, bad])
    assert _snapshot(store) == before, "half a batch was stored"
    assert store_games(store, [good, good])[1] is None  # the same game twice: stored once
    assert store_games(store, [good]) == [None]
