"""The ladder's rows: schema v6 migration, entrants, matches, withdrawn bots."""

from __future__ import annotations

import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.referee.botdir import load_bot
from arena.referee.types import GameReport
from arena.store import (
    CURRENT_VERSION,
    AdminWithdrawnError,
    LadderHistory,
    Store,
    StoreError,
    TournamentConfig,
    WithdrawnBy,
    add_bot_version,
    add_ladder_match,
    bot_owners,
    create_ladder,
    find_ladder,
    get_tournament,
    is_withdrawn,
    join_owners,
    ladder_entrants,
    ladder_history,
    ladder_ratings,
    ladder_settings,
    ladder_usage,
    list_matches,
    set_ladder_settings,
    set_withdrawn,
    unfinished_matches,
    version_bots,
)
from arena.store.models import TournamentFormat
from arena.store.schema import MIGRATIONS, WITHDRAWN_BY, run_step
from arena.testing.examples import examples
from arena.tournament.orchestration.ladder import contenders, history_after, rated_contenders
from arena.tournament.policy.results import store_game
from tests.store.conftest import MakeBot


def test_a_v5_store_is_migrated_with_every_tournament_row_and_reference_kept(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = sqlite3.connect(data / "arena.db")
    for step in MIGRATIONS[:5]:
        run_step(db, step)
    db.execute("INSERT INTO bots (id, name, created_at) VALUES (1, 'old', 't')")
    db.execute(
        "INSERT INTO bot_versions (id, bot_id, version, directory, command, runtime, created_at,"
        " mu, sigma) VALUES (7, 1, 'v', 'd', '[]', 'python', 't', 30, 2)"
    )
    db.execute(
        "INSERT INTO tournaments (id, name, format, status, config, created_at, secret)"
        " VALUES (3, 'cup', 'swiss', 'finished', '{}', 't', x'00')"
    )
    db.execute("INSERT INTO entrants VALUES (3, 7, 0)")
    db.execute(
        "INSERT INTO matches (id, tournament_id, round, first_id, second_id, games, seed)"
        " VALUES (11, 3, 1, 7, 7, 2, 5)"
    )
    db.execute("PRAGMA user_version = 5")
    db.commit()
    db.close()
    with Store.open(data) as store:
        cup = get_tournament(store, "cup")
        assert (cup.id, cup.format, cup.entrants) == (3, TournamentFormat.SWISS, ("old",))
        assert [m.id for m in list_matches(store, 3)] == [11]
        assert not is_withdrawn(store, "old")
        ladder = create_ladder(store, "ladder", TournamentConfig(), {})
        assert get_tournament(store, ladder).format is TournamentFormat.LADDER
    check = sqlite3.connect(data / "arena.db")
    assert check.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
    assert check.execute("PRAGMA foreign_key_check").fetchall() == []
    assert check.execute("SELECT secret FROM tournaments WHERE id = 3").fetchone()[0] == b"\0"


def test_entrants_are_the_latest_versions_of_active_bots_with_their_history(
    store: Store, make_bot: MakeBot
) -> None:
    for name in ("a", "b", "c"):
        add_bot_version(store, make_bot(name))
    newer, _ = add_bot_version(store, make_bot("a", "print('v2')\n"))
    ladder = create_ladder(store, "ladder", TournamentConfig(), {"max_repeat": 1})
    rows = {r.bot: r for r in ladder_entrants(store, ladder)}
    assert set(rows) == {"a", "b", "c"} and rows["a"].version == newer.version
    a, b, c = rows["a"].version_id, rows["b"].version_id, rows["c"].version_id
    add_ladder_match(store, ladder, a, b, games=2, seed=1)
    add_ladder_match(store, ladder, c, a, games=2, seed=2)
    rows = {r.bot: r for r in ladder_entrants(store, ladder, recent=2)}
    assert (rows["a"].matches, rows["a"].last_match, rows["a"].in_play) == (2, 2, 2)
    assert rows["a"].recent == (c, b)
    assert (rows["b"].matches, rows["b"].recent) == (1, (a,))
    assert [m.round for m in unfinished_matches(store, ladder)] == [1, 2]
    set_withdrawn(store, "b", True)
    assert {r.bot for r in ladder_entrants(store, ladder)} == {"a", "c"}
    add_bot_version(store, make_bot("b", "print('v2')\n"))  # a new version comes back
    assert {r.bot for r in ladder_entrants(store, ladder)} == {"a", "b", "c"}


def test_settings_are_stored_and_names_are_checked(store: Store) -> None:
    ladder = create_ladder(store, "ladder", TournamentConfig(), {"placement_matches": 3})
    assert find_ladder(store, "ladder") == ladder and find_ladder(store, "nope") is None
    set_ladder_settings(store, ladder, TournamentConfig(games_per_match=4), {"max_repeat": 2})
    config, settings = ladder_settings(store, ladder)
    assert (config.games_per_match, settings) == (4, {"max_repeat": 2})
    with pytest.raises(StoreError, match="already exists"):
        create_ladder(store, "ladder", TournamentConfig(), {})
    with pytest.raises(StoreError, match="no bot 'ghost'"):
        set_withdrawn(store, "ghost", True)


@pytest.mark.parametrize(
    ("owner", "first", "then", "withdrawn_after", "refused"),
    [
        ("uma", "owner", (False, "owner"), False, False),
        ("uma", "arena", (False, "owner"), False, False),
        ("uma", "admin", (False, "owner"), True, True),  # the admin's withdrawal stands
        ("uma", "admin", (True, "owner"), True, False),  # ... and stays the admin's
        ("uma", "admin", (False, "admin"), False, False),
        ("uma", "owner", (False, "admin"), False, False),
        (None, "admin", (False, "admin"), False, False),
    ],
)
def test_only_the_admin_brings_back_a_bot_the_admin_withdrew(
    store: Store, make_bot: MakeBot, owner: str | None, first: WithdrawnBy,
    then: tuple[bool, WithdrawnBy], withdrawn_after: bool, refused: bool,
) -> None:  # fmt: skip
    add_bot_version(store, make_bot("b"), owner=owner)
    set_withdrawn(store, "b", True, by=first)
    if refused:
        words = "withdrawn from the ladder by the arena's admin: only the admin can bring"
        with pytest.raises(AdminWithdrawnError, match=words):
            set_withdrawn(store, "b", then[0], by=then[1])
    else:
        set_withdrawn(store, "b", then[0], by=then[1])
    assert is_withdrawn(store, "b") is withdrawn_after
    if first == "admin" and then == (True, "owner"):  # still not the owner's to undo
        with pytest.raises(AdminWithdrawnError):
            set_withdrawn(store, "b", False, by="owner")


@pytest.mark.parametrize(
    ("owner", "by", "back"),
    [("uma", "owner", True), ("uma", "arena", True), ("uma", "admin", False),
     (None, "admin", True)],  # the admin's own bot: the admin adds the version
)  # fmt: skip
def test_a_new_version_brings_a_bot_back_unless_the_admin_withdrew_a_users_bot(
    store: Store, make_bot: MakeBot, owner: str | None, by: WithdrawnBy, back: bool
) -> None:
    add_bot_version(store, make_bot("b"), owner=owner)
    set_withdrawn(store, "b", True, by=by)
    add_bot_version(store, make_bot("b", "print('v2')\n"), owner=owner)
    assert is_withdrawn(store, "b") is not back


def test_withdrawals_stored_before_their_withdrawer_was_kept_are_the_owners(
    tmp_path: Path,
) -> None:
    """A store at the version before WITHDRAWN_BY: a user's withdrawn bot can be brought
    back by its owner as before; the admin's own withdrawn bot is the admin's."""
    data = tmp_path / "data"
    data.mkdir()
    step = MIGRATIONS.index(WITHDRAWN_BY)
    with closing(sqlite3.connect(data / "arena.db")) as db:
        for migration in MIGRATIONS[:step]:
            run_step(db, migration)
        db.executemany(
            "INSERT INTO bots (id, name, owner, created_at, withdrawn_at) VALUES (?, ?, ?, 't', ?)",
            [(1, "mine", "uma", "t"), (2, "house", None, "t"), (3, "on", "uma", None)],
        )
        db.execute(f"PRAGMA user_version = {step}")
        db.commit()
    with Store.open(data) as store:
        set_withdrawn(store, "mine", False, by="owner")
        with pytest.raises(AdminWithdrawnError):
            set_withdrawn(store, "house", False, by="owner")
        assert not is_withdrawn(store, "on") and is_withdrawn(store, "house")
    with closing(sqlite3.connect(data / "arena.db")) as check:
        assert check.execute("PRAGMA user_version").fetchone()[0] == CURRENT_VERSION
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            check.execute("UPDATE bots SET withdrawn_by = 'mallory' WHERE id = 1")


OWNERS = {"a": "uma", "b": None, "c": "uma", "d": "vic", "e": None}
"""Bot owners: uma's "c" is withdrawn on the way."""


@pytest.mark.slow  # long: a simulation or many generated cases
@settings(max_examples=examples(25), deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(1, 4)), min_size=1, max_size=40),
    st.integers(1, 3),
    st.integers(0, 39),
)
def test_the_history_a_runner_keeps_is_the_stored_one_and_gives_the_same_contenders(
    pairs: list[tuple[int, int]], keep: int, withdrawn_after: int
) -> None:
    """What ``LadderRunner`` keeps (``ladder_history`` once, then ``history_after`` per match it
    stores) equals what the store gives after every match, so its picks are those of
    ``ladder_entrants``; one bot is withdrawn on the way (its history is kept, it is no
    longer an entrant, and its owner's other bot waits from their owner's turn); each
    match's first game is stored, its seats' times charged to their owners. Control:
    the history kept before a match differs from the stored one after it, so a runner that
    stopped keeping it would fail here."""
    with tempfile.TemporaryDirectory(prefix="kahuna-test-") as work, Store.open(
        Path(work) / "data"
    ) as store:
        for name in "abcde":
            directory = Path(work) / "bots" / name
            directory.mkdir(parents=True)
            (directory / "bot.toml").write_text(
                f'name = "{name}"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'
            )
            (directory / "bot.py").write_text("print('hello')\n")
            add_bot_version(store, load_bot(directory), owner=OWNERS[name])
        ladder = create_ladder(store, "ladder", TournamentConfig(), {})
        ids = [r.version_id for r in ladder_entrants(store, ladder)]
        kept = ladder_history(store, ladder, recent=keep)
        assert kept == {}
        for number, (a, step) in enumerate(pairs, start=1):
            first, second = ids[a], ids[(a + step) % 5]
            match_id = add_ladder_match(store, ladder, first, second, games=2, seed=number)
            seats = ("abcde"[a], "abcde"[(a + step) % 5])
            store_game(store, match_id, GameReport(
                index=0, bots_by_seat=seats, winner=seats[0], reason="points", statuses={},
                actions=3, time_ms={seats[0]: 7.0 * a + step, seats[1]: 1.5}, record={},
            ))  # fmt: skip
            before = dict(kept)
            for version, opponent in ((first, second), (second, first)):
                old = kept.get(version, LadderHistory())
                kept[version] = history_after(old, opponent, number, keep)
            assert kept == ladder_history(store, ladder, recent=keep)
            assert before != kept  # the control
            if number == withdrawn_after:
                set_withdrawn(store, "c", True)
            in_play = {ids[a]: number % 3}
            bot_of = version_bots(store)  # a bot's versions place once, together
            owner_of = bot_owners(store)  # a user's bots share the user's turns
            usage = ladder_usage(store, ladder)  # the runner time each owner's bots used
            state = rated_contenders(
                ladder_ratings(store), kept, in_play, bot_of, owner_of, usage, 2
            )
            assert state == contenders(ladder_entrants(store, ladder, recent=keep), in_play, 2)
            assert any(c.owner_used > 0 for c in state)  # the control: times are compared


