"""A Ray node's match slots, each on its own CPUs, as the local executor's workers are.

The local executor pins each of its workers (and so the worker's bots) to its
own share of the CPUs (``arena.tournament.execution.cpu_placement``): a referee and its
bots that the scheduler moves between cores pay a cross-CPU wake-up at every
hand-off, and two matches on two cores ran at about 60% of twice one match's
rate unpinned. A Ray task gets CPUs *counted* (``num_cpus``) but not chosen:
Ray pins nothing. So a match task on a node takes one of the node's slots and
pins itself to that slot's CPUs:

- the node's slots are its ``kahuna_sandbox`` units (``arena ray-worker
  --slots``, which exports them to the node's Ray processes as
  ``$KAHUNA_RAY_SLOTS``); a node started without it, or with it 0, pins nothing;
- slot ``k`` runs on group ``k mod groups`` of the CPUs the node's Ray
  processes may use (``cpu_placement.worker_cpus``, as local worker ``k``);
- a task takes the first free slot by an exclusive ``flock`` on a lock file
  per slot in the node's bot cache directory: released when the task ends or
  its worker process dies, so a slot is never held by a dead task;
- every thread of the task's worker process is pinned (Ray's own threads were
  started before the task ran, unlike the local worker's) and the bots the
  task launches inherit the affinity; when the task ends the process gets the
  node's CPUs back (Ray reuses it for later tasks, maybe in another slot).

Ray never runs more match tasks on a node than its ``kahuna_sandbox`` units, so
a task finds a free slot; if none is free (a node started with more units than
``$KAHUNA_RAY_SLOTS``) it runs unpinned rather than wait.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from arena.tournament.execution.cpu_placement import usable_cpus, worker_cpus

SLOTS_ENV = "KAHUNA_RAY_SLOTS"


@dataclass(frozen=True)
class Slot:
    """The slot a task holds: its number and CPUs (None: this task is not pinned)."""

    number: int | None
    cpus: frozenset[int] | None


def configured_slots() -> int | None:
    """``$KAHUNA_RAY_SLOTS`` as a number of slots, None when unset or not a positive number."""
    value = os.environ.get(SLOTS_ENV, "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def pin_all_threads(cpus: frozenset[int]) -> None:
    """Restrict every thread of this process (and what they start later) to ``cpus``."""
    for task in os.listdir("/proc/self/task"):
        with contextlib.suppress(ProcessLookupError):  # a thread that just ended
            os.sched_setaffinity(int(task), cpus)


def _free_slot(directory: Path, slots: int) -> tuple[int, TextIO] | None:
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    for number in range(slots):
        # never through a link: the lock is opened for writing (O_CREAT), as root on a node
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        lock = os.fdopen(os.open(directory / f"{number}.lock", flags, 0o600), "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            continue
        return number, lock
    return None


@contextlib.contextmanager
def node_slot(directory: Path, slots: int | None, node_cpus: tuple[int, ...]) -> Iterator[Slot]:
    """Hold a free slot of this node (lock files in ``directory``) and run pinned to its
    CPUs, the node's CPUs ``node_cpus`` split into ``slots`` groups; back on
    ``node_cpus`` afterwards. Unpinned when ``slots`` is None or the CPUs make one group."""
    taken = None if slots is None else _free_slot(directory, slots)
    if taken is None:
        yield Slot(None, None)
        return
    number, lock = taken
    try:
        cpus = worker_cpus(node_cpus, slots or 1, number)
        if cpus is not None:
            pin_all_threads(cpus)
        try:
            yield Slot(number, cpus)
        finally:
            if cpus is not None:
                pin_all_threads(frozenset(node_cpus))
    finally:
        lock.close()  # releases the flock


NODE_CPUS = usable_cpus()
"""The CPUs this node's Ray processes may use: read when a worker process first imports
this module, before any task of it pinned it."""
