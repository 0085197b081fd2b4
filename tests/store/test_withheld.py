"""``record_withheld`` / ``revealed_record``: which stored records are public, table-driven.

A paired game's record waits for every other game of its deal (2k and 2k+1)
while the match and its tournament can still play them; unpaired games do not
wait; the admin never waits.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from arena import store as st
from arena.kahuna import play_random_game
from arena.testing.demo_data import add_demo_bots, report_for
from arena.tournament.policy.results import store_game
from arena.tournament.policy.rounds import create_tournament

ADMIN = st.Principal("root", "admin")
USER = st.Principal("carol", "user")


def _match(store: st.Store, tmp_path: Path, games: int) -> tuple[int, int]:
    add_demo_bots(store, tmp_path / "bots", ["a", "b"])
    config = st.TournamentConfig(games_per_match=games, seed=1)
    tournament = create_tournament(store, "t", st.TournamentFormat.ROUND_ROBIN, ["a", "b"], config)
    st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
    [match] = st.list_matches(store, tournament.id)
    return tournament.id, match.id


def _store(store: st.Store, match_id: int, index: int, match: dict[str, object] | None) -> int:
    seats = ("a", "b") if index % 2 == 0 else ("b", "a")
    report = report_for(index, seats, play_random_game(index))
    record = dict(report.record) if match is None else {**report.record, "match": match}
    game_id = store_game(store, match_id, replace(report, record=record))
    assert game_id is not None
    return game_id


def _paired(index: int) -> dict[str, object]:
    return {"paired": True, "deal_index": index // 2}


@pytest.mark.parametrize(
    ("games", "stored", "asked", "waits"),
    [
        (4, [0], 0, (1,)),  # the first of a pair: waits for the second
        (4, [1], 1, (0,)),  # the odd half stored first: waits for the even one
        (4, [0, 1], 0, ()),  # the deal is played out
        (4, [0, 1, 2], 2, (3,)),  # the next deal: its own pair
        (4, [0, 1, 2], 1, ()),
        (4, [0, 3], 3, (2,)),
    ],
    ids=["first", "odd-first", "pair-done", "next-deal", "earlier-pair", "other-deal"],
)
def test_a_paired_record_waits_for_its_deal(
    store: st.Store, tmp_path: Path, games: int, stored: list[int], asked: int,
    waits: tuple[int, ...],
) -> None:  # fmt: skip
    _, match = _match(store, tmp_path, games)
    ids = {index: _store(store, match, index, _paired(index)) for index in stored}
    withheld = st.record_withheld(store, ids[asked])
    assert (withheld.waiting_for if withheld else ()) == waits
    assert st.revealed_record(store, ids[asked], ADMIN) == st.game_record(store, ids[asked])
    if waits:
        assert withheld is not None
        with pytest.raises(st.RecordWithheldError, match=f"until game {waits[0]} of match"):
            st.revealed_record(store, ids[asked], USER)
        with pytest.raises(st.RecordWithheldError):
            st.revealed_record(store, ids[asked], None)
    else:
        assert st.revealed_record(store, ids[asked], USER) == st.game_record(store, ids[asked])


@pytest.mark.parametrize(
    ("match", "withheld"),
    [
        ({"paired": False, "deal_index": 0}, False),  # a fresh deal per game
        (None, True),  # an older record without "paired": every match was paired then
        ({"deal_index": 0}, True),
    ],
    ids=["unpaired", "no-match-section", "no-paired-key"],
)
def test_what_the_record_says_of_its_pairing(
    store: st.Store, tmp_path: Path, match: dict[str, object] | None, withheld: bool
) -> None:
    _, match_id = _match(store, tmp_path, 2)
    game = _store(store, match_id, 0, match)
    assert (st.record_withheld(store, game) is not None) is withheld


def test_a_finished_tournament_reveals_a_half_played_deal(store: st.Store, tmp_path: Path) -> None:
    tournament, match = _match(store, tmp_path, 4)
    game = _store(store, match, 0, _paired(0))
    assert st.record_withheld(store, game) is not None
    st.set_status(store, tournament, st.TournamentStatus.FINISHED)
    assert st.record_withheld(store, game) is None


def test_an_odd_last_game_has_no_partner(store: st.Store, tmp_path: Path) -> None:
    _, match = _match(store, tmp_path, 3)
    assert st.record_withheld(store, _store(store, match, 2, _paired(2))) is None


def test_an_unknown_game_is_not_found(store: st.Store) -> None:
    with pytest.raises(st.NotFoundError):
        st.record_withheld(store, 12345)
