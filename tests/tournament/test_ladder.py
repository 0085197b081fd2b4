"""The ladder with real bots in real processes: joins and leaves live, kill -9 and resume."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from arena.commands.ladder import LadderThread, prepare_ladder
from arena.referee import load_bot
from arena.sandbox.process import wait_gone
from arena.store import (
    INTERRUPTED,
    RECENT_KEPT,
    LeaseHeldError,
    Store,
    TournamentConfig,
    acquire_lease,
    add_bot_version,
    add_ladder_match,
    create_ladder,
    find_ladder,
    get_tournament,
    get_version,
    is_withdrawn,
    ladder_entrants,
    ladder_settings,
    set_withdrawn,
)
from arena.store.totals import read_ladder_totals
from arena.testing.waiting import wait_until
from arena.tournament.execution.executor import JobDone, JobEvent, MatchJob, WorkerStarted
from arena.tournament.execution.local_executor import LocalProcessExecutor
from arena.tournament.orchestration.ladder import LadderRunner, LadderSummary
from tests.store.ladder_history import history_totals, history_tournament_games
from tests.tournament.test_runner import _descendants

REPO = Path(__file__).resolve().parents[2]
RANDOM_BOT = REPO / "sample_bots" / "python_random"

pytestmark = pytest.mark.slow


def _bot(tmp: Path, name: str) -> Path:
    target = tmp / "bots" / name
    shutil.copytree(RANDOM_BOT, target, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (target / "bot.toml").read_text()
    (target / "bot.toml").write_text(toml.replace('name = "python_random"', f'name = "{name}"'))
    return target


def _add(data: Path, tmp: Path, *names: str) -> None:
    with Store.open(data) as store:
        for name in names:
            add_bot_version(store, load_bot(_bot(tmp, name)))


def _rows(data: Path, sql: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(data / "arena.db")
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def _games(data: Path) -> list[tuple[object, ...]]:
    return _rows(data, "SELECT id, match_id, game_index, seat0_id, record FROM games ORDER BY id")


def _assert_totals_are_the_history(data: Path) -> None:
    """The store's running totals (schema v9) equal what its history gives."""
    db = sqlite3.connect(data / "arena.db")
    try:
        for (ladder,) in db.execute("SELECT id FROM tournaments WHERE format = 'ladder'"):
            assert read_ladder_totals(db, ladder) == history_totals(db, ladder, RECENT_KEPT)
            stored = db.execute(
                "SELECT games_played, games_scheduled FROM tournaments WHERE id = ?", (ladder,)
            ).fetchone()
            assert stored == history_tournament_games(db, ladder)
    finally:
        db.close()


def _wait(what: str, until: Callable[[], bool], timeout_s: float = 240) -> None:
    wait_until(until, what, timeout_s, interval_s=0.3)


def _serve(data: Path, concurrency: int = 2) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--ladder", "--concurrency",
         str(concurrency), "--ladder-placement-matches", "1", "--data-dir", str(data)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip


