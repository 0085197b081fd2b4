"""The local executor: match jobs (one per half) in worker processes on this machine.

Workers come from a ``multiprocessing`` forkserver that has imported this
module (and with it the referee) once: the parent may be a threaded gRPC
server, where fork is unsafe, and a spawned worker would import the referee
anew (~0.3 s of CPU each). At most ``concurrency`` workers, no more than the
first batch of jobs (a Swiss round is never bigger than the first), kept from
one batch to the next, each on its own CPUs when ``pin_cpus``
(``arena.tournament.execution.cpu_placement``). Workers send their events back over a
queue as typed messages (``arena.tournament.execution.executor``). Workers die with the
runner however it goes, kill -9 included (a thread waiting on its pidfd:
``_die_with``), their bots with them (the sandbox watchdog). SIGTERM and SIGINT are
the runner's alone (``leave_stop_signals_to_the_runner``): sent to the whole group, by a
terminal or a service manager, they would end a worker mid-match, a worker's death
instead of the runner's stop in order, which ends the workers itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import queue
import select
import signal
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from arena._grpc_env import tune_child_processes
from arena.logs import get_logger
from arena.sandbox.running import is_running
from arena.sandbox.watchdog import stopped_by_its_owner
from arena.tournament.execution.cpu_placement import pin_this_process, usable_cpus, worker_cpus
from arena.tournament.execution.executor import (
    JobDone,
    JobEvent,
    MatchJob,
    WorkerStarted,
)
from arena.tournament.execution.match_chain import play_chain

_PR_SET_PDEATHSIG = 1
_RUNNER_POLL_S = 0.2
POOL_PRELOAD = "arena.tournament.execution.pool_preload"
"""The module the forkserver imports (its preload) to leave the stop signals to the runner:
the forkserver's death would end every worker (their parent-death signal)."""
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def leave_stop_signals_to_the_runner() -> None:
    """Have this process (a worker, the forkserver) outlive SIGTERM and SIGINT: the runner
    stops it once it has stopped its matches in order (``cancel``); SIGKILL and the
    runner's death still end it (``_die_with``). A handler that does nothing rather than
    SIG_IGN: a handler is reset by exec, so the bots launched from here start with the
    signals' defaults, not ignoring them."""
    for stop in STOP_SIGNALS:
        signal.signal(stop, _not_ours)


def _not_ours(_signum: int, _frame: object) -> None:
    """A stop signal sent to this pool process too: the runner's to act on."""


class LocalProcessExecutor:
    """``MatchExecutor`` on local worker processes (see the module docstring)."""

    def __init__(self, concurrency: int, pin_cpus: bool) -> None:
        self.concurrency = concurrency
        self.pin_cpus = pin_cpus
        self._reports: Any = None
        self._pool: ProcessPoolExecutor | None = None
        self._futures: dict[Future[None], tuple[tuple[int, int], ...]] = {}
        self._open: set[tuple[int, int]] = set()  # submitted jobs without their JobDone yet
        self._workers = 0  # how many worker processes the pool has (once started)

    def submit(self, jobs: Sequence[MatchJob]) -> None:
        """Queue ``jobs``; the jobs of one match (its halves, next to each other in
        ``jobs``) go to one worker, which plays them in turn (``play_chain``). A single
        worker gets the whole batch as one task (``_play_matches``), so that each next
        match's first half can be launched while the current match's last half plays:
        with one worker the other CPUs are mostly idle during a match (a ping-pong
        between the referee and one bot at a time), and the launch costs no wall time
        there. Several workers take one match at a time, whichever is free first."""
        groups = _by_match(jobs)
        pool = self._started(len(groups))
        tasks = [tuple(groups)] if self._workers == 1 else [(group,) for group in groups]
        for task in tasks:
            keys = tuple(job.key for group in task for job in group)
            self._open.update(keys)
            self._futures[pool.submit(_play_matches, task)] = keys

    def next_event(self, timeout_s: float) -> JobEvent | None:
        try:
            event: JobEvent = self._reports.get(timeout=timeout_s)
        except queue.Empty:
            return self._dead_worker()
        if isinstance(event, JobDone):
            self._open.discard(event.key)
            self._forget_done(event.key)
        return event

    def cancel(self) -> None:
        """SIGKILL every worker, those that have not reported yet too, then end the pool
        (Ctrl-C, a stop: at once). Its manager thread is joined here, which takes
        milliseconds once the workers are dead: one left winding down races the
        interpreter's exit, whose ``concurrent.futures`` hook then writes to the pipe that
        thread is closing (a "Bad file descriptor" traceback as the server stops)."""
        if self._pool is not None:
            # The pool's own list (started, reported or not): a Process sends no signal
            # once it knows its worker has ended, whose pid may be someone else's by then.
            for worker in list((self._pool._processes or {}).values()):
                with contextlib.suppress(OSError):
                    worker.kill()
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._forget()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._forget()

    def _forget(self) -> None:
        self._pool = None
        self._futures.clear()
        self._open.clear()

    def _started(self, jobs: int) -> ProcessPoolExecutor:
        if self._pool is None:
            workers = self._workers = max(1, min(self.concurrency, jobs))
            tune_child_processes()  # the forkserver, and with it every worker, imports grpc
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload([__name__, POOL_PRELOAD])
            self._reports = context.Queue()
            placement = _Placement(context.Value("i", 0), usable_cpus(), workers, self.pin_cpus)
            self._pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=context,
                initializer=_init_worker,
                initargs=(self._reports, os.getpid(), placement),
            )
        return self._pool

    def _forget_done(self, key: tuple[int, int]) -> None:
        """Let go of the future of ``key``'s match once each of its jobs is done: a
        ladder submits for as long as it runs, and ``_dead_worker`` looks at every
        future kept, each time the queue is empty."""
        for future, keys in list(self._futures.items()):
            if key in keys and self._open.isdisjoint(keys):
                del self._futures[future]

    def _dead_worker(self) -> JobDone | None:
        """A job whose worker died without saying so (killed, out of memory): it failed."""
        for future, keys in self._futures.items():
            for key in keys:
                if key in self._open and future.done() and future.exception() is not None:
                    self._open.discard(key)
                    return JobDone(key[0], key[1], f"worker died: {future.exception()}")
        return None


