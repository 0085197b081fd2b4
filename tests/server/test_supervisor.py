"""The tournament supervisor: one thread per tournament, a lease refused before any
starts, a crash logged and over, every run stopped on demand; progress to its watchers."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from arena.server.supervisor import TournamentSupervisor
from arena.store import LeaseHeldError
from arena.testing.aio import run_apart
from arena.tournament.orchestration.runner import ProgressEvent, ProgressKind


class _Runner:
    """Stands in for a TournamentRunner: runs until stopped (or raises if told to)."""

    def __init__(self, tournament_id: int, crash: bool = False) -> None:
        self.tournament_id = tournament_id
        self.crash = crash
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.stop_reason: str | None = None
        self.lease: Any = None

    def run(self, lease: Any) -> None:
        self.lease = lease
        self.started.set()
        if self.crash:
            raise RuntimeError("the runner broke")
        self.stopped.wait(30)

    def stop(self, reason: str) -> None:
        self.stop_reason = reason
        self.stopped.set()


def _lease(runner: Any) -> str:
    return f"lease-{runner.tournament_id}"


def test_a_tournament_runs_once_and_stops_on_demand() -> None:
    supervisor = TournamentSupervisor()
    first, second = _Runner(1), _Runner(1)
    assert supervisor.start(1, lambda: first, _lease)  # type: ignore[arg-type,return-value]
    assert first.started.wait(10) and first.lease == "lease-1"
    assert supervisor.is_running(1) and not supervisor.is_running(2)
    assert not supervisor.start(1, lambda: second, _lease)  # type: ignore[arg-type,return-value]
    assert not second.started.is_set()
    supervisor.stop_all("the server was stopped", timeout_s=10)
    assert first.stop_reason == "the server was stopped"
    assert not supervisor.is_running(1)
    third = _Runner(1)
    assert supervisor.start(1, lambda: third, _lease)  # type: ignore[arg-type,return-value]
    supervisor.stop_all("again", timeout_s=10)
    assert third.stop_reason == "again"


def test_a_held_lease_reaches_the_caller_and_starts_nothing() -> None:
    supervisor = TournamentSupervisor()

    def held(runner: Any) -> Any:
        raise LeaseHeldError("t3", 42)

    runner = _Runner(3)
    with pytest.raises(LeaseHeldError, match="process 42"):
        supervisor.start(3, lambda: runner, held)  # type: ignore[arg-type,return-value]
    assert not supervisor.is_running(3) and not runner.started.is_set()
    assert supervisor.threads == {} and supervisor.runners == {}


def test_a_crashed_runner_is_over_and_may_start_again() -> None:
    supervisor = TournamentSupervisor()
    crashing = _Runner(4, crash=True)
    assert supervisor.start(4, lambda: crashing, _lease)  # type: ignore[arg-type,return-value]
    supervisor.threads[4].join(10)
    assert not supervisor.is_running(4)
    again = _Runner(4)
    assert supervisor.start(4, lambda: again, _lease)  # type: ignore[arg-type,return-value]
    supervisor.stop_all("done", timeout_s=10)


def _event(tournament_id: int, kind: ProgressKind, message: str) -> ProgressEvent:
    return ProgressEvent(tournament_id, 0, 2, message, kind)


def test_progress_reaches_the_tournaments_watchers_only() -> None:
    async def watch() -> tuple[list[ProgressEvent | None], list[ProgressEvent | None]]:
        supervisor = TournamentSupervisor()
        loop = asyncio.get_running_loop()
        mine, other = supervisor.subscribe(1, loop), supervisor.subscribe(2, loop)
        published = [
            _event(1, ProgressKind.ROUND_PAIRED, "round 1 paired"),
            _event(1, ProgressKind.ENDED, "finished"),
        ]
        thread = threading.Thread(target=lambda: [supervisor.publish(e) for e in published])
        thread.start()
        thread.join()
        got = [await mine.get(5), await mine.get(5)]
        supervisor.unsubscribe(1, mine)
        supervisor.publish(_event(1, ProgressKind.GAME_STORED, "a vs b: draw"))
        return [*got, await mine.get(0.05)], [await other.get(0.05)]

    mine, other = run_apart(watch())
    assert [e.kind if e else None for e in mine] == [
        ProgressKind.ROUND_PAIRED, ProgressKind.ENDED, None
    ]  # fmt: skip
    assert other == [None]