def test_kill_9_of_the_server_loses_no_game_and_the_ladder_goes_on(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _add(data, tmp_path, "a", "b", "c")
    server = _serve(data)
    _wait("three stored games", lambda: len(_games(data)) >= 3)
    family = _descendants(server.pid)
    server.send_signal(signal.SIGKILL)
    server.wait(10)
    assert wait_gone(sorted(family), 20), "a worker or bot outlived the killed server"
    before = _games(data)
    unfinished = {
        r[0] for r in _rows(data, "SELECT m.id FROM matches m WHERE m.finished_at IS NULL")
    }
    with Store.open(data) as store:
        ladder = find_ladder(store, "ladder")
        assert ladder is not None
        assert get_tournament(store, ladder).status is INTERRUPTED
    _assert_totals_are_the_history(data)  # as the killed server left them
    server = _serve(data)
    try:
        _wait(
            "the killed run's matches resumed and finished, and more games",
            lambda: (
                len(_games(data)) >= len(before) + 4
                and not unfinished
                & {r[0] for r in _rows(data, "SELECT id FROM matches WHERE finished_at IS NULL")}
            ),
        )
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(60) == 0, server.stderr.read() if server.stderr else ""
    after = _games(data)
    assert after[: len(before)] == before, "a stored game was lost or changed"
    played = _rows(data, "SELECT m.games, COUNT(g.id) FROM matches m JOIN games g"
                   " ON g.match_id = m.id GROUP BY m.id")  # fmt: skip
    assert all(count <= games for games, count in played), "a game stored twice"
    assert all(g[2] < 2 for g in after)
    _assert_totals_are_the_history(data)


def test_a_new_bot_joins_and_a_withdrawn_bot_leaves_without_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    _add(data, tmp_path, "a")  # alone: nobody to play until b comes
    args = argparse.Namespace(
        ladder_name="ladder", concurrency=2, **{f"ladder_{k}": None for k in (
            "games_per_match", "seed", "action_ms", "bank_ms", "placement_matches",
            "placement_in_play", "max_repeat")},
    )  # fmt: skip
    with Store.open(data) as store:
        ladder = prepare_ladder(store, args)
        runner = LadderRunner(store, ladder, concurrency=2)
        looked = threading.Event()
        collect = runner._collect

        def collect_once(summary: LadderSummary) -> None:  # one whole pass with a alone
            collect(summary)
            looked.set()

        monkeypatch.setattr(runner, "_collect", collect_once)
        thread = threading.Thread(target=runner.run)
        thread.start()
        try:
            assert looked.wait(60), "the ladder made no pass"
            assert _rows(data, "SELECT COUNT(*) FROM matches") == [(0,)]
            _add(data, tmp_path, "b")
            _wait("a game", lambda: len(_games(data)) >= 1)
            _add(data, tmp_path, "c")  # submitted while the ladder runs
            c_id = _rows(data, "SELECT MAX(id) FROM bot_versions")[0][0]
            _wait(
                "c's placement",
                lambda: (
                    _rows(data, f"SELECT COUNT(*) FROM games WHERE {c_id} IN (seat0_id, seat1_id)")[
                        0
                    ][0]
                    >= 2
                ),
            )
            set_withdrawn(store, "a", True)
            a_id = _rows(data, "SELECT v.id FROM bot_versions v JOIN bots b ON b.id = v.bot_id"
                         " WHERE b.name = 'a'")[0][0]  # fmt: skip
            since = _rows(data, "SELECT MAX(id) FROM matches")[0][0]
            _wait(
                "four more matches",
                lambda: _rows(data, f"SELECT COUNT(*) FROM matches WHERE id > {since}")[0][0] >= 4,
            )
        finally:
            runner.stop()
            thread.join(60)
        later = _rows(data, f"SELECT first_id, second_id FROM matches WHERE id > {since}")
        assert all(a_id not in pair for pair in later), "a withdrawn bot was scheduled"
        assert get_version(store, "c").games >= 2
    assert not thread.is_alive()
    _assert_totals_are_the_history(data)  # bots that joined and left, matches cut by stop


def test_settings_given_once_are_kept_and_a_flag_replaces_one(tmp_path: Path) -> None:
    data = tmp_path / "data"
    args = argparse.Namespace(
        ladder_name="ladder", concurrency=3, **{f"ladder_{k}": None for k in (
            "games_per_match", "seed", "action_ms", "bank_ms", "placement_matches",
            "placement_in_play", "max_repeat")},
    )  # fmt: skip
    with Store.open(data) as store:
        first = argparse.Namespace(**{**vars(args), "ladder_max_repeat": 2})
        ladder = prepare_ladder(store, first)
        second = {**vars(args), "concurrency": None, "ladder_games_per_match": 4}
        again = prepare_ladder(store, argparse.Namespace(**second))
        assert again == ladder
        config, settings = ladder_settings(store, ladder)
    assert config.games_per_match == 4
    assert (settings["max_repeat"], settings["concurrency"]) == (2, 3)


def test_a_ladder_another_server_runs_is_refused_saying_how_to_run_it_here(
    tmp_path: Path,
) -> None:
    """A ladder is never resumed by hand: the words say to stop the other server."""
    args = argparse.Namespace(
        ladder_name="ladder", concurrency=1, **{f"ladder_{k}": None for k in (
            "games_per_match", "seed", "action_ms", "bank_ms", "placement_matches",
            "placement_in_play", "max_repeat")},
    )  # fmt: skip
    with Store.open(tmp_path / "data") as store:
        ladder = prepare_ladder(store, args)
        held = acquire_lease(store, ladder, name="ladder")
        try:
            with pytest.raises(LeaseHeldError) as refused:
                LadderThread(LadderRunner(store, ladder, concurrency=1)).take_lease()
        finally:
            held.release()
    assert str(refused.value) == (
        f"ladder 'ladder' is already being run by process {os.getpid()}: one server runs a"
        " ladder; stop that one to run it here with `arena serve --ladder`"
    )


class _Recorded:
    """The local executor, with what the runner hands it: each batch's matches (their
    two bots), how many matches were open (handed over, not yet done) after it, and
    the workers that reported their start."""

    def __init__(self, concurrency: int) -> None:
        self.inner = LocalProcessExecutor(concurrency, pin_cpus=False)
        self.batches: list[list[tuple[int, str, str]]] = []  # (match id, first, second)
        self.open_after: list[int] = []
        self.workers: set[int] = set()  # the pids of WorkerStarted
        self._open: dict[int, int] = {}

    def submit(self, jobs: Sequence[MatchJob]) -> None:
        batch = []
        for job in jobs:
            if job.match_id not in self._open:
                batch.append((job.match_id, job.first.name, job.second.name))
            self._open[job.match_id] = self._open.get(job.match_id, 0) + 1
        self.batches.append(batch)
        self.open_after.append(len(self._open))
        self.inner.submit(jobs)

    def next_event(self, timeout_s: float) -> JobEvent | None:
        event = self.inner.next_event(timeout_s)
        if isinstance(event, JobDone):
            self._open[event.match_id] -= 1
            if not self._open[event.match_id]:
                del self._open[event.match_id]
        elif isinstance(event, WorkerStarted):
            self.workers.add(event.pid)
        return event

    def cancel(self) -> None:
        self.inner.cancel()

    def close(self) -> None:
        self.inner.close()


def _run_until(runner: LadderRunner, games: int) -> None:
    stored: list[int] = []

    def on_game(game_id: int) -> None:
        stored.append(game_id)
        if len(stored) >= games:
            runner.stop()

    runner.on_game = on_game
    thread = threading.Thread(target=runner.run)
    thread.start()
    thread.join(240)
    if thread.is_alive():
        runner.stop()
        thread.join(60)
        raise AssertionError(f"{games} games were not played within 240 s")


@pytest.mark.parametrize("ahead", [None, 0], ids=["one-queued-per-worker", "control-none-queued"])
def test_one_match_waits_queued_per_worker_picked_with_the_matches_in_play(
    tmp_path: Path, ahead: int | None
) -> None:
    """A worker whose match ends finds the next one queued (as a round robin's workers do);
    the queued matches are picked with the matches in play counted (8 bots, 4 matches: 8
    different bots). The control (``ahead=0``) hands over only one match per worker."""
    data = tmp_path / "data"
    _add(data, tmp_path, *"abcdefgh")
    with Store.open(data) as store:
        ladder = create_ladder(store, "ladder", TournamentConfig(), {})
        executor = _Recorded(2)
        runner = LadderRunner(store, ladder, concurrency=2, executor=executor, ahead=ahead)
        _run_until(runner, 6)
    open_matches = 2 + (2 if ahead is None else ahead)
    first = executor.batches[0]
    assert len(first) == open_matches, executor.batches
    assert len({v for _, a, b in first for v in (a, b)}) == 2 * open_matches, first
    assert max(executor.open_after) == open_matches, executor.open_after
    assert all(len(batch) >= 1 for batch in executor.batches[1:])


def test_a_resumed_ladder_with_one_unfinished_match_still_starts_a_worker_per_slot(
    tmp_path: Path,
) -> None:
    """The executor starts as many workers as its first batch has matches: the resumed
    match goes in one batch with the new ones, not alone (alone, it would hold a killed
    ladder with one unfinished match to one worker for good)."""
    data = tmp_path / "data"
    _add(data, tmp_path, "a", "b", "c", "d")
    with Store.open(data) as store:
        ladder = create_ladder(store, "ladder", TournamentConfig(), {})
        a, b, *_ = (r.version_id for r in ladder_entrants(store, ladder))
        left = add_ladder_match(store, ladder, a, b, games=2, seed=11)  # a killed run's match
        executor = _Recorded(2)
        runner = LadderRunner(store, ladder, concurrency=2, executor=executor, ahead=0)
        _run_until(runner, 6)
    assert len(executor.workers) == 2, f"workers started: {sorted(executor.workers)}"
    assert executor.batches[0][0][0] == left, "the unfinished match is not played first"
    assert len(executor.batches[0]) == 2, executor.batches
    assert _rows(data, f"SELECT COUNT(*) FROM games WHERE match_id = {left}") == [(2,)]


def _status(data: Path, name: str = "ladder") -> dict[str, object]:
    import json

    shown = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "status", name, "--json",
         "--data-dir", str(data)], capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    status: dict[str, object] = json.loads(shown.stdout)
    return status


