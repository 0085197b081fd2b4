"""LocalProcessExecutor: how a batch of matches is handed to its workers.

With a single worker the whole batch is one task (``_play_matches``), so that the
worker launches each next match's first half while the current match's last half
plays (``play_in_turn``'s ``first``/``then``, tested in tests/referee/test_halves.py);
with several workers each match is a task of its own, taken by whichever is free.
Real worker processes and sandboxed bots: every job reports once, every game once.
"""

from __future__ import annotations

import multiprocessing.forkserver
import os
import signal
import threading
import time

import pytest

from arena.referee import MatchConfig, TimeControl, load_bot
from arena.referee.halves import half_configs
from arena.resources import sample_bot
from arena.testing.waiting import assert_stays, wait_until
from arena.tournament.execution.executor import GameFinished, JobDone, MatchJob
from arena.tournament.execution.local_executor import LocalProcessExecutor

pytestmark = pytest.mark.slow

CONFIG = MatchConfig(games=2, time_control=TimeControl(2000, 2000))
MATCHES = (1, 2, 3)


def _jobs() -> list[MatchJob]:
    random = load_bot(sample_bot("python_random"))
    return [
        MatchJob(match, half, random, random, half=half.indices_to_play[0] % 2, live=False)
        for match in MATCHES
        for half in half_configs(CONFIG)
    ]


@pytest.mark.parametrize(("workers", "tasks"), [(1, 1), (2, len(MATCHES))])
def test_a_batch_is_one_task_for_one_worker_and_every_run_reports_once(
    workers: int, tasks: int
) -> None:
    executor = LocalProcessExecutor(concurrency=workers, pin_cpus=False)
    jobs = _jobs()
    done: list[JobDone] = []
    games: list[tuple[int, int]] = []
    try:
        executor.submit(jobs)
        assert len(executor._futures) == tasks
        deadline = time.monotonic() + 120
        while len(done) < len(jobs) and time.monotonic() < deadline:
            event = executor.next_event(1.0)
            if isinstance(event, JobDone):
                done.append(event)
            elif isinstance(event, GameFinished):
                games.append((event.match_id, event.report.index))
    finally:
        executor.close()
    assert sorted((event.match_id, event.half) for event in done) == sorted(j.key for j in jobs)
    assert [event.error for event in done] == [None] * len(jobs)
    assert sorted(games) == [(match, index) for match in MATCHES for index in (0, 1)]


def test_a_cancel_kills_unreported_workers_and_ends_the_pool_before_it_returns() -> None:
    """``cancel`` kills a worker whose start was never read (its pid unknown to the
    executor) and leaves none of the pool's threads behind: a manager thread still winding
    down when the process exits races ``concurrent.futures``' exit hook, which then writes
    to the pipe that thread closed ("Bad file descriptor" as the server stops)."""
    executor = LocalProcessExecutor(concurrency=1, pin_cpus=False)
    before = set(threading.enumerate())
    pool = executor._started(1)
    busy = pool.submit(time.sleep, 120)  # a worker in a long job, its WorkerStarted unread
    wait_until(busy.running, "the job handed to the worker")
    workers = list(pool._processes.values())
    executor.cancel()
    assert [t.name for t in threading.enumerate() if t not in before] == []
    assert [worker.exitcode for worker in workers] == [-signal.SIGKILL]


def test_a_worker_and_its_forkserver_leave_sigterm_and_sigint_to_the_runner() -> None:
    """SIGTERM and SIGINT sent to a worker and the forkserver (a whole process group's,
    under systemd's default KillMode or from a terminal) end neither: the runner stops
    its matches and then the workers (``cancel``), which SIGKILL still ends."""
    executor = LocalProcessExecutor(concurrency=1, pin_cpus=False)
    pool = executor._started(1)
    try:
        busy = pool.submit(time.sleep, 120)
        wait_until(busy.running, "the job handed to the worker")
        workers = list(pool._processes.values())
        forkserver = multiprocessing.forkserver._forkserver._forkserver_pid
        assert forkserver is not None
        for pid in (forkserver, *(worker.pid for worker in workers)):
            assert pid is not None
            for stop in (signal.SIGTERM, signal.SIGINT):
                os.kill(pid, stop)
        assert_stays(
            lambda: all(worker.is_alive() for worker in workers) and not busy.done(),
            0.5, "the worker alive in its job",
        )  # fmt: skip
        os.kill(forkserver, 0)  # still there: its death would SIGKILL every worker
    finally:
        executor.cancel()
    assert [worker.exitcode for worker in workers] == [-signal.SIGKILL]
