"""What running a tournament and running the ladder share: one runner shape.

A runner holds the store and a tournament's id, an executor with ``concurrency``
workers (the local process pool unless it is given one), the live feed, the runner
lease and a stop reason that any thread may set. ``_guarded`` is the one run both
loops go through: the tournament reads running and its stale live views are dropped,
the loop runs, and however it ends the executor is closed; a stop, a full disk or a
damaged database cancels the matches in play (their unstored games are played again
by the next run) and is returned as the reason, any other error is recorded as the
reason the run stopped and raised.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, ClassVar

from arena.logs import get_logger
from arena.sandbox import SandboxLimits
from arena.store import (
    DamagedDatabaseError,
    StorageFullError,
    Store,
    StoreError,
    TournamentLease,
    acquire_lease,
    get_tournament,
    set_status,
)
from arena.store.models import TournamentStatus
from arena.store.tournaments import reason_line, record_interruption
from arena.tournament.execution.cpu_placement import usable_cpus
from arena.tournament.execution.executor import MatchExecutor
from arena.tournament.execution.live_feed import LiveFeed
from arena.tournament.execution.local_executor import LocalProcessExecutor


class StopRequested(Exception):
    """``stop`` was called: the run ends, saying why."""


class Terminated(KeyboardInterrupt):
    """A SIGTERM (a service manager's stop, a plain `kill`) raised where a Ctrl-C's
    KeyboardInterrupt is (``terminate_as_interrupt``): the run stops as it does at a
    Ctrl-C, its unstored games left to the next run, and the reason names SIGTERM."""


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises ``Terminated`` in the main thread while this lasts (once: a second
    SIGTERM during the clean-up is ignored; kill -9 still ends it). Elsewhere than the
    main thread, or where SIGTERM is ignored, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is None or previous == signal.SIG_IGN:  # None: not set from Python
        yield
        return

    def raise_terminated(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated

    signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class RunnerBase:
    """The shared constructor, lease, stop and guarded run of TournamentRunner and
    LadderRunner; each keeps its own loop and summary."""

    kind: ClassVar[str] = "tournament"
    """The runner's name in its log events (``{kind}_stopped``)."""

    def __init__(
        self,
        store: Store,
        tournament_id: int,
        *,
        concurrency: int | None,
        limits: SandboxLimits | None,
        unsafe: bool,
        live: bool,
        pin_cpus: bool,
        executor: MatchExecutor | None,
        log_context: dict[str, object] | None = None,
    ) -> None:
        self.store = store
        self.tournament_id = tournament_id
        self.concurrency = max(1, concurrency or len(usable_cpus()))  # the CPUs we may use
        self.limits = limits or SandboxLimits()
        self.unsafe = unsafe
        self.live = LiveFeed(store, tournament_id) if live else None
        self.executor: MatchExecutor = executor or LocalProcessExecutor(self.concurrency, pin_cpus)
        self.log = get_logger(tournament_id=tournament_id, **(log_context or {}))
        self._lease: TournamentLease | None = None  # the lease of the run under way
        self._stop = threading.Event()
        self._stop_reason = f"the {self.kind} was stopped"

    def stop(self, reason: str) -> None:
        """End the run at once (from any thread): its matches are cancelled, the unstored
        games left to the next run, and the tournament reads interrupted saying ``reason``."""
        self._stop_reason = reason
        self._stop.set()

    def _check_stop(self) -> None:
        if self._stop.is_set():
            raise StopRequested(self._stop_reason)

    def take_lease(self) -> TournamentLease:
        """The tournament's runner lease (LeaseHeldError naming the holder's pid)."""
        name = get_tournament(self.store, self.tournament_id).name
        lease = acquire_lease(self.store, self.tournament_id, name=name)
        self.log.info("tournament_lease_taken", path=str(lease.path))
        return lease

    def _guarded(
        self, held: TournamentLease, loop: Callable[[], None], *, when_full: str
    ) -> str | None:
        """Run ``loop`` under ``held``; why it stopped early (a stop, a damaged database, or
        a full disk with ``when_full`` as the advice), or None when it ran to its end."""
        self._lease = held
        set_status(self.store, self.tournament_id, TournamentStatus.RUNNING)
        if self.live is not None:
            self.live.drop_all()  # left by a run that was killed
        try:
            loop()
        except StorageFullError as error:
            # Nothing more can be stored: stop at once (the games being played would be
            # lost anyway); the next run plays again what is not stored.
            self.executor.cancel()
            self.log.error(f"{self.kind}_stopped", reason=str(error))
            return f"{error}: {when_full}"
        except DamagedDatabaseError as error:
            # Nothing more can be read or stored reliably, and a retry would meet the same
            # page: stop at once, writing nothing (the store refuses writes from now on).
            self.executor.cancel()
            reason = error.stopped(f"the {self.kind}")
            self.log.error(f"{self.kind}_stopped", reason=reason)
            return reason
        except StopRequested as stopped:
            self.executor.cancel()  # the games in play are played again by the next run
            self.log.info(f"{self.kind}_stopped", reason=str(stopped))
            return str(stopped)
        except BaseException as error:
            self.executor.cancel()  # never wait for matches whose games cannot be stored
            record_stop(self.store, self.tournament_id, held, stop_reason(error), self.log)
            raise
        finally:
            self.executor.close()
        return None


def record_stop(
    store: Store, tournament_id: int, lease: TournamentLease | None, reason: str,
    log: Any,
) -> None:  # fmt: skip
    """Store why a run (a tournament's or the ladder's) stops early; on a full disk or a
    damaged database that may fail too (then the lease file keeps it, else the tournament
    reads the store's "stopped without recording why")."""
    if lease is not None:  # needs no new space: kept when the database cannot be
        lease.note(reason_line(reason))
    try:
        record_interruption(store, tournament_id, reason)
    except (StoreError, StorageFullError) as error:
        log.error("interruption_not_recorded", reason=reason, error=str(error))
    except DamagedDatabaseError:  # refused: nothing more is written to it
        log.warning(
            "interruption_not_recorded", reason=reason,
            error="the database is damaged: the lease file keeps the reason",
        )  # fmt: skip


def stop_reason(error: BaseException) -> str:
    """Why an error ended a run, as recorded."""
    if isinstance(error, Terminated):
        return "stopped by SIGTERM (a service manager's stop, or kill)"
    if isinstance(error, KeyboardInterrupt):
        return "stopped by an interrupt (Ctrl-C or SIGINT)"
    if isinstance(error, SystemExit):
        return f"stopped: the process exited (status {error.code})"
    return f"stopped by an error: {type(error).__name__}: {error}"