def test_stopping_the_server_interrupts_the_ladder_saying_so(tmp_path: Path) -> None:
    """A clean stop leaves the ladder reading "interrupted: the server was stopped" (not
    "stopped without recording why") and prints no traceback from the API's event loop
    ("Exception in callback PollerCompletionQueue._handle_events ... OSError: [Errno 9]
    Bad file descriptor", what a process exiting under a running loop prints). Six stops
    with a match in play, by SIGTERM and Ctrl-C (SIGINT); ``tournament status`` shows the
    last one."""
    data = tmp_path / "data"
    _add(data, tmp_path, "a", "b", "c")
    for stop in (signal.SIGTERM, signal.SIGINT) * 3:
        before = len(_games(data))

        def played(before: int = before) -> bool:
            return len(_games(data)) > before

        server = _serve(data, concurrency=1)  # one match in play is what a stop needs
        try:
            _wait("a stored game", played)
            server.send_signal(stop)
            assert server.wait(60) == 0
        finally:
            if server.poll() is None:
                server.kill()
                server.wait(10)
        assert server.stderr is not None
        stderr = server.stderr.read().decode(errors="replace")
        for sign in ("Traceback", "Exception in callback", "Bad file descriptor"):
            assert sign not in stderr, f"{stop.name}: {stderr}"
        with Store.open(data) as store:
            ladder = get_tournament(store, "ladder")
        assert (ladder.status, ladder.interrupted_reason) == (
            INTERRUPTED, "the server was stopped"
        ), f"{stop.name}"
    shown = _status(data)
    assert (shown["status"], shown["interrupted_reason"]) == (
        "interrupted", "the server was stopped"
    )


