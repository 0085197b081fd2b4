"""Which games at /play are rated in the people's pool, and that rating them moves the
pool (TrueSkill, as the bots are rated) and never the bots' ratings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from arena.referee.botdir import load_bot
from arena.referee.types import BotStatus, GameReport
from arena.store import (
    PlannedMatch,
    PlannedRound,
    Store,
    TournamentConfig,
    TournamentStatus,
    add_bot_version,
    get_version,
    latest_version_ids,
    leaderboard,
    list_games,
    list_matches,
    list_tournaments,
    register_remote_bot,
    set_status,
)
from arena.store.play import PlaySeat, insert_play_tournament, people_pool, play_games
from arena.testing.examples import examples
from arena.tournament.orchestration.runner import TournamentRunner
from arena.tournament.policy.config import TournamentError
from arena.tournament.policy.play_pool import (
    BOT_FAILED,
    DUPLICATE,
    OWN_BOT,
    SETTING_OFF,
    TURNED_OFF,
    rate_people,
    store_play_game,
    why_unrated,
    why_unrated_after,
)
from arena.tournament.policy.rounds import create_tournament
from arena.tournament.rating.ratings import Rating, rate_game
from arena.web.source import StoreSource

S = BotStatus


@pytest.mark.parametrize(("rated_play", "duplicate", "own_bot", "reason"), [
    (True, False, False, None),
    (False, False, False, SETTING_OFF),
    (True, True, False, DUPLICATE),
    (True, False, True, OWN_BOT),
    (False, True, True, SETTING_OFF),
    (True, True, True, DUPLICATE),
], ids=["rated", "setting-off", "duplicate", "own-bot", "off-wins", "duplicate-first"])  # fmt: skip
def test_which_tables_are_rated(
    rated_play: bool, duplicate: bool, own_bot: bool, reason: str | None
) -> None:
    assert why_unrated(rated_play=rated_play, duplicate=duplicate, own_bot=own_bot) == reason


def _report(winner: str | None, statuses: dict[str, BotStatus] | None = None,
            seats: tuple[str, str] = ("human-ann", "rnd")) -> GameReport:  # fmt: skip
    return GameReport(
        index=0, bots_by_seat=seats, winner=winner, reason="points" if winner else "draw",
        statuses=statuses or {}, actions=20, time_ms={}, record={"format": "kahuna-record/1"},
    )  # fmt: skip


@pytest.mark.parametrize(("report", "rated_play", "reason"), [
    (_report("human-ann"), True, None),
    (_report("rnd"), True, None),
    (_report(None), True, None),
    (_report("rnd", {"human-ann": S.TIMEOUT}), True, None),  # the person left: a rated loss
    (_report("rnd", {"human-ann": S.DISCONNECT}), True, None),
    (_report("human-ann", {"rnd": S.CRASH}), True, BOT_FAILED.format(status="crash")),
    (_report("human-ann", {"rnd": S.TIMEOUT}, ("rnd", "human-ann")), True,
     BOT_FAILED.format(status="timeout")),
    (_report("human-ann"), False, TURNED_OFF),
], ids=["win", "loss", "draw", "person-timeout", "person-left", "bot-crash", "bot-timeout",
        "turned-off"])  # fmt: skip
def test_which_finished_games_are_rated(
    report: GameReport, rated_play: bool, reason: str | None
) -> None:
    assert why_unrated_after(report, "human-ann", rated_play=rated_play) == reason


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    directory = tmp_path / "rnd"
    directory.mkdir()
    (directory / "bot.toml").write_text('name = "rnd"\ncommand = ["python3", "bot.py"]\n'
                                        'runtime = "python"\n')  # fmt: skip
    (directory / "bot.py").write_text("print('hi')\n")
    with Store.open(tmp_path / "data") as opened:
        add_bot_version(opened, load_bot(directory))
        register_remote_bot(opened, "human-ann", owner="ann")
        yield opened


def _table(store: Store, number: int, reason: str | None = None) -> int:
    entrants = latest_version_ids(store, ["human-ann", "rnd"])
    row = insert_play_tournament(
        store, f"play-ann-{number}", entrants, TournamentConfig(games_per_match=1),
        [PlannedRound(1, (PlannedMatch("human-ann", "rnd", 1, 0),))],
        PlaySeat("ann", entrants["rnd"], 0, reason),
    )  # fmt: skip
    return list_matches(store, row.id)[0].id


def test_a_rated_win_is_the_bots_trueskill_update_in_the_pool(store: Store) -> None:
    bots_before = [(v.mu, v.sigma) for v in map(lambda n: get_version(store, n),
                                                 ("rnd", "human-ann"))]  # fmt: skip
    game_id, reason = store_play_game(store, _table(store, 1), _report("human-ann"),
                                      "human-ann", rated_play=True)  # fmt: skip
    assert game_id is not None and reason is None
    person, bot = rate_game(Rating(), Rating(), winner=0)
    [[ann], [rnd]] = people_pool(store)
    assert (ann.mu, ann.sigma) == pytest.approx((person.mu, person.sigma))
    assert (rnd.mu, rnd.sigma) == pytest.approx((bot.mu, bot.sigma))
    assert ann.mu > 25 > rnd.mu
    assert [(v.mu, v.sigma) for v in map(lambda n: get_version(store, n),
                                         ("rnd", "human-ann"))] == bots_before  # fmt: skip


def test_a_bot_that_crashes_gives_no_rated_win(store: Store) -> None:
    report = _report("human-ann", {"rnd": S.CRASH})
    game_id, reason = store_play_game(store, _table(store, 1), report, "human-ann",
                                      rated_play=True)  # fmt: skip
    assert game_id is not None and reason == BOT_FAILED.format(status="crash")
    assert people_pool(store) == ([], [])
    [row] = play_games(store, "ann")
    assert (row.rated, row.unrated_reason, row.result) == (False, reason, "win")
    assert get_version(store, "rnd").crashes == 1  # counted against the bot, as in any game


@settings(max_examples=examples(20), deadline=None)
@given(hs.lists(hs.tuples(hs.sampled_from(["human-ann", "rnd", None]), hs.booleans(),
                          hs.booleans()), max_size=8))  # fmt: skip
def test_the_pool_counts_exactly_the_rated_games(
    tmp_path_factory: pytest.TempPathFactory, games: list[tuple[str | None, bool, bool]]
) -> None:
    """Whatever the results and settings, the pool's W/D/L are the rated games' and the
    bots' ratings never move; the person's rating is TrueSkill replayed over them."""
    tmp = tmp_path_factory.mktemp("pool")
    directory = tmp / "rnd"
    directory.mkdir()
    (directory / "bot.toml").write_text('name = "rnd"\ncommand = ["python3", "bot.py"]\n'
                                        'runtime = "python"\n')  # fmt: skip
    (directory / "bot.py").write_text("print('hi')\n")
    with Store.open(tmp / "data") as store:
        add_bot_version(store, load_bot(directory))
        register_remote_bot(store, "human-ann", owner="ann")
        person, bot = Rating(), Rating()
        expected = {"win": 0, "draw": 0, "loss": 0}
        for number, (winner, opened_rated, still_on) in enumerate(games):
            reason = None if opened_rated else DUPLICATE
            store_play_game(store, _table(store, number, reason), _report(winner), "human-ann",
                            rated_play=still_on)  # fmt: skip
            if opened_rated and still_on:
                won = None if winner is None else 0 if winner == "human-ann" else 1
                person, bot = rate_game(person, bot, winner=won)
                expected["draw" if won is None else "win" if won == 0 else "loss"] += 1
        people, bots = people_pool(store)
        rated = sum(expected.values())
        assert len(people) == len(bots) == (1 if rated else 0)
        if rated:
            [ann], [rnd] = people, bots
            assert (ann.wins, ann.draws, ann.losses) == (expected["win"], expected["draw"],
                                                         expected["loss"])  # fmt: skip
            assert (rnd.wins, rnd.losses) == (ann.losses, ann.wins)
            assert (ann.mu, ann.sigma) == pytest.approx((person.mu, person.sigma))
            assert (rnd.mu, rnd.sigma) == pytest.approx((bot.mu, bot.sigma))
        assert sum(r.rated for r in play_games(store, "ann")) == rated
        for name in ("rnd", "human-ann"):
            version = get_version(store, name)
            assert (version.mu, version.sigma, version.games) == (25.0, 25 / 3, len(games))


def test_rate_people_is_the_bots_update() -> None:
    person, bot = rate_game(Rating(30, 2), Rating(20, 5), winner=1)
    (person_mu, person_sigma), (bot_mu, bot_sigma) = rate_people((30, 2), (20, 5), 1)
    assert (person_mu, person_sigma, bot_mu, bot_sigma) == pytest.approx(
        (person.mu, person.sigma, bot.mu, bot.sigma))


def test_nobody_creates_a_tournament_under_the_play_pages_names(store: Store) -> None:
    """A /play game's tournament is named play-USER-ID: a created one may not take the prefix."""
    with pytest.raises(TournamentError, match=r"'play-ann-0123abcd'.*'play-' are the /play"):
        create_tournament(store, "play-ann-0123abcd", "round_robin", ["a", "b"], TournamentConfig())