USAGE_RESETS = [
    ("withdrawn and returned", "a", lambda store, make: (
        set_withdrawn(store, "a", True, by="owner"), set_withdrawn(store, "a", False, by="owner"))),
    ("a new version", "a", lambda store, make: add_bot_version(
        store, make("a", "print('new')\n"), owner="uma")),
    ("a new bot", "a2", lambda store, make: add_bot_version(store, make("a2"), owner="uma")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("then", "entrant"), [c[1:][::-1] for c in USAGE_RESETS], ids=[c[0] for c in USAGE_RESETS]
)
def test_nothing_an_owner_does_to_its_bots_resets_its_runner_time(
    store: Store, make_bot: MakeBot, then: object, entrant: str
) -> None:
    """An owner's time is every game of all its bots and versions: withdrawing and returning
    a bot, a new version or a new bot starts from it (and a new version does not place
    again), so none buys the owner turns ahead of the others."""
    add_bot_version(store, make_bot("a"), owner="uma")
    add_bot_version(store, make_bot("b"), owner="vic")
    ladder = create_ladder(store, "ladder", TournamentConfig(), {})
    first, second = (r.version_id for r in ladder_entrants(store, ladder))
    match_id = add_ladder_match(store, ladder, first, second, games=2, seed=1)
    store_game(store, match_id, GameReport(
        index=0, bots_by_seat=("a", "b"), winner="a", reason="points", statuses={},
        actions=3, time_ms={"a": 900.0, "b": 100.0}, record={}, startup_ms={"a": 5000.0},
    ))  # fmt: skip
    used = {r.bot: r.owner_used_ms for r in ladder_entrants(store, ladder)}["a"]
    assert used > 5000.0  # its start-up with its thinking (decayed by the game's charges)
    then(store, make_bot)  # type: ignore[operator]
    after = {r.bot: r for r in ladder_entrants(store, ladder)}[entrant]
    assert after.owner_used_ms == used
    assert after.bot_matches == (1 if entrant == "a" else 0)


def _play(store: Store, ladder: int, first: str, second: str, ms: tuple[float, float]) -> None:
    """Store a ladder match of bots ``first`` and ``second``, its one game charging ``ms``."""
    ids = {r.bot: r.version_id for r in ladder_entrants(store, ladder)}
    match_id = add_ladder_match(store, ladder, ids[first], ids[second], games=1, seed=1)
    store_game(store, match_id, GameReport(
        index=0, bots_by_seat=(first, second), winner=first, reason="points", statuses={},
        actions=3, time_ms={first: ms[0], second: ms[1]}, record={},
    ))  # fmt: skip


def _away(store: Store, make: MakeBot, ladder: int) -> None:
    set_withdrawn(store, "c", True, by="owner")
    join_owners(store, ladder)  # the runner sees wes leave
    for _ in range(3):
        _play(store, ladder, "a", "b", (4000.0, 2000.0))
    set_withdrawn(store, "c", False, by="owner")


JOINS = [
    ("a new owner starts from the least-used owner's time", "d", True,
     lambda store, make, ladder: add_bot_version(store, make("d"), owner="xan")),
    ("an owner back after time away starts from the least-used owner's time", "c", True,
     _away),
    ("an owner's new bot beside its other is no joining", "c2", False,
     lambda store, make, ladder: add_bot_version(store, make("c2"), owner="wes")),
    ("moving to one's other bot is no joining", "c2", False,
     lambda store, make, ladder: (add_bot_version(store, make("c2"), owner="wes"),
                                  join_owners(store, ladder),
                                  set_withdrawn(store, "c", True, by="owner"))),
    ("a new bot of the admin's is its own owner, lifted too", "h", True,
     lambda store, make, ladder: add_bot_version(store, make("h"))),
]  # fmt: skip


@pytest.mark.parametrize(
    ("bot", "lifted", "then"), [c[1:] for c in JOINS], ids=[c[0] for c in JOINS]
)
def test_an_owner_joining_the_ladder_starts_from_the_least_used_owners_time(
    tmp_path: Path, store: Store, make_bot: MakeBot, bot: str, lifted: bool, then: object
) -> None:
    """An owner who joins (new, or back after having no entrant) is lifted to the lowest
    time among the owners that stayed, so it does not play first in every match until its
    time catches up; the page shows it at once, the runner's look stores it, a restart
    keeps it; an owner that stayed (whatever it does among its own bots) is left as it is."""
    for name, owner in (("a", "uma"), ("b", "vic"), ("c", "wes")):
        add_bot_version(store, make_bot(name), owner=owner)
    ladder = create_ladder(store, "ladder", TournamentConfig(), {})
    _play(store, ladder, "a", "b", (9000.0, 3000.0))
    _play(store, ladder, "c", "b", (2000.0, 3000.0))
    join_owners(store, ladder)  # the runner's first look: nobody is lifted
    used = {r.bot: r.owner_used_ms for r in ladder_entrants(store, ladder)}
    assert used["c"] < used["b"] < used["a"]  # wes has used the least, and keeps it
    then(store, make_bot, ladder)  # type: ignore[operator]
    rows = {r.bot: r for r in ladder_entrants(store, ladder)}
    owner = rows[bot].owner or rows[bot].bot_id
    floor = min(r.owner_used_ms for r in rows.values() if (r.owner or r.bot_id) != owner)
    shown = rows[bot].owner_used_ms
    lifts, on = join_owners(store, ladder)
    with Store.open(tmp_path / "data") as reopened:  # a restart keeps the lift
        stored = {r.bot: r.owner_used_ms for r in ladder_entrants(reopened, ladder)}[bot]
    assert join_owners(store, ladder) == (lifts, on)  # lifted once, not at every look
    if lifted:
        assert shown == pytest.approx(floor, rel=1e-12)
        assert stored == pytest.approx(floor, rel=1e-12)
    else:
        assert shown == stored == used["c"] < floor
