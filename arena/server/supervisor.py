"""The tournaments a server runs: one thread each, their progress fanned out to watchers.

``TournamentSupervisor`` owns the threads: it starts a runner at most once per
tournament, logs a runner that crashes, says whether one is still running and
stops them all (each reads interrupted with the reason given) before the store
is closed. Watchers subscribe to a tournament's ``ProgressEvent`` stream from
an event loop; the runner publishes from its own thread.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from arena.logs import get_logger
from arena.server.offloop import LoopInbox
from arena.store import DamagedDatabaseError, TournamentLease
from arena.tournament.orchestration.runner import ProgressEvent, TournamentRunner


@dataclass
class TournamentSupervisor:
    """Running tournaments by id (their threads and runners) and their watchers."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    watchers: dict[int, list[LoopInbox[ProgressEvent]]] = field(default_factory=dict)
    threads: dict[int, threading.Thread] = field(default_factory=dict)
    runners: dict[int, TournamentRunner] = field(default_factory=dict)

    def subscribe(
        self, tournament_id: int, loop: asyncio.AbstractEventLoop
    ) -> LoopInbox[ProgressEvent]:
        inbox: LoopInbox[ProgressEvent] = LoopInbox(loop)
        with self.lock:
            self.watchers.setdefault(tournament_id, []).append(inbox)
        return inbox

    def unsubscribe(self, tournament_id: int, inbox: LoopInbox[ProgressEvent]) -> None:
        with self.lock:
            self.watchers.get(tournament_id, []).remove(inbox)

    def publish(self, event: ProgressEvent) -> None:
        """Hand ``event`` to every watcher of its tournament (from any thread)."""
        with self.lock:
            inboxes = list(self.watchers.get(event.tournament_id, []))
        for inbox in inboxes:
            inbox.put(event)

    def is_running(self, tournament_id: int) -> bool:
        with self.lock:
            thread = self.threads.get(tournament_id)
            return thread is not None and thread.is_alive()

    def start(
        self,
        tournament_id: int,
        new_runner: Callable[[], TournamentRunner],
        take_lease: Callable[[TournamentRunner], TournamentLease],
    ) -> bool:
        """Run a new runner of ``tournament_id`` in a thread; False if one runs already.

        ``take_lease`` is called before the thread starts, so what it raises
        (another process holds the tournament) reaches the caller and nothing starts.
        """
        with self.lock:
            thread = self.threads.get(tournament_id)
            if thread is not None and thread.is_alive():
                return False
            runner = new_runner()
            lease = take_lease(runner)
            thread = threading.Thread(
                target=_run, args=(runner, lease), name=f"tournament-{tournament_id}", daemon=True
            )
            self.threads[tournament_id] = thread
            self.runners[tournament_id] = runner
            thread.start()
            return True

    def stop(self, tournament_id: int, reason: str, timeout_s: float) -> bool | None:
        """Stop tournament ``tournament_id`` and wait up to ``timeout_s``: None when this
        process does not run it, else whether it has ended."""
        with self.lock:
            runner = self.runners.get(tournament_id)
            thread = self.threads.get(tournament_id)
        if runner is None or thread is None or not thread.is_alive():
            return None
        runner.stop(reason)
        thread.join(timeout_s)
        return not thread.is_alive()

    def stop_all(self, reason: str, timeout_s: float = 30.0) -> None:
        """Stop every running tournament and wait for them up to ``timeout_s`` in all:
        each reads interrupted saying ``reason``, its unstored games left to a resume."""
        with self.lock:
            running = [(self.runners[t], thread) for t, thread in self.threads.items()
                       if thread.is_alive() and t in self.runners]  # fmt: skip
        for runner, _ in running:
            runner.stop(reason)
        deadline = time.monotonic() + timeout_s
        for _, thread in running:
            thread.join(max(0.0, deadline - time.monotonic()))


def _run(runner: TournamentRunner, lease: TournamentLease) -> None:
    try:
        runner.run(lease)
    except DamagedDatabaseError as error:  # one line naming the file, no traceback
        get_logger(service="arena").error(
            "tournament_stopped", tournament_id=runner.tournament_id,
            reason=error.stopped("the tournament"),
        )  # fmt: skip
    except Exception:
        get_logger(service="arena").exception(
            "tournament_crashed", tournament_id=runner.tournament_id
        )