@pytest.mark.parametrize("status", [TournamentStatus.RUNNING, TournamentStatus.CREATED])
def test_a_play_game_s_tournament_is_never_run_but_by_its_table(
    store: Store, status: TournamentStatus
) -> None:
    """Stopped (its table's server died: it reads interrupted) or never begun, a run would
    play the person's remote seat, which nobody takes: a forfeit, rated as a bots' game."""
    match_id = _table(store, 1)
    [tournament] = [t for t in list_tournaments(store, with_play=True) if t.name == "play-ann-1"]
    set_status(store, tournament.id, status)
    before = [get_version(store, name) for name in ("rnd", "human-ann")]
    with pytest.raises(TournamentError, match=r"'play-ann-1' is a person's game at /play"):
        TournamentRunner(store, tournament.id, unsafe=True).run()
    assert [get_version(store, name) for name in ("rnd", "human-ann")] == before
    assert list_matches(store, tournament.id)[0].id == match_id
    assert list_games(store) == []


def test_games_at_play_stay_off_the_bots_public_board(store: Store) -> None:
    """A person's seat is no bot on the board, and what a person does at /play (losing on
    purpose, or winning with an engine behind the page) does not make a bot's score or
    Elo on the board: those are the bots' own games."""
    for number, winner in enumerate(["rnd"] * 10 + [None, "human-ann"]):
        store_play_game(store, _table(store, number), _report(winner), "human-ann",
                        rated_play=False)  # fmt: skip
    [row] = StoreSource(store).leaderboard()
    assert row.bot == "rnd" and row.rank == 1
    assert row.interval.detail is None, row.interval  # no game of bots to score
    # nor its games and W/D/L: a person losing on purpose pads no bot's record there
    assert (row.games, row.wins, row.draws, row.losses) == (0, 0, 0, 0)
    [full] = [r for r in leaderboard(store) if r.entry.bot == "rnd"]  # the admin's: every game
    assert (full.entry.games, full.entry.wins, full.entry.draws, full.entry.losses) == (
        12, 10, 1, 1
    )
