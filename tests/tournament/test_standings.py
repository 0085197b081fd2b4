"""Standings with Buchholz and Sonneborn-Berger, and the crosstable."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena import store as st
from arena.testing.demo_data import add_demo_bots, play_games
from arena.tournament.policy.results import tournament_standings
from arena.tournament.policy.rounds import create_tournament
from arena.tournament.rating.standings import GameOutcome, compute_standings, crosstable

# Three bots, two games a match: a beats b 2-0, b and c draw 1-1, a and c split 1-1.
GAMES = [
    GameOutcome(1, ("a", "b"), "a"),
    GameOutcome(1, ("b", "a"), "a"),
    GameOutcome(2, ("b", "c"), None),
    GameOutcome(2, ("c", "b"), None),
    GameOutcome(3, ("a", "c"), "c"),
    GameOutcome(3, ("c", "a"), "a"),
]


def test_points_and_tie_breaks() -> None:
    rows = {s.bot: s for s in compute_standings(["a", "b", "c"], GAMES)}
    assert (rows["a"].points, rows["b"].points, rows["c"].points) == (3.0, 1.0, 2.0)
    assert (rows["a"].wins, rows["a"].draws, rows["a"].losses) == (3, 0, 1)
    assert (rows["b"].wins, rows["b"].draws, rows["b"].losses) == (0, 2, 2)
    assert rows["a"].buchholz == pytest.approx(1.0 + 2.0)
    # a: 2/2 of b's 1 point + 1/2 of c's 2 points
    assert rows["a"].sonneborn_berger == pytest.approx(1.0 + 1.0)
    assert [r.bot for r in compute_standings(["a", "b", "c"], GAMES)] == ["a", "c", "b"]


def test_tie_on_points_is_broken_by_buchholz_then_sonneborn_berger() -> None:
    games = [
        GameOutcome(1, ("x", "weak"), "x"),
        GameOutcome(2, ("y", "strong"), "y"),
        GameOutcome(3, ("strong", "weak"), "strong"),
    ]
    order = [s.bot for s in compute_standings(["x", "y", "weak", "strong"], games)]
    # x and y both have 1 point; y beat the stronger opponent (higher Buchholz).
    assert order.index("y") < order.index("x")


def test_byes_score_bye_points_and_are_counted() -> None:
    rows = {s.bot: s for s in compute_standings(["a", "b"], [], byes={"a": 1}, bye_points=2.0)}
    assert rows["a"].points == 2.0 and rows["a"].byes == 1 and rows["a"].games == 0
    assert rows["b"].rank == 2


def test_crosstable_sums_points_per_opponent() -> None:
    table = crosstable(GAMES)
    assert table[("a", "b")] == 2.0 and table[("b", "a")] == 0.0
    assert table[("b", "c")] == 1.0 and table[("c", "a")] == 1.0


def _matches(games_per_match: int, results: list[tuple[str, str, int]]) -> list[GameOutcome]:
    """Games of matches without draws: (first, second, games the first won)."""
    out = []
    for match_id, (first, second, won) in enumerate(results, start=1):
        for k in range(games_per_match):
            seats = (first, second) if k % 2 == 0 else (second, first)
            out.append(GameOutcome(match_id, seats, first if k < won else second))
    return out


def test_equal_sonneborn_berger_falls_to_the_next_tie_break_whatever_the_fractions() -> None:
    # Three games a match: b1 and b2 tie on points (4), Buchholz (14) and
    # Sonneborn-Berger (2 * 3/3 + 8 * 1/3 = 4 * 3/3 + 2 * 1/3 = 14/3, summed in another
    # order) and wins (4): the name decides, b1 first, not the last bit of a float.
    games = _matches(
        3,
        [("b0", "b1", 0), ("b1", "b2", 0), ("b2", "b3", 0),
         ("b0", "b3", 0), ("b1", "b3", 1), ("b0", "b2", 2)],
    )  # fmt: skip
    rows = compute_standings(["b0", "b1", "b2", "b3"], games)
    tied = {r.bot: (r.points, r.buchholz, r.wins) for r in rows if r.bot in ("b1", "b2")}
    assert tied == {"b1": (4.0, 14.0, 4), "b2": (4.0, 14.0, 4)}
    assert [r.bot for r in rows] == ["b3", "b1", "b2", "b0"]
    assert {r.sonneborn_berger for r in rows if r.bot in ("b1", "b2")} == {14 / 3}


def test_a_round_robins_bye_counts_once_its_round_is_played(tmp_path: Path) -> None:
    """A round robin stores every round, with its bye, at creation: no bot has sat a
    round out before any game (its table read "byes 1" for each of three bots), and
    a bye counts once every match of its round is played."""
    with st.Store.open(tmp_path / "data") as store:
        add_demo_bots(store, tmp_path / "bots", ["ann", "bob", "cid"])
        cup = create_tournament(store, "cup", "round_robin", ["ann", "bob", "cid"],
                                st.TournamentConfig(games_per_match=2))  # fmt: skip
        sat_out = st.tournament_byes(store, cup.id)  # round -> bot
        seen = []
        for games in (0, 1, 1, 4):  # none; half of round 1; all of round 1; all
            play_games(store, cup.id, max_games=games)
            seen.append({s.bot: s.byes for s in tournament_standings(store, cup.id)})
    none = dict.fromkeys(["ann", "bob", "cid"], 0)
    assert seen == [none, none, {**none, sat_out[1]: 1}, dict.fromkeys(none, 1)]