def _by_match(jobs: Sequence[MatchJob]) -> list[tuple[MatchJob, ...]]:
    """``jobs`` in order, the neighbouring jobs of one match grouped together."""
    groups: list[list[MatchJob]] = []
    for job in jobs:
        if groups and groups[-1][0].match_id == job.match_id:
            groups[-1].append(job)
        else:
            groups.append([job])
    return [tuple(group) for group in groups]


# ------------------------------------------------------------------ worker side

_worker_queue: Any = None


@dataclass(frozen=True)
class _Placement:
    """What a worker needs to choose its CPUs: a shared counter numbers the workers."""

    counter: Any  # multiprocessing Value("i"): the next worker number
    cpus: tuple[int, ...]
    workers: int
    pin: bool


def _die_with(runner_pid: int) -> None:
    """SIGKILL this worker as soon as the runner is gone, however it went (kill -9 too).

    A worker's parent is the forkserver, not the runner, so PR_SET_PDEATHSIG
    cannot tie it to the runner; and the forkserver only leaves once every
    worker has (each holds its "alive" pipe). So a daemon thread waits on a
    pidfd of the runner (polls where pidfds are missing) and ends the worker;
    its bots then die with it (the sandbox watchdog), and the forkserver after.
    """

    def watch() -> None:
        try:
            pidfd = os.pidfd_open(runner_pid)
        except (AttributeError, OSError):
            while is_running(runner_pid):
                time.sleep(_RUNNER_POLL_S)
        else:
            select.select([pidfd], [], [])
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="runner-watch", daemon=True).start()


def _init_worker(reports: Any, parent_pid: int, placement: _Placement) -> None:
    """Die with the parent (kill -9 included), keep the report queue, take this worker's CPUs."""
    global _worker_queue
    leave_stop_signals_to_the_runner()  # the forkserver's preload did so too: set again here
    stopped_by_its_owner()  # cancel() SIGKILLs it: its bots' clean-up is no warning
    _worker_queue = reports
    with contextlib.suppress(OSError, AttributeError):  # dies with the forkserver too
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if not is_running(parent_pid):  # the runner died while this worker was starting
        os._exit(1)
    if placement.pin:
        with placement.counter.get_lock():
            number = placement.counter.value
            placement.counter.value += 1
        cpus = worker_cpus(placement.cpus, placement.workers, number)
        if cpus is not None and not pin_this_process(cpus):
            get_logger(worker=number).warning("cpu_pinning_refused", cpus=sorted(cpus))
    _die_with(parent_pid)  # after pinning: threads take the affinity they start with
    reports.put(WorkerStarted(os.getpid(), usable_cpus()))


def _play_matches(groups: tuple[tuple[MatchJob, ...], ...]) -> None:
    """Play matches (each its jobs, ``_by_match``) one after the other (``play_chain``: the
    next half launched while the current one plays where ``arena.referee.prestart`` says
    so for this worker's CPUs, read after pinning)."""
    play_chain(groups, _worker_queue.put)
