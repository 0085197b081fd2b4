"""A ladder's standings in /api/tournaments/ID, WatchTournament and ``arena tournament
status`` (``tournament_table``) equal its standings on /ladder and GetLadder as the
history gives them, after any writes.

The reference ranks the entrants read from the history alone, with no running
totals (``tests/store/ladder_history.history_entrants``: every ladder
match and game, by SQL) by conservative rating, ties by name, with each
version's ladder games and its ladder games won, drawn and lost. The writes
are test_ladder_totals' random sequences (bots added and withdrawn, ladder
matches scheduled, games stored and replayed, the store reopened, a round
robin's games beside). A round robin's table stays the one scored from its
games (the views' computation from the games).
"""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.commands.tournament import status_to_json
from arena.store import (
    Store,
    conservative_rating,
    get_tournament,
)
from arena.testing.examples import examples
from arena.tournament.policy.results import tournament_intervals, tournament_standings
from arena.tournament.view.ladder_view import ladder_view
from arena.tournament.view.table import NO_INTERVALS, tournament_table
from arena.web.source import StoreSource
from tests.store.ladder_history import history_entrants
from tests.store.test_ladder_totals import KINDS, Step, seeded_store

Row = tuple[int, str, float, int, int, int, int]  # rank, bot, points (mu - 3 sigma), games, W D L


def history_table(store: Store, ladder: int) -> list[Row]:
    """The ladder's rows as the history gives them, ranked as /ladder ranks them."""
    db = sqlite3.connect(store.data_dir / "arena.db")
    try:
        entrants = history_entrants(db, ladder, 2)
    finally:
        db.close()
    ordered = sorted(entrants, key=lambda e: (-conservative_rating(e.mu, e.sigma), e.bot))
    return [
        (i + 1, e.bot, conservative_rating(e.mu, e.sigma), e.ladder_games, e.wins, e.draws,
         e.losses)
        for i, e in enumerate(ordered)
    ]


def differences(store: Store, ladder: int, cup: int, source: StoreSource) -> list[str]:
    """Where the views' tables disagree with the reference (``source``: the web's, kept
    from step to step as a server keeps it, with its page cache)."""
    found = []
    expected = history_table(store, ladder)
    standings, intervals = tournament_table(store, get_tournament(store, ladder))
    table = [(s.rank, s.bot, s.points, s.games, s.wins, s.draws, s.losses) for s in standings]
    if table != expected:
        found.append(f"ladder table {table} != {expected}")
    if intervals != NO_INTERVALS:
        found.append("a ladder's intervals")
    if any((s.byes, s.buchholz, s.sonneborn_berger) != (0,) * 3 for s in standings):
        found.append("a ladder row with scores it does not keep")
    shown = source.tournament(ladder)
    assert shown is not None
    page = [(r.rank, r.bot, r.score, r.played, r.wins, r.draws, r.losses) for r in shown.standings]
    if page != expected:
        found.append(f"/api/tournaments/{ladder} {page} != {expected}")
    if shown.crosstable or shown.separation_notes:
        found.append("a ladder's crosstable or notes (read from every game)")
    status = status_to_json(store, get_tournament(store, ladder))  # arena tournament status
    rows = status["standings"]
    assert isinstance(rows, list)
    if [(r["rank"], r["bot"], r["points"], r["games"], r["wins"], r["draws"], r["losses"])
            for r in rows] != expected:  # fmt: skip
        found.append(f"arena tournament status {rows}")
    if status["crosstable"] or status["separation_notes"]:
        found.append("arena tournament status: a ladder's crosstable or notes")
    on_ladder = [(s.rank, s.entrant.bot) for s in ladder_view(store, "ladder").standings]
    if on_ladder != [(row[0], row[1]) for row in expected]:
        found.append(f"/ladder ranks {on_ladder}")
    row = get_tournament(store, cup)
    if tournament_table(store, row) != (
        tournament_standings(store, cup), tournament_intervals(store, row)
    ):  # fmt: skip
        found.append("the round robin's table")
    return found


@pytest.mark.slow  # long: a simulation or many generated cases
@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 20), st.integers(0, 20)),
                min_size=1, max_size=25))  # fmt: skip
def test_a_ladders_table_equals_its_ranking_from_the_history(plan: list[Step]) -> None:
    """Control: the same comparison finds a ladder's games moved by one (after the last step)."""
    with seeded_store() as seeded:
        source = StoreSource(seeded.store)
        for step in plan:
            seeded.apply(step)
            if source.store is not seeded.store:  # reopened: a server restarts with it
                source = StoreSource(seeded.store)
            assert differences(seeded.store, seeded.ladder, seeded.cup, source) == [], step
        with seeded.store.transaction() as db:  # the control: seen wherever a shown bot has totals
            counted = {r[0] for r in db.execute("SELECT bot_version_id FROM ladder_totals")}
            shown = {e.version_id for e in history_entrants(db, seeded.ladder, 2)}
            db.execute("UPDATE ladder_totals SET games = games + 1")
        assert (differences(seeded.store, seeded.ladder, seeded.cup, source) != []) == bool(
            counted & shown
        )
