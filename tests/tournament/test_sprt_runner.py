"""SPRT tests and gauntlets with real sandboxed bots: decide, kill -9, resume; flags refused."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.referee import load_bot
from arena.store import Store, add_bot_version
from arena.testing.waiting import wait_until
from arena.tournament.statistics.sprt import Decision, EloModel, SprtParams, sprt_state
from arena.tournament.statistics.stats import Pentanomial
from tests.cli import arena_in_process
from tests.tournament.test_runner import _bot_copy, _check_consistent, _kill_runner

TEST = ["--elo0", "0", "--elo1", "150", "--model", "logistic", "--max-pairs", "60"]
PARAMS = SprtParams(0.0, 150.0, model=EloModel.LOGISTIC)
CONCURRENCY = 2


def _data(tmp: Path, bots: dict[str, str]) -> Path:
    data = tmp / "data"
    with Store.open(data) as store:
        for name, kind in bots.items():
            add_bot_version(store, load_bot(_bot_copy(tmp, kind, name)))
    return data


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", "tournament", *args, "--data-dir", str(data)],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip


def _in_process(
    capsys: pytest.CaptureFixture[str], data: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """`arena ARGS --data-dir DATA` in this process (``arena.cli.main``, what the process
    runs): for the commands that set up or read the store around the processes under test."""
    capsys.readouterr()
    status = main([*args, "--data-dir", str(data)])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), status, out, err)


def _resume(data: Path, name: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", "resume", name, "--data-dir", str(data),
         "--no-progress", "--concurrency", str(CONCURRENCY)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip


def _stored(data: Path) -> dict[int, tuple[object, ...]]:
    """game id -> (match round, game index, seat 0 bot, winner seat, record)."""
    db = sqlite3.connect(data / "arena.db")
    rows = db.execute(
        "SELECT g.id, m.round, g.game_index, b.name, g.winner_seat, g.record FROM games g"
        " JOIN matches m ON m.id = g.match_id JOIN bot_versions v ON v.id = g.seat0_id"
        " JOIN bots b ON b.id = v.bot_id"
    ).fetchall()
    db.close()
    return {r[0]: tuple(r[1:]) for r in rows}


def _independent_decision(stored: dict[int, tuple[Any, ...]]) -> tuple[int | None, int]:
    """The first complete prefix of pairs whose LLR leaves the bounds, from the rows alone
    (``sprt_state`` on each prefix's counts), and the number of pairs stored."""
    points: dict[int, list[float]] = {}
    for pair, _index, seat0, winner, _record in stored.values():
        score = 0.5 if winner is None else float((winner == 0) == (seat0 == "greedy"))
        points.setdefault(pair, []).append(score)
    counts = [0] * 5
    for pair in range(1, max(points, default=0) + 1):
        got = points.get(pair, [])
        if len(got) != 2:
            break
        counts[int(2 * sum(got))] += 1
        state = sprt_state(Pentanomial(tuple(counts)), PARAMS)  # type: ignore[arg-type]
        if state.decision is not Decision.CONTINUE:
            return pair, len(points)
    return None, len(points)


@pytest.mark.slow
def test_a_killed_sprt_test_resumes_to_the_same_decision_from_the_same_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _data(tmp_path, {"greedy": "greedy", "random": "random"})
    done = _in_process(capsys, data, "tournament", "create", "t", "greedy", "random",
                       "--format", "sprt", *TEST)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rng = random.Random(int.from_bytes(os.urandom(4)))
    kills, seen_decisions, snapshots = 0, [], []
    process = _resume(data, "t")
    for _ in range(2):
        target = rng.randint(1, 16)  # kill once this many games are stored
        wait_until(lambda p=process, n=target: p.poll() is not None or len(_stored(data)) >= n,
                   f"{target} games stored", 300, interval_s=rng.uniform(0.001, 0.3),
                   state=lambda: len(_stored(data)))  # fmt: skip
        if process.poll() is not None:
            break
        _kill_runner(process)
        kills += 1
        snapshots.append(_stored(data))
        seen_decisions.append(_independent_decision(snapshots[-1])[0])
        _check_consistent(data)
        process = _resume(data, "t")
    assert process.wait(600) == 0, process.stderr.read() if process.stderr else ""
    assert kills >= 1, "the test finished before the first kill"
    final = _stored(data)
    for snapshot in snapshots:
        assert all(final.get(game_id) == row for game_id, row in snapshot.items()), (
            "a game stored before a kill was changed or dropped"
        )
    pairs = sorted((row[0], row[1]) for row in final.values())
    assert len(pairs) == len(set(pairs)), "a game counted twice"
    rounds = {row[0] for row in final.values()}
    assert pairs == [(r, i) for r in sorted(rounds) for i in (0, 1)], "a pair left unfinished"
    decided_at, scheduled = _independent_decision(final)
    assert decided_at is not None and decided_at <= scheduled < decided_at + CONCURRENCY
    for seen in seen_decisions:  # a decision seen at a kill is the one reached at the end
        assert seen is None or seen == decided_at
    status = json.loads(_in_process(capsys, data, "tournament", "status", "t", "--json").stdout)
    sprt = status["sprt"]
    assert status["status"] == "finished" and sprt["verdict"] == "H1 accepted"
    assert (sprt["decided_at"], sprt["pairs_scheduled"]) == (decided_at, scheduled)
    assert sprt["pairs_complete"] == scheduled and len(sprt["llr_history"]) == scheduled
    _check_consistent(data)
    audit = _in_process(capsys, data, "audit", "t")
    assert audit.returncode == 0 and "pass" in audit.stdout, audit.stdout + audit.stderr
    print(f"SPRT kill test: {kills} kill(s) at {snapshots and [len(s) for s in snapshots]}"
          f" games, H1 accepted at pair {decided_at}, {scheduled} pairs played")  # fmt: skip


@pytest.mark.slow
def test_a_gauntlet_scores_the_candidate_against_each_opponent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _data(tmp_path, {"greedy": "greedy", "r1": "random", "r2": "random"})
    done = _cli(data, "run", "g", "greedy", "r1", "r2", "--format", "gauntlet", "--games", "4",
                "--no-progress", "--concurrency", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "greedy against the field" in done.stdout and "overall" in done.stdout
    status = json.loads(_in_process(capsys, data, "tournament", "status", "g", "--json").stdout)
    gauntlet = status["gauntlet"]
    assert gauntlet["candidate"] == "greedy"
    assert [row["opponent"] for row in gauntlet["opponents"]] == ["r1", "r2"]
    for row in gauntlet["opponents"]:
        assert row["games"] == 4 and row["interval"]["pairs"] == 2
        assert row["wins"] + row["draws"] + row["losses"] == 4
    overall = gauntlet["overall"]
    assert overall["games"] == 8 and overall["interval"]["pairs"] == 4
    assert overall["wins"] == sum(row["wins"] for row in gauntlet["opponents"])
    crosstable = {(c["bot"], c["opponent"]) for c in status["crosstable"]}
    assert crosstable == {("greedy", "r1"), ("r1", "greedy"), ("greedy", "r2"), ("r2", "greedy")}


def _dump(data: Path) -> list[str]:
    with sqlite3.connect(data / "arena.db") as db:
        return list(db.iterdump())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "sprt", "a", "b"], "needs elo0 and elo1, or a preset"),
        (["--format", "sprt", "a", "b", "c", "--sprt", "gain"], "between two bots"),
        (["--format", "sprt", "a", "b", "--elo0", "5", "--elo1", "0"], "elo1 must be above"),
        (["--format", "sprt", "a", "b", "--elo0", "0", "--elo1", "250"],
         "elo1 must lie within [-200, 200] (normalized Elo)"),
        (["--format", "sprt", "a", "b", "--sprt", "gain", "--alpha", "0.7"], "alpha must lie"),
        (["--format", "sprt", "a", "b", "--sprt", "gain", "--max-pairs", "0"], "max_pairs"),
        (["--format", "sprt", "a", "b", "--sprt", "gain", "--games", "4"], "one deal pair"),
        (["--format", "sprt", "a", "b", "--sprt", "fast"], "invalid choice: 'fast'"),
        (["--format", "sprt", "a", "b", "--sprt", "gain", "--model", "x"], "invalid choice"),
        (["--format", "sprt", "a", "b", "--elo0", "nan", "--elo1", "5"], "elo0 must be a finite"),
        (["a", "b", "--elo0", "0"], "--elo0 is for sprt tests only"),
        (["--format", "swiss", "a", "b", "--sprt", "gain"], "--sprt is for sprt tests only"),
        (["--format", "gauntlet", "a", "b", "--games", "3"], "even number of games"),
    ],
    ids=["no-bounds", "three-bots", "reversed", "normalized-far", "alpha", "max-pairs",
         "games", "preset", "model", "nan", "elo-on-round-robin", "sprt-on-swiss",
         "gauntlet-odd-games"],
)  # fmt: skip
@pytest.mark.parametrize("command", ["create", "run"])
def test_bad_flags_are_refused_in_one_line_and_store_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, args: list[str],
    message: str,
) -> None:  # fmt: skip
    data = _data(tmp_path, {"a": "random", "b": "random", "c": "random"})
    before = _dump(data)
    status, out, err = arena_in_process(capsys, "tournament", command, "t", *args, "--data-dir",
                                 str(data))  # fmt: skip
    lines = [line for line in err.splitlines() if not line.startswith("usage:")]
    assert status == 2 and out == "" and message in err, err
    assert len([line for line in lines if line.strip() and not line.startswith(" ")]) == 1, err
    assert _dump(data) == before
