"""Rating integrity: no rated game between one owner's bots, one ladder entrant per user,
a placement burst per bot, the public board of latest versions, the collusion report.

The "ace and mules" attack is played here on the ladder's own scheduler
(``pick`` over ``rated_contenders`` of ``active_entrants``) with the arena's TrueSkill
update (``arena.tournament.policy.results.rate``): a user enters a random bot ("ace") and two
greedy bots ("mules") that beat everyone else and throw every game against ace, beside
two honest copies of ace owned by others. Paired with owners unseen, ace ends first; as
the ladder pairs them (one entrant per user, no rated game between one owner's bots),
the attack gains ace nothing.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.cli import main
from arena.referee import load_bot
from arena.referee.types import GameReport
from arena.store import (
    LadderHistory,
    LadderRating,
    ResultRow,
    Store,
    TournamentConfig,
    add_bot_version,
    create_ladder,
    game_results,
    get_version,
    leaderboard,
    list_matches,
    set_withdrawn,
)
from arena.testing.examples import examples
from arena.tournament.orchestration.ladder import (
    LadderRunner,
    active_entrants,
    history_after,
    owner_last,
    rated_contenders,
)
from arena.tournament.pairing.ladder_schedule import (
    Contender,
    SchedulePolicy,
    need,
    pick,
    plan,
)
from arena.tournament.policy.collusion import collusion_report, likelihood_ratio, report_lines
from arena.tournament.policy.results import rate, store_game, store_games
from arena.tournament.policy.rounds import create_tournament
from arena.tournament.rating.ratings import MU, SIGMA
from arena.web.source import StoreSource
from tests.store.conftest import MakeBot
from tests.store.conftest import make_bot as make_bot_fixture
from tests.store.conftest import store as store_fixture
from tests.tournament.test_ladder import _bot, _wait

store = store_fixture
make_bot = make_bot_fixture

# ------------------------------------------------------------------ the scheduler


def test_the_ladder_never_pairs_two_bots_of_one_owner() -> None:
    alice = [Contender(1, owner="alice"), Contender(2, owner="alice")]
    assert pick(alice, 1) is None  # nobody else: they wait, unpaired
    bob = Contender(3, owner="bob")
    for number in range(1, 20):
        chosen = pick([*alice, bob], number)
        assert chosen is not None and 3 in (chosen.first, chosen.second)
    house = [Contender(4), Contender(5)]  # the admin's bots (no owner) may meet
    assert pick(house, 1) is not None


@settings(max_examples=examples(60), deadline=None)
@given(
    owners=st.lists(st.sampled_from(["a", "b", "c", None]), min_size=2, max_size=9),
    count=st.integers(1, 40),
)
def test_no_plan_ever_holds_a_same_owner_pairing(owners: list[str | None], count: int) -> None:
    field = [Contender(i + 1, mu=MU + i % 3, owner=o) for i, o in enumerate(owners)]
    owner_of = {c.id: c.owner for c in field}
    picks = plan(field, 1, count)
    for p in picks:
        assert owner_of[p.first] is None or owner_of[p.first] != owner_of[p.second]
    possible = any(
        a.owner is None or a.owner != b.owner for a in field for b in field if a.id != b.id
    )
    assert bool(picks) == possible


def test_a_new_version_of_a_placed_bot_does_not_place_again() -> None:
    policy = SchedulePolicy(placement_matches=4)
    placed_bot = Contender(10, matches=0, placed=4, last_match=None, owner="x")  # new version
    fresh_bot = Contender(11, matches=0, placed=0, owner="y")
    waiting = [Contender(n, matches=9, placed=9, last_match=1, owner=f"o{n}") for n in (1, 2)]
    chosen = pick([placed_bot, fresh_bot, *waiting], 20, policy)
    assert chosen is not None and chosen.first == 11 and chosen.placement
    alone = pick([placed_bot, *waiting], 20, policy)
    assert alone is not None and not (alone.first == 10 and alone.placement)


def test_a_bots_versions_share_one_placement_burst() -> None:
    history = {1: LadderHistory(matches=4), 2: LadderHistory(matches=0)}
    ratings = [LadderRating(2, MU, SIGMA, bot_id=7, owner="x")]
    [state] = rated_contenders(ratings, history, {}, {1: 7, 2: 7})
    assert (state.matches, state.placed, state.placing_matches) == (0, 4, 4)


@pytest.mark.parametrize(
    ("per_user", "kept"),
    [
        (1, {3, 4, 5, 6}),  # alice's latest (3), bob's latest (4), the admin's two
        (2, {2, 3, 4, 5, 6}),
        (0, {1, 2, 3, 4, 5, 6}),  # no limit
    ],
)
def test_each_user_has_their_latest_submitted_bots_on_the_ladder(
    per_user: int, kept: set[int]
) -> None:
    rows = [
        LadderRating(1, MU, SIGMA, bot_id=1, owner="alice"),
        LadderRating(2, MU, SIGMA, bot_id=2, owner="alice"),
        LadderRating(3, MU, SIGMA, bot_id=3, owner="alice"),
        LadderRating(4, MU, SIGMA, bot_id=4, owner="bob"),
        LadderRating(5, MU, SIGMA, bot_id=5, owner=None),
        LadderRating(6, MU, SIGMA, bot_id=6, owner=None),
    ]
    assert {r.version_id for r in active_entrants(rows, per_user)} == kept


def _switching(bots: int, *, owners_seen: bool, matches: int = 700) -> tuple[int, float]:
    """Mallory's ladder matches and an honest user's on average, when she keeps one of her
    ``bots`` on the ladder and brings the next one on (withdrawing the others, or a new
    version of the next) each time the one on it is paired; six honest users, one bot
    each. ``owners_seen`` False: the runner's view without owners (no owner's turn)."""
    honest = {v: f"h{v}" for v in range(1, 7)}
    mallory = [100 + k for k in range(bots)]
    owner_of: dict[int, str | None] = {**honest, **dict.fromkeys(mallory, "mallory")}
    bot_of = {v: v for v in owner_of}
    history: dict[int, LadderHistory] = {}
    counts = dict.fromkeys(owner_of, 0)
    on = 0
    for number in range(1, matches + 1):
        rows = [LadderRating(v, MU, SIGMA, bot_id=v, owner=o) for v, o in honest.items()]
        rows.append(LadderRating(mallory[on], MU, SIGMA, bot_id=mallory[on], owner="mallory"))
        state = rated_contenders(rows, history, {}, bot_of, owner_of if owners_seen else None)
        chosen = pick(state, number, SchedulePolicy(placement_matches=0))
        assert chosen is not None
        for version, opponent in ((chosen.first, chosen.second), (chosen.second, chosen.first)):
            history[version] = history_after(history.get(version, LadderHistory()), opponent,
                                             number, 1)  # fmt: skip
            counts[version] += 1
        if mallory[on] in (chosen.first, chosen.second):
            on = (on + 1) % bots
    return sum(counts[v] for v in mallory), sum(counts[v] for v in honest) / len(honest)


@pytest.mark.parametrize("bots", [2, 3, 5])
def test_switching_between_ones_bots_buys_no_extra_ladder_matches(bots: int) -> None:
    """A bot off the ladder banks no wait: Mallory plays as often as any honest user. The
    control (no owner's turn) gives her half as much again or more."""
    played, share = _switching(bots, owners_seen=True)
    assert played <= 1.05 * share
    banked, share = _switching(bots, owners_seen=False)
    assert banked >= 1.4 * share


@pytest.mark.parametrize(
    ("turns", "entrants", "expected"),
    [
        ((90, 40, 10), 1, 90),  # one entrant: the owner's latest match
        ((90, 40, 10), 2, 40),  # two: the second latest (each of two waits from its own)
        ((90,), 2, None),  # fewer turns than entrants: a new bot waits from its own
        ((), 1, None),  # the owner never played
    ],
)
def test_an_owners_turn_is_the_latest_match_of_as_many_bots_as_it_enters(
    turns: tuple[int, ...], entrants: int, expected: int | None
) -> None:
    assert owner_last(turns, entrants) == expected


def test_an_entrant_waits_from_its_owners_turn_when_that_is_later() -> None:
    back = Contender(2, last_match=3, owner="mallory", owner_last=95, placed=9)
    honest = Contender(3, last_match=60, owner="hank", placed=9)
    other = Contender(4, last_match=99, owner="hana", placed=9)
    assert need(back, 100) == need(Contender(2, last_match=95), 100)
    chosen = pick([back, honest, other], 100)
    assert chosen is not None and chosen.first == 3


# ------------------------------------------------------------------ ace and mules

MULE1, MULE2, ACE, HONEST1, HONEST2 = 1, 2, 3, 4, 5  # ace submitted after its mules
NAMES = {ACE: "ace", MULE1: "mule1", MULE2: "mule2", HONEST1: "honest1", HONEST2: "honest2"}
GREEDY_WINS = 0.8  # a greedy bot against a random one


def _first_wins(first: int, second: int, rng: random.Random) -> bool | None:
    """One game's result by who plays: mules throw against ace and beat everyone else."""
    mules = (MULE1, MULE2)
    if {first, second} == {ACE, MULE1} or {first, second} == {ACE, MULE2}:
        return first == ACE
    if first in mules and second in mules:
        return rng.random() < 0.5
    if first in mules:
        return rng.random() < GREEDY_WINS
    if second in mules:
        return rng.random() >= GREEDY_WINS
    return rng.random() < 0.5  # random against random


def play_ladder(
    owners: dict[int, str | None], per_user: int, matches: int, seed: int
) -> tuple[dict[int, tuple[float, float]], list[ResultRow]]:
    """The ladder's scheduler and rating update over ``matches`` two-game matches."""
    rng = random.Random(seed)
    rating = {v: (MU, SIGMA) for v in owners}
    history: dict[int, LadderHistory] = {}
    bot_of = {v: v for v in owners}
    results: list[ResultRow] = []
    for number in range(1, matches + 1):
        rows = [LadderRating(v, *rating[v], bot_id=v, owner=o) for v, o in owners.items()]
        state = rated_contenders(active_entrants(rows, per_user), history, {}, bot_of)
        chosen = pick(state, number)
        if chosen is None:
            break
        for seat0, seat1 in ((chosen.first, chosen.second), (chosen.second, chosen.first)):
            won = _first_wins(seat0, seat1, rng)
            winner = None if won is None else (0 if won else 1)
            rating[seat0], rating[seat1] = rate(rating[seat0], rating[seat1], winner)
            results.append(ResultRow(
                len(results) + 1, 1, (NAMES[seat0], NAMES[seat1]),
                (owners[seat0], owners[seat1]), winner,
            ))  # fmt: skip
        for version, opponent in ((chosen.first, chosen.second), (chosen.second, chosen.first)):
            history[version] = history_after(history.get(version, LadderHistory()), opponent,
                                             number, 1)  # fmt: skip
    return rating, results


def _conservative(r: tuple[float, float]) -> float:
    return r[0] - 3 * r[1]


CHEAT = {ACE: "cheat", MULE1: "cheat", MULE2: "cheat", HONEST1: "h1", HONEST2: "h2"}
UNSEEN = dict.fromkeys(CHEAT, None)  # the control: owners unseen, everyone entered


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ace_and_mules_pays_when_owners_are_unseen_and_not_any_more(seed: int) -> None:
    # The attack, reproduced: ace (a random bot) tops two identical honest copies.
    before, _ = play_ladder(UNSEEN, 0, 184, seed)
    assert _conservative(before[ACE]) > max(_conservative(before[h]) for h in (HONEST1, HONEST2))
    # The ladder: one entrant per user (ace, submitted last, stands alone for its owner)...
    now, games = play_ladder(CHEAT, 1, 184, seed)
    assert all(NAMES[m] not in r.bots for r in games for m in (MULE1, MULE2))
    # ...and even with every bot of the user entered, ace never meets a mule.
    everyone, games = play_ladder(CHEAT, 0, 184, seed)
    assert not any({"ace", "mule1"} <= set(r.bots) or {"ace", "mule2"} <= set(r.bots)
                   for r in games)  # fmt: skip
    for after in (now, everyone):
        honest = [after[h][0] for h in (HONEST1, HONEST2)]
        assert after[ACE][0] < max(honest) + 2.0  # ace gains nothing over its honest copies


def test_the_collusion_report_flags_the_mules_and_not_the_honest() -> None:
    _, games = play_ladder(UNSEEN, 0, 184, 1)
    report = collusion_report(games, min_games=8, alpha=1e-3)
    flagged = {frozenset(e.bots) for e in report if e.flagged}
    assert frozenset({"ace", "mule1"}) in flagged or frozenset({"ace", "mule2"}) in flagged
    assert frozenset({"honest1", "honest2"}) not in flagged
    assert all("ace" in pair for pair in flagged)
    top = report[0]
    assert top.favoured == "ace" and top.p_value < 1e-3 and top.observed > top.expected
    assert {frozenset(e.bots) for e in report[:2]} == {frozenset({"ace", "mule1"}),
                                                      frozenset({"ace", "mule2"})}
    assert top.game_ids and len(top.game_ids) == top.games
    lines = report_lines(report)
    assert lines[0].startswith("FLAGGED ") and "favours ace" in lines[0]


def test_honest_results_are_rarely_flagged() -> None:
    rng = random.Random(5)
    bots = [f"b{i}" for i in range(6)]
    games = []
    for n in range(1, 1500):
        a, b = rng.sample(bots, 2)
        games.append(ResultRow(n, 1, (a, b), ("x", "y"), rng.choice((0, 1, None))))
    report = collusion_report(games, min_games=8, alpha=1e-3)
    assert len(report) == 15 and not any(e.flagged for e in report)
    assert report_lines(report) == ["no suspicious pair among 15 pairs with enough games"]


@pytest.mark.parametrize(
    ("score", "games", "p", "g", "p_value"),
    [
        (5.0, 10, 0.5, 0.0, 1.0),
        (10.0, 10, 0.5, 13.8629, 0.000197),
        (0.0, 10, 0.5, 13.8629, 0.000197),
        (7.5, 10, 0.75, 0.0, 1.0),
    ],
)
def test_the_likelihood_ratio_is_the_binomial_g_test(
    score: float, games: int, p: float, g: float, p_value: float
) -> None:
    got_g, got_p = likelihood_ratio(score, games, p)
    assert got_g == pytest.approx(g, abs=1e-3) and got_p == pytest.approx(p_value, rel=1e-2)


def test_the_report_refuses_settings_that_mean_nothing() -> None:
    with pytest.raises(ValueError, match="min_games must be at least 1, got 0"):
        collusion_report([], min_games=0)
    with pytest.raises(ValueError, match=r"alpha must be between 0 and 1, got 1\.5"):
        collusion_report([], alpha=1.5)


# ------------------------------------------------------------------ the store


def _report(index: int, seats: tuple[str, str], winner: str | None) -> GameReport:
    return GameReport(
        index=index, bots_by_seat=seats, winner=winner, reason="points" if winner else "draw",
        statuses={}, actions=1, time_ms={}, record={"format": "kahuna-record/1", "actions": []},
    )  # fmt: skip


@pytest.fixture
def owned(store: Store, make_bot: MakeBot) -> Callable[[str, str | None], None]:
    def add(name: str, owner: str | None) -> None:
        add_bot_version(store, make_bot(name, f"print({name!r})\n"), owner=owner)

    return add


def test_an_admins_tournament_plays_one_owners_bots_unrated_and_shows_them_apart(
    store: Store, owned: Callable[[str, str | None], None]
) -> None:
    owned("ace", "cheat")
    owned("mule", "cheat")
    owned("fair", "other")
    tournament = create_tournament(
        store, "rr", "round_robin", ["ace", "mule", "fair"], TournamentConfig(games_per_match=2)
    )
    matches = sorted(list_matches(store, tournament.id),
                     key=lambda m: {m.first, m.second} != {"ace", "mule"})  # fmt: skip
    for number, match in enumerate(matches):
        for index in range(2):
            store_game(store, match.id, _report(index, (match.first, match.second), match.first))
        if number == 0:  # ace against mule: played, counted, not rated
            for name in ("ace", "mule"):
                version = get_version(store, name)
                assert (version.mu, version.sigma, version.games) == (MU, SIGMA, 2)
    assert get_version(store, "fair").mu != MU  # games against another owner are rated
    rows = game_results(store, tournament_id=tournament.id)
    apart = [r for r in rows if set(r.bots) == {"ace", "mule"}]
    assert len(apart) == 2 and all(r.owners == ("cheat", "cheat") for r in apart)
    detail = StoreSource(store).tournament(tournament.id)
    assert detail is not None
    assert {frozenset(g.bots) for g in detail.unrated_games} == {frozenset({"ace", "mule"})}
    assert all(frozenset(g.bots) != frozenset({"ace", "mule"}) for g in detail.games)


def test_the_public_board_holds_each_bots_latest_version(
    store: Store, make_bot: MakeBot
) -> None:
    add_bot_version(store, make_bot("lucky", "print(1)\n"), owner="u")
    add_bot_version(store, make_bot("lucky", "print(2)\n"), owner="u")
    rows = StoreSource(store).leaderboard()
    assert [(r.bot, r.version) for r in rows] == [("lucky", get_version(store, "lucky").version)]
    assert len(leaderboard(store)) == 2  # both versions kept (the bot's page shows them)
    page = StoreSource(store).bot("lucky")
    assert page is not None and [v.rating.rank for v in page.versions] == [1, 0]  # newest first


def test_a_withdrawn_bot_is_off_the_public_board_and_back_on_it_when_it_returns(
    store: Store, make_bot: MakeBot
) -> None:
    """Withdrawing at a lucky high does not keep that rating on the board while the bot
    plays no more; its page keeps the rating, and the admin's board every version."""
    for name in ("lucky", "other", "third"):
        add_bot_version(store, make_bot(name), owner=name)
    set_withdrawn(store, "third", True, by="owner")
    source = StoreSource(store)
    assert {r.bot for r in source.leaderboard()} == {"lucky", "other"}
    set_withdrawn(store, "lucky", True, by="owner")
    set_withdrawn(store, "third", False, by="owner")  # as many bots and games as before
    assert {r.bot for r in source.leaderboard()} == {"other", "third"}
    assert len(leaderboard(store, latest_only=True)) == 3
    page = source.bot("lucky")
    assert page is not None and [v.rating.rank for v in page.versions] == [0]  # no rank
    set_withdrawn(store, "lucky", False, by="owner")
    assert {r.bot for r in source.leaderboard()} == {"lucky", "other", "third"}


@pytest.mark.parametrize(
    ("per_user", "shown"),
    [
        (1, {"newer", "other"}),  # lucky waits behind its owner's newer bot
        (2, {"lucky", "newer", "other"}),
        (0, {"lucky", "newer", "other"}),  # no limit: everyone plays
    ],
)
def test_a_bot_waiting_behind_its_owners_newer_one_is_off_the_public_board(
    store: Store, make_bot: MakeBot, per_user: int, shown: set[str]
) -> None:
    """A new bot parks its owner's older one off the ladder as withdrawing would: the
    older one's lucky high does not stay on the board while it plays no more."""
    add_bot_version(store, make_bot("lucky"), owner="mallory")
    add_bot_version(store, make_bot("other"), owner="olive")
    source = StoreSource(store)
    assert {r.bot for r in source.leaderboard()} == {"lucky", "other"}  # no ladder: all
    create_ladder(store, "ladder", TournamentConfig(), {"entrants_per_user": per_user})
    add_bot_version(store, make_bot("newer"), owner="mallory")
    assert {r.bot for r in source.leaderboard()} == shown
    assert [r.rank for r in source.leaderboard()] == list(range(1, len(shown) + 1))
    page = source.bot("lucky")
    assert page is not None and bool(page.versions[0].rating.rank) == ("lucky" in shown)
    assert len(leaderboard(store, latest_only=True)) == 3  # the admin's board: every bot
    set_withdrawn(store, "newer", True, by="owner")  # lucky is the latest again: it plays
    assert {r.bot for r in source.leaderboard()} == {"lucky", "other"}


def test_arena_ladder_collusion_prints_the_evidence(
    tmp_path: Path, store: Store, owned: Callable[[str, str | None], None],
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    for name, owner in (("ace", "u1"), ("mule", "u2"), ("p", "u3"), ("q", "u4")):
        owned(name, owner)
    tournament = create_tournament(
        store, "long", "round_robin", ["ace", "mule", "p", "q"],
        TournamentConfig(games_per_match=20),
    )  # fmt: skip
    rng = random.Random(3)
    for match in list_matches(store, tournament.id):
        pair = {match.first, match.second}
        for index in range(20):
            seats = (match.first, match.second) if index % 2 == 0 else (match.second, match.first)
            if pair == {"ace", "mule"}:
                winner = "ace"  # thrown, every game
            elif "mule" in pair:
                winner = "mule" if rng.random() < 0.8 else (pair - {"mule"}).pop()
            else:
                winner = rng.choice(sorted(pair))
            store_game(store, match.id, _report(index, seats, winner))
    data_dir = str(store.data_dir)
    assert main(["ladder", "collusion", "--data-dir", data_dir]) == 0
    out = capsys.readouterr().out
    assert out.startswith("FLAGGED ace vs mule: 20 games, ace scored 20") and "favours ace" in out
    assert main(["ladder", "collusion", "--data-dir", data_dir, "--json"]) == 0
    pairs = json.loads(capsys.readouterr().out)
    assert len(pairs) == 6 and pairs[0]["bots"] == ["ace", "mule"] and pairs[0]["flagged"]
    assert len(pairs[0]["game_ids"]) == 20 and pairs[0]["p_value"] < 1e-6
    with pytest.raises(SystemExit) as bad:
        main(["ladder", "collusion", "--data-dir", data_dir, "--alpha", "2"])
    assert bad.value.code == 2
    assert "between 0 and 1, got 2.0" in capsys.readouterr().err


def test_rated_games_use_the_rating_update(store: Store, owned: Callable[..., None]) -> None:
    """Control for the unrated test above: the same games between two owners move ratings."""
    owned("x", "u1")
    owned("y", "u2")
    tournament = create_tournament(
        store, "xy", "round_robin", ["x", "y"], TournamentConfig(games_per_match=2)
    )
    [match] = list_matches(store, tournament.id)
    store_game(store, match.id, _report(0, (match.first, match.second), match.first))
    assert get_version(store, match.first).mu > MU


# ------------------------------------------------------------------ a real ladder


@pytest.mark.slow
@pytest.mark.parametrize("per_user", [1, 0])
def test_a_running_ladder_pairs_no_owner_with_itself_and_enters_one_bot_per_user(
    tmp_path: Path, per_user: int
) -> None:
    """The runner with real bot processes: each user's older bot waits off the ladder
    (one entrant per user by default), and every match is between two owners."""
    data = tmp_path / "data"
    with Store.open(data) as store:
        for name, owner in (("a_old", "alice"), ("a_new", "alice"), ("b", "bob"),
                            ("c1", "carol"), ("c2", "carol")):  # fmt: skip
            add_bot_version(store, load_bot(_bot(tmp_path, name)), owner=owner)
        settings = {"placement_matches": 1, "entrants_per_user": per_user}
        ladder = create_ladder(store, "ladder", TournamentConfig(), settings)
        runner = LadderRunner(store, ladder, concurrency=2, pin_cpus=False)
        thread = threading.Thread(target=runner.run)
        thread.start()
        try:
            _wait("six matches", lambda: len(list_matches(store, ladder)) >= 6)
        finally:
            runner.stop()
            thread.join(60)
        pairs = [(m.first, m.second) for m in list_matches(store, ladder)]
    owner = {"a_old": "alice", "a_new": "alice", "b": "bob", "c1": "carol", "c2": "carol"}
    assert all(owner[first] != owner[second] for first, second in pairs), pairs
    played = {bot for pair in pairs for bot in pair}
    if per_user == 1:
        assert "a_old" not in played and "c1" not in played  # each user's latest only
        assert {"a_new", "b", "c2"} <= played
    else:  # everyone plays, never against a bot of its own owner
        assert played == set(owner)


@pytest.mark.slow
def test_a_bad_entrants_per_user_is_refused_naming_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--ladder",
         "--ladder-entrants-per-user", "-1", "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "entrants_per_user must be a whole number from 0 to 1000, got -1" in done.stderr


def test_a_batch_of_games_leaves_one_owners_games_unrated_in_one_transaction(
    store: Store, owned: Callable[[str, str | None], None]
) -> None:
    for name, owner in (("ace", "cheat"), ("mule", "cheat"), ("p", "o1"), ("q", "o2")):
        owned(name, owner)
    config = TournamentConfig(games_per_match=2)
    [cheat] = list_matches(store, create_tournament(store, "c", "round_robin",
                                                    ["ace", "mule"], config).id)  # fmt: skip
    [fair] = list_matches(store, create_tournament(store, "f", "round_robin", ["p", "q"],
                                                   config).id)  # fmt: skip
    store_games(store, [(m.id, _report(0, (m.first, m.second), m.first)) for m in (cheat, fair)])
    for name in ("ace", "mule"):  # played and counted, not rated
        version = get_version(store, name)
        assert (version.mu, version.sigma, version.games) == (MU, SIGMA, 1)
    assert get_version(store, fair.first).mu > MU  # the same batch's other game is rated
