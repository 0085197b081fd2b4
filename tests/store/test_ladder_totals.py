"""The running totals (schema v9) equal what the history gives, after any sequence of writes.

The reference is the ladder's reads from the history alone (every
ladder match and game, by SQL over ``matches`` and ``games``:
``tests/store/ladder_history.py``) and the tournament's games counted and
summed from its matches. Random sequences of bots added (new
versions too), withdrawn and brought back, ladder matches scheduled, games
stored (again, as a resumed match replays them: nothing is counted twice),
the store closed and opened again, and a round robin's games beside the
ladder's; after each step the totals, the entrants the pages read and the
tournament rows must equal the reference.
"""

from __future__ import annotations

import math
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.referee.botdir import load_bot
from arena.referee.types import GameReport
from arena.store import (
    GameRow,
    Store,
    TournamentConfig,
    add_bot_version,
    add_ladder_match,
    create_ladder,
    get_tournament,
    ladder_entrants,
    ladder_ratings,
    list_games,
    list_matches,
    set_withdrawn,
)
from arena.store.totals import LadderTotals, read_ladder_totals, read_ladder_usage
from arena.store.usage import clock
from arena.testing.examples import examples
from arena.tournament.policy.results import store_game
from arena.tournament.policy.rounds import create_tournament
from tests.store.ladder_history import (
    history_entrants,
    history_games,
    history_totals,
    history_tournament_games,
    history_usage,
    same_entrants,
)


def differences(store: Store, ladder: int, others: list[int]) -> list[str]:
    """Where the stored totals (and what is read from them) disagree with the history."""
    found = []
    db = sqlite3.connect(store.data_dir / "arena.db")
    try:
        stored = {
            v: LadderTotals(
                t.matches, t.last_match, t.in_play, t.games, t.recent[:5], t.wins, t.draws,
                t.losses,
            )
            for v, t in read_ladder_totals(db, ladder).items()
        }
        if stored != history_totals(db, ladder, 5):
            found.append(f"ladder totals {stored} != {history_totals(db, ladder, 5)}")
        _, _, per_version = history_usage(db, ladder)
        kept_usage = read_ladder_usage(db, ladder)
        now = clock(kept_usage.values())
        usage = {v: kept.at(now) for v, kept in kept_usage.items()}
        if set(per_version) - set(usage) or any(
            not math.isclose(used, per_version.get(v, 0.0), abs_tol=1e-9)
            for v, used in usage.items()
        ):
            found.append(f"runner times {usage} != {per_version}")
        for recent in (1, 3):
            if not same_entrants(
                ladder_entrants(store, ladder, recent=recent), history_entrants(db, ladder, recent)
            ):
                found.append(f"entrants with {recent} recent opponents")
        for tournament in (ladder, *others):
            row = get_tournament(store, tournament)
            counted = history_tournament_games(db, tournament)
            if (row.games_played, row.games_scheduled) != counted:
                found.append(f"tournament {tournament}: {row.games_played, row.games_scheduled}")
            for bot in (None, "a"):
                games = list_games(store, tournament_id=tournament, bot=bot, limit=1000)
                if [_game_tuple(g) for g in games] != history_games(db, tournament, bot):
                    found.append(f"tournament {tournament}'s games (bot {bot})")
    finally:
        db.close()
    return found


def _game_tuple(g: GameRow) -> tuple[object, ...]:
    """A GameRow as the row it was read from."""
    return (
        g.id, g.tournament_id, g.tournament, g.match_id, g.round, g.game_index, *g.bots,
        *g.versions, g.winner_seat, g.reason, *g.statuses, g.actions, *g.time_ms, g.finished_at,
    )  # fmt: skip


def _write_bot(root: Path, name: str, version: int) -> Path:
    directory = root / "bots" / f"{name}{version}"
    directory.mkdir(parents=True)
    (directory / "bot.toml").write_text(
        f'name = "{name}"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'
    )
    (directory / "bot.py").write_text(f"print({version})\n")
    return directory


def _report(index: int, seats: tuple[str, str], outcome: int) -> GameReport:
    winner = None if outcome == 2 else seats[outcome]
    return GameReport(
        index=index, bots_by_seat=seats, winner=winner, reason="points" if winner else "draw",
        statuses={}, actions=3, time_ms={seats[0]: 1.0, seats[1]: 2.0},
        startup_ms={} if index % 2 else {seats[0]: 40.0 + outcome},  # a half's first game
        record={"format": "kahuna-record/1", "deal": [], "actions": [], "index": index},
    )  # fmt: skip


def _play(store: Store, match_id: int, index: int, seats: tuple[str, str], outcome: int) -> None:
    store_game(store, match_id, _report(index, seats if index % 2 == 0 else seats[::-1], outcome))


