"""The tournament runner with real bots in real processes: results, Swiss, kill -9 and resume."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from arena.cli import main
from arena.kahuna import deal_from_seed
from arena.referee import load_bot
from arena.referee.seeds import MatchIdentity, deal_seed, match_seed_material
from arena.sandbox.process import wait_gone
from arena.server.follow import game_line
from arena.store import (
    INTERRUPTED,
    LeaseHeldError,
    Store,
    TournamentConfig,
    add_bot_version,
    game_record,
    get_tournament,
    leaderboard,
    lease_held,
    lease_holder,
    list_games,
    list_live_games,
    list_matches,
    live_entries,
    start_live_game,
    tournament_byes,
)
from arena.store.tournaments import UNRECORDED_INTERRUPTION
from arena.testing.interrupt import start_interruptible
from arena.testing.waiting import wait_until
from arena.tournament.execution.cpu_placement import usable_cpus
from arena.tournament.orchestration.runner import (
    ProgressEvent,
    ProgressKind,
    TournamentRunner,
)
from arena.tournament.policy.rounds import create_tournament

if TYPE_CHECKING:  # shared.py imports this module's helpers
    from .shared import References

REPO = Path(__file__).resolve().parents[2]
SAMPLES = {
    "random": REPO / "sample_bots" / "python_random",
    "greedy": REPO / "sample_bots" / "python_greedy",
}

pytestmark = pytest.mark.slow


def _bot_copy(tmp: Path, kind: str, name: str) -> Path:
    """A copy of a sample bot under another name: a distinct bot with the same play."""
    target = tmp / "bots" / name
    shutil.copytree(SAMPLES[kind], target, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (target / "bot.toml").read_text()
    kind_name = SAMPLES[kind].name
    (target / "bot.toml").write_text(toml.replace(f'name = "{kind_name}"', f'name = "{name}"'))
    return target


def _data_dir_with_bots(tmp: Path, bots: dict[str, str]) -> Path:
    data = tmp / "data"
    with Store.open(data) as store:
        for name, kind in bots.items():
            add_bot_version(store, load_bot(_bot_copy(tmp, kind, name)))
    return data


BOTS = {"r1": "random", "r2": "random", "g1": "greedy", "g2": "greedy"}


def _games(data: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(data / "arena.db")
    return db.execute(
        "SELECT m.round, m.first_id, m.second_id, g.game_index, g.seat0_id, g.winner_seat,"
        " g.reason, g.actions, g.status0, g.status1, json_extract(g.record, '$.deal'),"
        " json_extract(g.record, '$.reshuffles') FROM games g JOIN matches m ON m.id = g.match_id"
        " ORDER BY m.round, m.first_id, g.game_index"
    ).fetchall()


TEST_SECRET = bytes(range(100, 132))


def _create(data: Path, definition: list[str], secret: bytes = TEST_SECRET) -> None:
    """`arena tournament create` (the command, in this process: set-up, not what is
    tested), then give it a known secret (a reference run shares it)."""
    assert main(["tournament", "create", *definition, "--data-dir", str(data)]) == 0
    db = sqlite3.connect(data / "arena.db")
    db.execute("UPDATE tournaments SET secret = ?", (secret,))
    db.commit()
    db.close()


def _check_deals_keyed(data: Path) -> None:
    """Every stored deal is the stored secret's deal of its pair, with A in seat 0 of even games."""
    db = sqlite3.connect(data / "arena.db")
    rows = db.execute(
        "SELECT t.secret, m.seed, m.first_id, g.game_index, g.seat0_id, g.record FROM games g"
        " JOIN matches m ON m.id = g.match_id JOIN tournaments t ON t.id = m.tournament_id"
    ).fetchall()
    identities = {
        r[0]: MatchIdentity(r[1], (r[2], r[3]), (r[4], r[5])) for r in db.execute(
            "SELECT m.seed, m.round, bf.name, vf.version, bs.name, vs.version FROM matches m"
            " JOIN bot_versions vf ON vf.id = m.first_id JOIN bots bf ON bf.id = vf.bot_id"
            " JOIN bot_versions vs ON vs.id = m.second_id JOIN bots bs ON bs.id = vs.bot_id")
    }  # fmt: skip
    assert rows
    for secret, match_seed, first_id, index, seat0_id, text in rows:
        record = json.loads(text)
        material = match_seed_material(secret, identities[match_seed])
        assert tuple(record["deal"]) == deal_from_seed(deal_seed(material, index // 2))
        assert (record["match"]["deal_index"], record["match"]["paired"]) == (index // 2, True)
        assert (seat0_id == first_id) == (index % 2 == 0)
    _check_halves_apart(rows)


def _check_halves_apart(rows: list[tuple[Any, ...]]) -> None:
    """No bot process played two games of one deal: the games of one launch of the bots
    (the record's ``match_id``, one set of processes per bot, restarts included) are of
    one half (all even or all odd indices), so every deal at most once; a deal's two
    games, two halves."""
    halves: dict[str, list[tuple[int, int, int]]] = {}
    half_of: dict[tuple[int, int], set[str]] = {}
    for _secret, match_seed, _first, index, _seat0, text in rows:
        meta = json.loads(text)["match"]
        halves.setdefault(meta["match_id"], []).append((match_seed, index, meta["deal_index"]))
        half_of.setdefault((match_seed, meta["deal_index"]), set()).add(meta["match_id"])
    for half_id, games in halves.items():
        assert len({seed for seed, _, _ in games}) == 1, f"half {half_id} played two matches"
        assert len({index % 2 for _, index, _ in games}) == 1, f"half {half_id}: both halves"
        deals = [deal for _, _, deal in games]
        assert len(deals) == len(set(deals)), f"half {half_id} played a deal twice"
    assert all(len(ids) == 2 for ids in half_of.values()), "a deal's two games in one half"


def _check_consistent(data: Path) -> None:
    """Every stored game was rated exactly once and counters agree with the games."""
    db = sqlite3.connect(data / "arena.db")
    games = db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    assert db.execute("SELECT COUNT(*) FROM rating_history").fetchone()[0] == 2 * games
    for version_id, counted, mu, sigma in db.execute(
        "SELECT id, games, mu, sigma FROM bot_versions"
    ).fetchall():
        played = db.execute(
            "SELECT COUNT(*) FROM games WHERE seat0_id = ? OR seat1_id = ?",
            (version_id, version_id),
        ).fetchone()[0]
        assert counted == played
        last = db.execute(
            "SELECT mu, sigma FROM rating_history WHERE bot_version_id = ?"
            " ORDER BY id DESC LIMIT 1",
            (version_id,),
        ).fetchone()
        if played:
            assert (mu, sigma) == last


def test_round_robin_plays_every_game_and_rates_it(tmp_path: Path) -> None:
    data = _data_dir_with_bots(tmp_path, BOTS)
    events: list[ProgressEvent] = []
    with Store.open(data) as store:
        t = create_tournament(
            store, "rr", "round_robin", list(BOTS), TournamentConfig(games_per_match=2)
        )
        summary = TournamentRunner(store, t.id, concurrency=2, on_progress=events.append).run()
        assert summary.finished and not summary.failed_matches
        assert summary.games_recorded == 12 == get_tournament(store, t.id).games_played
        rows = leaderboard(store)
        assert {r.entry.bot for r in rows[:2]} == {"g1", "g2"}  # greedy beats random
        assert all(r.entry.games == 6 for r in rows)
        again = TournamentRunner(store, t.id).run()  # finished: nothing more is played
        assert again.games_recorded == 0
    assert [e.games_played for e in events if e.game_id is not None] == list(range(1, 13))
    kinds = [e.kind for e in events]
    assert kinds[-1] is ProgressKind.ENDED
    assert kinds.count(ProgressKind.GAME_STORED) == 12 and kinds.count(ProgressKind.ENDED) == 1
    assert all((e.kind is ProgressKind.GAME_STORED) == (e.game_id is not None) for e in events)
    with Store.open(data) as store:  # each game in words, as a watcher of the stored games
        told = {g.id: game_line(g) for g in list_games(store, tournament_id=t.id)}  # reads it
    assert {e.game_id: e.message for e in events if e.game_id} == told
    assert not any("(" in line for line in told.values()), told  # never a referee's code
    _check_consistent(data)
    _check_deals_keyed(data)  # and no process played both games of a deal
    cpus = usable_cpus()
    placed = list(summary.worker_cpus.values())  # what each worker read back after pinning
    if len(cpus) >= 2:  # two workers, each on its own half of the CPUs
        assert len(placed) == 2 and not set(placed[0]) & set(placed[1])
        assert sorted(placed[0] + placed[1]) == list(cpus)
    else:
        assert placed == [cpus]


def test_workers_are_not_pinned_when_asked_not_to(tmp_path: Path) -> None:
    data = _data_dir_with_bots(tmp_path, {"r1": "random", "r2": "random", "r3": "random"})
    with Store.open(data) as store:
        t = create_tournament(store, "free", "round_robin", ["r1", "r2", "r3"], TournamentConfig())
        summary = TournamentRunner(store, t.id, concurrency=2, pin_cpus=False).run()
    assert summary.finished
    assert list(summary.worker_cpus.values()) == [usable_cpus()] * len(summary.worker_cpus)


def test_swiss_pairs_rounds_as_it_goes_with_one_bye_each(tmp_path: Path) -> None:
    bots = {"r1": "random", "r2": "random", "g1": "greedy", "g2": "greedy", "g3": "greedy"}
    data = _data_dir_with_bots(tmp_path, bots)
    with Store.open(data) as store:
        t = create_tournament(store, "sw", "swiss", list(bots), TournamentConfig(rounds=3))
        summary = TournamentRunner(store, t.id, concurrency=2).run()
        assert summary.finished
        matches = list_matches(store, t.id)
        byes = tournament_byes(store, t.id)
    assert len(summary.worker_cpus) <= 2, "the workers are kept from one round to the next"
    assert sorted(byes) == [1, 2, 3] and len(set(byes.values())) == 3
    assert sorted({m.round for m in matches}) == [1, 2, 3] and len(matches) == 6
    pairs = [frozenset((m.first, m.second)) for m in matches]
    assert len(set(pairs)) == len(pairs), "a rematch although avoidable"
    _check_consistent(data)


def _run_cli(data: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", *args, "--data-dir", str(data),
         "--no-progress", "--concurrency", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=False,
    )  # fmt: skip


SWISS_BOTS = {**BOTS, "g3": "greedy"}
DEFINITIONS = {
    "round-robin": (BOTS, ["cup", *BOTS, "--games", "4", "--seed", "5"]),
    "swiss": (
        SWISS_BOTS,
        ["cup", *SWISS_BOTS, "--format", "swiss", "--rounds", "3", "--seed", "5"],
    ),
}


def _played(data: Path) -> list[tuple[object, ...]]:
    """Every game (who, seats, result) and every bye, in a stable order."""
    db = sqlite3.connect(data / "arena.db")
    byes = db.execute("SELECT 'bye', round, bot_version_id FROM byes ORDER BY round").fetchall()
    return [*_games(data), *byes]


@pytest.fixture(scope="module", params=sorted(DEFINITIONS))
def reference(
    request: pytest.FixtureRequest, references: References
) -> tuple[str, list[tuple[object, ...]]]:
    """A tournament format and its games when played without interruption (played once
    for every file that compares with it: tests/tournament/shared.py)."""
    played = references[request.param]
    assert len(played) == (24 if request.param == "round-robin" else 12 + 3)
    return request.param, played


def _descendants(root: int) -> set[int]:
    """Every living process below ``root`` (forkserver, workers, sandboxes, bots)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _kill_runner(process: subprocess.Popen[Any]) -> None:
    """SIGKILL a runner and require every process below it to be gone within 10 s."""
    family = _descendants(process.pid)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(10)
    assert wait_gone(sorted(family), 10), "a worker, bot or helper outlived the runner"


def _kill_and_resume(
    tmp_path: Path, seed: int, reference: tuple[str, list[tuple[object, ...]]]
) -> None:
    """kill -9 `arena tournament run` at random moments, resume each time, compare."""
    bots, definition = DEFINITIONS[reference[0]]
    rng = random.Random(seed)
    data = _data_dir_with_bots(tmp_path, bots)
    _create(data, definition)
    process = _run_cli(data, "resume", "cup")
    kills = 0
    for _ in range(3):
        time.sleep(rng.uniform(0.3, 2.5))  # the kill's random moment: what is tested
        if process.poll() is not None:
            break
        _kill_runner(process)
        kills += 1
        _check_consistent(data)
        process = _run_cli(data, "resume", "cup")
    assert process.wait(120) == 0, process.stderr.read() if process.stderr else ""
    assert kills >= 1
    assert _played(data) == reference[1], "a game lost, replayed differently or counted twice"
    _check_consistent(data)
    _check_deals_keyed(data)


def test_kill_9_at_random_moments_loses_and_double_counts_nothing(
    tmp_path: Path, reference: tuple[str, list[tuple[object, ...]]]
) -> None:
    _kill_and_resume(tmp_path, 1, reference)


@pytest.mark.soak
@pytest.mark.parametrize("seed", range(2, 12), ids=lambda s: f"kill-seed-{s}")
def test_kill_9_soak(
    tmp_path: Path, seed: int, reference: tuple[str, list[tuple[object, ...]]]
) -> None:
    _kill_and_resume(tmp_path, seed, reference)


def test_failures_are_rated_as_losses_and_counted_per_version(tmp_path: Path) -> None:
    data = _data_dir_with_bots(tmp_path, {"r1": "random"})
    crasher = _bot_copy(tmp_path, "random", "crasher")
    (crasher / "bot.py").write_text("raise SystemExit(3)\n")
    with Store.open(data) as store:
        add_bot_version(store, load_bot(crasher))  # stored directly: no smoke match
        t = create_tournament(store, "f", "round_robin", ["r1", "crasher"], TournamentConfig())
        summary = TournamentRunner(store, t.id, concurrency=1).run()
        assert summary.finished
        rows = {r.entry.bot: r.entry for r in leaderboard(store)}
    assert (rows["crasher"].games, rows["crasher"].losses, rows["crasher"].crashes) == (2, 2, 2)
    assert (rows["r1"].wins, rows["r1"].crashes) == (2, 0)
    assert rows["r1"].conservative > rows["crasher"].conservative
    _check_consistent(data)


def _stored_rows(data: Path) -> dict[int, tuple[object, ...]]:
    """game index -> (row id, finished_at, record) of the single match's games."""
    db = sqlite3.connect(data / "arena.db")
    rows = db.execute("SELECT game_index, id, finished_at, record FROM games").fetchall()
    return {row[0]: tuple(row[1:]) for row in rows}


def test_resume_plays_only_the_games_a_killed_match_did_not_store(tmp_path: Path) -> None:
    """kill -9 in the middle of one match: resume plays only its unstored games."""
    bots = {"r1": "random", "g1": "greedy"}
    definition = ["one", *bots, "--games", "8", "--seed", "3"]
    reference = _data_dir_with_bots(tmp_path / "ref", bots)
    _create(reference, definition)
    assert _run_cli(reference, "resume", "one").wait(120) == 0
    data = _data_dir_with_bots(tmp_path / "killed", bots)
    _create(data, definition)
    process = _run_cli(data, "resume", "one")
    wait_until(lambda: len(_stored_rows(data)) >= 2, "two games stored", 60)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(10)
    before = _stored_rows(data)
    assert 2 <= len(before) < 8, f"not killed mid-match ({len(before)} games stored)"
    with Store.open(data) as store:
        summary = TournamentRunner(store, get_tournament(store, "one").id, concurrency=1).run()
    assert summary.finished
    assert summary.games_discarded == 0, "a stored game was played again"
    assert summary.games_recorded == 8 - len(before)
    after = _stored_rows(data)
    assert {index: after[index] for index in before} == before
    assert _played(data) == _played(reference)
    _check_consistent(data)
    _check_deals_keyed(data)
    other = _data_dir_with_bots(tmp_path / "other-secret", bots)
    _create(other, definition, secret=bytes(32))
    assert _run_cli(other, "resume", "one").wait(120) == 0
    _check_deals_keyed(other)
    assert all(
        mine[10] != theirs[10] for mine, theirs in zip(_games(data), _games(other), strict=True)
    ), "a deal did not change with the tournament's secret"


def _watch_live(data: Path, running: threading.Event) -> dict[tuple[int, int], tuple[Any, ...]]:
    """Poll the live view as an admin would while the tournament runs: the longest
    view seen of each game, (head, entries)."""
    seen: dict[tuple[int, int], tuple[Any, ...]] = {}
    with Store.open(data) as store:
        while running.is_set():
            for live in list_live_games(store):
                entries = [e.entry for e in live_entries(store, live.id)]
                key = (live.match_id, live.game_index)
                if key not in seen or len(entries) > len(seen[key][1]):
                    seen[key] = (live.head, entries)
            time.sleep(0.005)  # the admin's poll pace
    return seen


def test_games_are_live_while_played_and_gone_once_stored(tmp_path: Path) -> None:
    data = _data_dir_with_bots(tmp_path, {"r1": "random", "g1": "greedy"})
    with Store.open(data) as store:
        t = create_tournament(store, "live", "round_robin", ["r1", "g1"],
                              TournamentConfig(games_per_match=6))  # fmt: skip
        match_id = list_matches(store, t.id)[0].id
        start_live_game(store, match_id, 5, {"left": "by a killed run"})
        stale_seen: list[bool] = []

        def on_progress(event: ProgressEvent) -> None:
            if event.game_id is not None and not stale_seen:  # game 0 stored, 5 not started
                stale_seen.append(any(g.game_index == 5 for g in list_live_games(store)))

        running = threading.Event()
        running.set()
        watched: dict[tuple[int, int], tuple[Any, ...]] = {}
        watcher = threading.Thread(target=lambda: watched.update(_watch_live(data, running)))
        watcher.start()
        try:
            summary = TournamentRunner(store, t.id, concurrency=1, on_progress=on_progress).run()
        finally:
            running.clear()
            watcher.join()
        assert summary.finished
        assert stale_seen == [False], "a live view left by a killed run was shown"
        assert list_live_games(store) == [], "a live view outlived its game"
        stored = {(g.match_id, g.game_index): game_record(store, g.id) for g in list_games(store)}
    watched = {key: view for key, view in watched.items() if view[1]}
    assert watched, "no game was seen live with an action"
    for key, (head, entries) in watched.items():
        record: dict[str, Any] = stored[key]
        assert head["deal"] == record["deal"]
        actions = [{k: v for k, v in e.items() if k not in ("wall_ms", "at_ms")}
                   for e in entries if "reshuffle" not in e]  # fmt: skip
        assert actions == record["actions"][: len(actions)], "live actions are not the game's"
        reshuffles = [e["reshuffle"] for e in entries if "reshuffle" in e]
        assert reshuffles == record.get("reshuffles", [])[: len(reshuffles)]


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`arena tournament ARGS` to its end: exit status, standard output and error."""
    return subprocess.run(
        [sys.executable, "-m", "arena", "tournament", *args, "--data-dir", str(data)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _shown(capsys: pytest.CaptureFixture[str], data: Path, *args: str) -> str:
    """What `arena tournament ARGS` prints (the command, in this process: it only reads)."""
    capsys.readouterr()
    code = main(["tournament", *args, "--data-dir", str(data)])
    shown = capsys.readouterr()
    assert code == 0, shown.out + shown.err
    return shown.out


def _cli_status(capsys: pytest.CaptureFixture[str], data: Path, name: str) -> dict[str, Any]:
    status: dict[str, Any] = json.loads(_shown(capsys, data, "status", name, "--json"))
    return status


def _everything(data: Path) -> list[tuple[object, ...]]:
    """Every row of every table."""
    db = sqlite3.connect(data / "arena.db")
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return [(t, *row) for t in tables for row in db.execute(f"SELECT * FROM {t} ORDER BY rowid")]


def _wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 60) -> None:
    wait_until(condition, what, timeout_s)


def test_a_killed_run_is_interrupted_one_runner_at_a_time_resumes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """kill -9 mid-run: status says interrupted (CLI and store); while a resume runs, a
    second one is refused naming its pid and stores nothing; the resume then finishes."""
    bots = {"r1": "random", "g1": "greedy"}
    data = _data_dir_with_bots(tmp_path, bots)
    run = _run_cli(data, "run", "one", *bots, "--games", "8", "--seed", "3")
    _wait_for(lambda: len(_stored_rows(data)) >= 1, "a first stored game")
    with Store.open(data) as store:
        tournament_id = get_tournament(store, "one").id
        holder = lease_holder(store, tournament_id)
        assert holder is not None and holder.pid == run.pid
        assert get_tournament(store, "one").status == "running"
    os.kill(run.pid, signal.SIGKILL)
    run.wait(10)
    assert len(_stored_rows(data)) < 8, "finished before it was killed"

    with Store.open(data) as store:
        assert not lease_held(store, tournament_id)
        assert get_tournament(store, "one").status == INTERRUPTED
    assert _cli_status(capsys, data, "one")["status"] == INTERRUPTED
    assert _cli_status(capsys, data, "one")["interrupted_reason"] == UNRECORDED_INTERRUPTION
    hint = "resume it with `arena tournament resume one`"
    shown = _shown(capsys, data, "status", "one")
    assert "(interrupted," in shown and hint in shown, shown
    listed = _shown(capsys, data, "list")
    assert "interrupted" in listed and hint in listed, listed

    resume = _run_cli(data, "resume", "one")
    with Store.open(data) as store:
        _wait_for(lambda: getattr(lease_holder(store, tournament_id), "pid", None) == resume.pid,
                  "the resume's lease")  # fmt: skip
    os.kill(resume.pid, signal.SIGSTOP)  # nothing is written while we look
    try:
        before = _everything(data)
        assert _cli_status(capsys, data, "one")["status"] == "running"
        second = _cli(data, "resume", "one", "--no-progress")
        assert second.returncode == 1
        assert second.stderr.startswith(
            f"arena: tournament 'one' is already being run by process {resume.pid}:"
        ), second.stderr
        with Store.open(data) as store, pytest.raises(LeaseHeldError) as refused:
            TournamentRunner(store, tournament_id).run()
        assert refused.value.pid == resume.pid
        assert _everything(data) == before, "a refused runner stored something"
    finally:
        os.kill(resume.pid, signal.SIGCONT)
    assert resume.wait(120) == 0, resume.stderr.read() if resume.stderr else ""
    status = _cli_status(capsys, data, "one")
    assert (status["status"], status["games_played"]) == ("finished", 8)
    _check_consistent(data)


STOPS = [
    # (signal, the reason recorded, exit status, the line said)
    (signal.SIGTERM, "stopped by SIGTERM (a service manager's stop, or kill)", 143,
     "arena: tournament one is interrupted: stopped by SIGTERM (a service manager's stop,"
     " or kill)"),
    (signal.SIGINT, "stopped by an interrupt (Ctrl-C or SIGINT)", 130, "arena: interrupted"),
]


@pytest.mark.parametrize(("stop", "reason", "status", "said"), STOPS, ids=["SIGTERM", "Ctrl-C"])
def test_a_run_stopped_by_a_signal_records_why_and_resume_plays_only_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stop: signal.Signals, reason: str,
    status: int, said: str,
) -> None:  # fmt: skip
    """A service manager's SIGTERM stops a run as a Ctrl-C does: the reason is recorded
    (not "stopped without recording why"), every process below the runner ends, the
    one line said is all of standard error, the stored games stay as they are and
    `resume` plays only the others."""
    bots = {"r1": "random", "g1": "greedy"}
    data = _data_dir_with_bots(tmp_path, bots)
    run = start_interruptible(
        [sys.executable, "-m", "arena", "tournament", "run", "one", *bots, "--games", "8",
         "--seed", "3", "--data-dir", str(data), "--no-progress", "--concurrency", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        _wait_for(lambda: len(_stored_rows(data)) >= 1, "a first stored game")
        family = _descendants(run.pid)
        run.send_signal(stop)
        _, err = run.communicate(timeout=60)
    finally:
        run.kill()
    assert len(_stored_rows(data)) < 8, "finished before it was stopped"
    assert (run.returncode, err) == (status, said + "\n")  # one line: the workers' bots
    # are killed as the runner stops them, no news for the terminal
    assert wait_gone(sorted(family), 10), "a worker, bot or helper outlived the runner"
    assert _cli_status(capsys, data, "one")["interrupted_reason"] == reason
    stored = _stored_rows(data)
    done = _cli(data, "resume", "one", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "discarded" not in done.stdout, done.stdout
    after = _stored_rows(data)
    assert len(after) == 8 and {i: after[i] for i in stored} == stored
    _check_consistent(data)


def test_a_runner_gives_up_its_lease_when_it_raises(tmp_path: Path) -> None:
    """Any exit from run() releases the lease; a run stopped early reads interrupted."""
    data = _data_dir_with_bots(tmp_path, {"r1": "random", "g1": "greedy", "g2": "greedy"})

    def fail_on_first_event(event: ProgressEvent) -> None:
        raise RuntimeError(f"progress display broke at {event.message!r}")

    with Store.open(data) as store:
        t = create_tournament(store, "sw", "swiss", ["r1", "g1", "g2"], TournamentConfig())
        runner = TournamentRunner(store, t.id, on_progress=fail_on_first_event)
        with pytest.raises(RuntimeError, match="round 1 paired"):
            runner.run()
        assert not lease_held(store, t.id)
        assert get_tournament(store, t.id).status == INTERRUPTED
        assert get_tournament(store, t.id).interrupted_reason == (
            "stopped by an error: RuntimeError: progress display broke at 'round 1 paired'"
        )


@pytest.mark.parametrize(
    "damage", ["missing", "changed", None],
    ids=["copy missing", "copy changed", "control: in place"],
)
def test_a_bot_whose_stored_copy_is_gone_stops_the_run_instead_of_losing_every_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str | None
) -> None:
    """Each game was played and stored as the bot's crash, rated as its loss (a copy
    changed since it was stored: another program's games counted as this version's)."""
    data = _data_dir_with_bots(tmp_path, {"r1": "random", "r2": "random"})
    _shown(capsys, data, "create", "gone", "r1", "r2", "--games", "2")
    stored = next((data / "bots" / "r1").iterdir())
    aside = tmp_path / "aside"
    program = stored / "bot.py"
    kept = program.read_bytes()
    if damage == "missing":
        stored.rename(aside)
    elif damage == "changed":
        program.write_bytes(kept + b"raise SystemExit(1)\n")  # every game its crash
    done = _cli(data, "resume", "gone", "--no-progress", "--no-cpu-pinning")
    status = _cli_status(capsys, data, "gone")
    if damage is None:
        assert done.returncode == 0 and status["games_played"] == 2, done.stderr
        return
    line = {
        "missing": f"the stored copy of r1 version {stored.name} is missing from {stored}",
        "changed": f"the stored copy of r1 version {stored.name} in {stored} has changed since"
        " it was stored (its files hash to ",
    }[damage]
    assert done.returncode == 1 and done.stderr.startswith(f"arena: {line}"), done.stderr
    assert done.stderr.count("\n") == 1
    assert (status["status"], status["games_played"]) == (INTERRUPTED, 0)
    assert "the stored copy of r1" in status["interrupted_reason"]
    if damage == "missing":  # restored: the same tournament plays on
        aside.rename(stored)
    else:
        program.write_bytes(kept)
    assert _cli(data, "resume", "gone", "--no-progress", "--no-cpu-pinning").returncode == 0
    assert _cli_status(capsys, data, "gone")["games_played"] == 2
    assert [row[8:10] for row in _games(data)] == [("ok", "ok"), ("ok", "ok")]