@pytest.mark.parametrize(
    "damage", ["missing", "changed", None],
    ids=["copy missing", "copy changed", "control: in place"],
)
def test_a_bot_whose_stored_copy_is_gone_is_withdrawn_and_the_ladder_goes_on(
    tmp_path: Path, damage: str | None
) -> None:
    """match_jobs refuses such a match (each game would be the bot's crash, rated as its
    loss, or another program's game counted as this version's); the ladder withdraws the
    bot and goes on rather than letting the refusal end the whole ladder thread
    (ladder_crashed)."""
    data = tmp_path / "data"
    _add(data, tmp_path, "a", "b", "c")
    stored = next((data / "bots" / "c").iterdir())
    missing = damage is not None
    if damage == "missing":
        stored.rename(tmp_path / "aside")
    elif damage == "changed":
        with (stored / "bot.toml").open("a") as toml:
            toml.write("# changed on disk\n")
    args = argparse.Namespace(
        ladder_name="ladder", concurrency=2, **{f"ladder_{k}": None for k in (
            "games_per_match", "seed", "action_ms", "bank_ms", "placement_matches",
            "placement_in_play", "max_repeat")},
    )  # fmt: skip
    crashed: list[BaseException] = []
    with Store.open(data) as store:
        runner = LadderRunner(store, prepare_ladder(store, args), concurrency=2)

        def run() -> None:
            try:
                runner.run()
            except BaseException as error:  # the thread's end, for the assertion below
                crashed.append(error)

        thread = threading.Thread(target=run)
        thread.start()
        try:
            _wait("six stored games", lambda: len(_games(data)) >= 6 or not thread.is_alive())
        finally:
            runner.stop()
            thread.join(60)
        assert not crashed, crashed
        c_id = _rows(data, "SELECT v.id FROM bot_versions v JOIN bots b ON b.id = v.bot_id"
                     " WHERE b.name = 'c'")[0][0]  # fmt: skip
        with_c = _rows(data, f"SELECT COUNT(*) FROM games WHERE {c_id} IN (seat0_id, seat1_id)")
        assert is_withdrawn(store, "c") is missing
        assert (with_c[0][0] == 0) is missing  # placement: c plays at once when it can
        assert get_tournament(store, runner.tournament_id).interrupted_reason == (
            "the ladder was stopped"
        )
    assert len(_games(data)) >= 6


def test_a_slow_starting_bot_is_charged_its_start_up(tmp_path: Path) -> None:
    """A bot that takes seconds to say Hello and then plays: each game that launched it
    (the first of each half) carries its start-up, measured by the referee, and its ladder
    time holds it; the quick bot is charged its own launch only."""
    data = tmp_path / "data"
    slow = _bot(tmp_path, "slowstart")
    (slow / "bot.py").write_text(
        "import time\ntime.sleep(1.5)\n" + (slow / "bot.py").read_text()
    )
    with Store.open(data) as store:
        add_bot_version(store, load_bot(slow))
        add_bot_version(store, load_bot(_bot(tmp_path, "quick")))
        ladder = create_ladder(store, "ladder", TournamentConfig(games_per_match=2), {})
        _run_until(LadderRunner(store, ladder, concurrency=1, ahead=0), 2)
    (slow_id,) = _rows(data, "SELECT v.id FROM bot_versions v JOIN bots b ON b.id = v.bot_id"
                       " WHERE b.name = 'slowstart'")[0]  # fmt: skip
    games = _rows(data, "SELECT seat0_id, startup0_ms, startup1_ms FROM games ORDER BY id")
    assert len(games) == 2
    for seat0, start0, start1 in games:
        slow_start, quick_start = (start0, start1) if seat0 == slow_id else (start1, start0)
        assert isinstance(slow_start, float) and isinstance(quick_start, float)
        assert 1500 <= slow_start < 10_000 and quick_start < slow_start - 500
    ((charged,),) = _rows(
        data, f"SELECT charged_ms FROM ladder_totals WHERE bot_version_id = {slow_id}"
    )
    assert isinstance(charged, float) and charged >= 3000  # two launches, whatever the games
    _assert_totals_are_the_history(data)