BOTS = "abcde"
KINDS = ("add", "withdraw", "schedule", "play", "replay", "reopen", "cup")
Step = tuple[str, int, int]


@dataclass
class Seeded:
    """A store with three bots, a ladder and a round robin, for random write sequences."""

    root: Path
    data: Path
    versions: dict[str, int]
    store: Store
    ladder: int = 0
    cup: int = 0

    def apply(self, step: Step) -> None:
        """One write of ``step``; the store may be reopened (``self.store`` follows)."""
        self.store = _apply(
            self.store, self.data, self.root, self.versions, (self.ladder, self.cup), step
        )


@contextmanager
def seeded_store() -> Iterator[Seeded]:
    with tempfile.TemporaryDirectory(prefix="kahuna-test-") as work:
        root, data = Path(work), Path(work) / "data"
        seeded = Seeded(root, data, {name: 0 for name in BOTS[:3]}, Store.open(data))
        try:
            for name in seeded.versions:
                add_bot_version(seeded.store, load_bot(_write_bot(root, name, 0)))
            seeded.ladder = create_ladder(seeded.store, "ladder", TournamentConfig(), {})
            seeded.cup = create_tournament(
                seeded.store, "cup", "round_robin", list(seeded.versions), TournamentConfig()
            ).id
            yield seeded
        finally:
            seeded.store.close()


@pytest.mark.slow  # long: a simulation or many generated cases
@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 20), st.integers(0, 20)),
                min_size=1, max_size=30))  # fmt: skip
def test_the_totals_equal_the_history_after_any_writes(plan: list[Step]) -> None:
    """Control: the same comparison finds a total moved by one (after the last step)."""
    with seeded_store() as seeded:
        for step in plan:
            seeded.apply(step)
            assert differences(seeded.store, seeded.ladder, [seeded.cup]) == [], step
        with seeded.store.transaction() as db:  # the control
            db.execute("UPDATE ladder_totals SET games = games + 1")
            db.execute("UPDATE tournaments SET games_played = games_played + 1")
            db.execute("DELETE FROM tournament_games WHERE game_id % 2 = 0")
        assert differences(seeded.store, seeded.ladder, [seeded.cup]) != []
        with seeded.store.transaction() as db:  # the control of the runner times alone
            db.execute("UPDATE tournaments SET games_played = games_played - 1")
            db.execute("UPDATE ladder_totals SET games = games - 1")
            db.execute("INSERT INTO tournament_games SELECT m.tournament_id, g.id FROM games g"
                       " JOIN matches m ON m.id = g.match_id WHERE g.id % 2 = 0")
        assert differences(seeded.store, seeded.ladder, [seeded.cup]) == []
        with seeded.store.transaction() as db:
            db.execute("UPDATE ladder_totals SET used_ms = used_ms + 1")
            moved = db.execute("SELECT COUNT(*) FROM ladder_totals").fetchone()[0]
        assert (differences(seeded.store, seeded.ladder, [seeded.cup]) != []) == (moved > 0)


def _apply(
    store: Store,
    data: Path,
    root: Path,
    versions: dict[str, int],
    tournaments: tuple[int, int],
    step: Step,
) -> Store:
    """One write of ``step`` (kind, a, b); the store to go on with."""
    kind, a, b = step
    ladder, cup = tournaments
    if kind == "add":  # a new bot, or a new version of one (it comes back if withdrawn)
        name = BOTS[a % len(BOTS)]
        versions[name] = versions.get(name, -1) + 1
        add_bot_version(store, load_bot(_write_bot(root, name, versions[name])))
    elif kind == "withdraw":
        set_withdrawn(store, list(versions)[a % len(versions)], bool(b % 2))
    elif kind == "schedule":
        entrants = [r.version_id for r in ladder_ratings(store)]
        if len(entrants) >= 2:
            first = entrants[a % len(entrants)]
            second = entrants[(a + 1 + b % (len(entrants) - 1)) % len(entrants)]
            add_ladder_match(store, ladder, first, second, games=2, seed=a)
    elif kind in ("play", "replay", "cup"):
        matches = list_matches(store, cup if kind == "cup" else ladder)
        if kind == "replay":  # a resumed match plays a stored game again: not counted twice
            pool = [m for m in matches if m.games_played]
        else:
            pool = [m for m in matches if len(m.games_played) < m.games]
        if pool:
            match = pool[a % len(pool)]
            if kind == "replay":
                index = match.games_played[0]
            else:
                index = min(set(range(match.games)) - set(match.games_played))
            _play(store, match.id, index, (match.first, match.second), b % 3)
    elif kind == "reopen":  # a restart: the runner's resume reads the same store
        store.close()
        store = Store.open(data)
    return store
