"""The runner with a second executor: the MatchExecutor interface is all it needs.

``SequentialExecutor`` plays the submitted jobs one after the other in a
thread of this process (no worker processes, no forkserver): a real executor,
the shape a remote one takes, written without touching the runner.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.referee import GameReport, run_match
from arena.store import Store, TournamentConfig, TournamentStatus, get_tournament, list_matches
from arena.tournament.execution.executor import (
    GameFinished,
    JobDone,
    JobEvent,
    MatchExecutor,
    MatchJob,
)
from arena.tournament.orchestration.runner import TournamentRunner
from arena.tournament.policy.rounds import create_tournament

from .test_runner import _check_consistent, _data_dir_with_bots

pytestmark = pytest.mark.slow

BOTS = {"r1": "random", "r2": "random", "g1": "greedy"}


class SequentialExecutor:
    """A ``MatchExecutor`` that plays its jobs in order, in one thread of this process."""

    def __init__(self, *, lose_jobs: bool = False) -> None:
        self.lose_jobs = lose_jobs  # report every job failed without playing it
        self.submitted: list[tuple[int, int]] = []
        self._jobs: queue.SimpleQueue[MatchJob | None] = queue.SimpleQueue()
        self._events: queue.SimpleQueue[JobEvent] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, daemon=True)
        self._thread.start()

    def submit(self, jobs: Sequence[MatchJob]) -> None:
        for job in jobs:
            self.submitted.append(job.key)
            self._jobs.put(job)

    def next_event(self, timeout_s: float) -> JobEvent | None:
        try:
            if timeout_s <= 0:
                return self._events.get_nowait()
            return self._events.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def cancel(self) -> None:
        self.close()

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(60)

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            self._events.put(JobDone(job.match_id, job.half, self._play(job)))

    def _play(self, job: MatchJob) -> str | None:
        if self.lose_jobs:
            return "the executor lost the job"

        def on_game(report: GameReport) -> None:
            self._events.put(GameFinished(job.match_id, report))

        try:
            run_match(job.config, job.first, job.second, on_game=on_game)
        except Exception as error:
            return f"{type(error).__name__}: {error}"
        return None


def test_a_second_executor_plays_a_whole_tournament(tmp_path: Path) -> None:
    data = _data_dir_with_bots(tmp_path, BOTS)
    executor = SequentialExecutor()
    checked: MatchExecutor = executor  # the interface, checked by mypy
    with Store.open(data) as store:
        t = create_tournament(store, "rr", "round_robin", list(BOTS), TournamentConfig())
        summary = TournamentRunner(store, t.id, executor=checked, live=False).run()
        assert summary.finished and not summary.failed_matches
        assert summary.games_recorded == 6 == get_tournament(store, t.id).games_played
        matches = list_matches(store, t.id)
    # every match in its halves (even and odd games apart), each submitted once
    assert sorted(executor.submitted) == sorted((m.id, part) for m in matches for part in (0, 1))
    _check_consistent(data)


def test_a_job_the_executor_loses_fails_its_match_and_nothing_is_stored(tmp_path: Path) -> None:
    data = _data_dir_with_bots(tmp_path, BOTS)
    with Store.open(data) as store:
        t = create_tournament(store, "rr", "round_robin", list(BOTS), TournamentConfig())
        runner = TournamentRunner(store, t.id, executor=SequentialExecutor(lose_jobs=True))
        summary = runner.run()
        matches = {m.id for m in list_matches(store, t.id)}
        assert set(summary.failed_matches) == matches
        assert set(summary.failed_matches.values()) == {"the executor lost the job"}
        assert summary.games_recorded == 0
        assert get_tournament(store, t.id).status is TournamentStatus.INTERRUPTED
