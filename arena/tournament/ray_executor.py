"""The Ray executor: match jobs as tasks on a Ray cluster (docs/DISTRIBUTED.md).

Imported only when a Ray address is given (``arena tournament run --ray``,
``arena serve --ray``, ``$KAHUNA_RAY_ADDRESS``): Ray is an optional extra.

- The submitted ``MatchJob`` of one match (its halves) are one Ray task that asks
  for one unit of the custom resource ``kahuna_sandbox`` (advertised only by
  nodes where ``arena sandbox-check`` passed: ``arena ray-worker``) and
  ``match_cpus`` CPUs, so that no match lands on a node that cannot sandbox.
  No more tasks are in Ray at once than the cluster has units (``_fill``): Ray
  does not move a task queued on a busy node to one that frees up.
- The task plays the halves in turn, the next half's bots started while the
  current one plays (``play_in_turn``, as the local executor does), on one of
  its node's slots, pinned to that slot's CPUs as a local worker is
  (``arena.tournament.node_slots``).
- The task is a streaming generator: it yields the jobs' events (typed
  messages of ``arena.tournament.executor``) as they happen, each finished
  game at once; the driver, the only writer of the store, stores them.
- Bot versions travel content-addressed (``arena.tournament.bot_bundles``):
  the driver puts each version's files into the object store once; a node
  unpacks them into its cache under the version hash, checking the hash
  before every use, and fetches the bundle only when its cache lacks it.
- Exactly once: Ray retries nothing (``max_retries=0``). When a task fails
  for a system reason (its node or worker died, its objects were lost), this
  executor submits the job again with only the game indices it has not
  reported yet (same seeds: same deals and seats), up to ``max_attempts``
  times; the job's ``JobDone`` comes after the last attempt. A game reported
  twice anyway (a resumed tournament) is dropped by the store's (match,
  index) key.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import os
import queue
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.exceptions import RayError, RayTaskError

from arena.logs import get_logger
from arena.referee import GameReport
from arena.referee.halves import play_in_turn
from arena.referee.remote import REMOTE_RUNTIME
from arena.referee.types import BotSpec
from arena.tournament.bot_bundles import cache_root, cached_bot, pack
from arena.tournament.cpu_placement import usable_cpus
from arena.tournament.executor import (
    GameFinished,
    JobDone,
    JobEvent,
    MatchJob,
    WorkerStarted,
)
from arena.tournament.live_feed import LiveSender
from arena.tournament.node_slots import NODE_CPUS, configured_slots, node_slot

SANDBOX_RESOURCE = "kahuna_sandbox"
DEFAULT_MATCH_CPUS = 1.0
DEFAULT_MAX_ATTEMPTS = 4
_SLOTS_TTL_S = 1.0  # how long a look at the cluster's slots is trusted


@dataclass(frozen=True, slots=True)
class MatchPlaced:
    """The first message of a task: where its job runs (the driver logs it; tests read it)."""

    match_id: int
    part: int
    node_ip: str
    node_id: str
    pid: int


@dataclass
class JobTiming:
    """When a job was submitted, handed to Ray, its task said where it runs, its first and
    last game arrived, it was done, and its task ended (the driver's monotonic clock)."""

    submitted: float
    launched: float | None = None  # its (last) task handed to Ray: a slot was free
    placed: float | None = None  # its task's MatchPlaced arrived: the task runs
    first_game: float | None = None
    last_game: float | None = None
    done: float | None = None
    ended: float | None = None  # its task's stream ended


@dataclass
class _Run:
    """The runs of one match in one task (its halves, played in turn with the next
    half's bots prestarted, as the local executor does)."""

    jobs: tuple[MatchJob, ...]  # as the runner submitted them
    generator: Any  # ray.ObjectRefGenerator of the current attempt (None: waiting)
    attempt: int = 1
    reported: set[int] = field(default_factory=set)  # game indices received
    done: set[int] = field(default_factory=set)  # parts whose JobDone was passed on

    @property
    def match_id(self) -> int:
        return self.jobs[0].match_id

    def left(self) -> list[tuple[MatchJob, list[int]]]:
        """The jobs not done yet, each with the indices still to play."""
        return [
            (job, [i for i in job.config.indices_to_play if i not in self.reported])
            for job in self.jobs
            if job.part not in self.done
        ]


class RayExecutor:
    """``MatchExecutor`` on a Ray cluster (see the module docstring)."""

    def __init__(
        self,
        address: str,
        *,
        match_cpus: float = DEFAULT_MATCH_CPUS,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    ) -> None:
        self.address = address
        self.match_cpus = match_cpus
        self.max_attempts = max_attempts
        self.log = get_logger(executor="ray")
        self.placements: list[MatchPlaced] = []
        self.timings: dict[tuple[int, int], JobTiming] = {}
        self.resubmitted = 0
        self._events: collections.deque[JobEvent] = collections.deque()
        self._runs: list[_Run] = []  # in Ray now
        self._waiting: collections.deque[_Run] = collections.deque()  # for a free slot
        self._bundles: dict[str, Any] = {}  # version -> ObjectRef of its bundle
        self._slots_read = (-_SLOTS_TTL_S, 1)  # (when, slots()) of the last look
        if not ray.is_initialized():
            ray.init(
                address=address, namespace="kahuna", log_to_driver=False,
                logging_level=logging.ERROR, configure_logging=False,
            )  # fmt: skip
        self.log.info("ray_connected", address=address)

    # ----------------------------------------------------------- interface

    def submit(self, jobs: Sequence[MatchJob]) -> None:
        """Queue ``jobs``, the runs of one match (neighbours in ``jobs``) in one task; at
        most as many tasks are in Ray at once as the cluster has slots (``kahuna_sandbox``
        units): a task Ray has queued on one node stays there even when another node
        frees up, so the rest wait here and go to whichever node is free first."""
        groups: list[list[MatchJob]] = []
        for job in jobs:
            self.timings[job.key] = JobTiming(time.monotonic())
            if REMOTE_RUNTIME in (job.first.runtime, job.second.runtime):
                self._finish(job, "a remote bot's match cannot be played on a Ray cluster")
            elif groups and groups[-1][0].match_id == job.match_id:
                groups[-1].append(job)
            else:
                groups.append([job])
        self._waiting.extend(_Run(tuple(group), None) for group in groups)
        self._fill()

    def next_event(self, timeout_s: float) -> JobEvent | None:
        deadline = time.monotonic() + max(0.0, timeout_s)
        while not self._events:
            self._fill()
            if not self._runs:
                return None
            left = max(0.0, deadline - time.monotonic())
            ready, _ = ray.wait([run.generator for run in self._runs], num_returns=1, timeout=left)
            if not ready:
                return None
            for run in [run for run in self._runs if any(run.generator is r for r in ready)]:
                self._advance(run)
        return self._events.popleft()

    def slots(self) -> int:
        """The cluster's ``kahuna_sandbox`` units now (nodes come and go); at least 1, so
        that a cluster whose workers have not joined yet waits for them."""
        now = time.monotonic()
        if now - self._slots_read[0] > _SLOTS_TTL_S:
            resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
            self._slots_read = (now, max(1, int(resources.get(SANDBOX_RESOURCE, 0))))
        return self._slots_read[1]

    def _fill(self) -> None:
        """Hand waiting matches to Ray while it has fewer than ``slots()`` of ours."""
        if not self._waiting:
            return
        free = self.slots() - len(self._runs)
        while free > 0 and self._waiting:
            run = self._waiting.popleft()
            run.generator = self._launch(run)
            self._note(run, "launched")
            self._runs.append(run)
            free -= 1

    def cancel(self) -> None:
        """Kill every task at once (their worker processes: the sandbox watchdogs kill the bots)."""
        for run in self._runs:
            try:
                ray.cancel(run.generator, force=True)
            except RayError as error:
                self.log.warning("ray_cancel_failed", match_id=run.match_id, error=str(error))
        self._runs.clear()
        self._waiting.clear()
        self._events.clear()

    def close(self) -> None:
        if self._runs or self._waiting:
            self.cancel()

    # -------------------------------------------------------------- driver

    def _bundle(self, spec: BotSpec) -> Any:
        """The object-store copy of ``spec``'s files, put once per version."""
        if spec.version not in self._bundles:
            self._bundles[spec.version] = ray.put(pack(spec.directory))
        return self._bundles[spec.version]

    def _launch(self, run: _Run) -> Any:
        """A task for ``run``'s jobs not done yet, each playing only its indices left."""
        jobs = [dataclasses.replace(job, config=dataclasses.replace(job.config,
                                                                    game_indices=tuple(left)))
                for job, left in run.left()]  # fmt: skip
        first = jobs[0]
        options: dict[str, Any] = {
            "num_cpus": self.match_cpus,
            "resources": {SANDBOX_RESOURCE: 1},
            "max_retries": 0,
            "name": f"kahuna-match-{first.match_id}",
        }
        # The bundles go nested in lists: Ray then leaves them in the object store
        # until a node whose cache lacks the version asks for them.
        return _play_task.options(**options).remote(
            tuple(jobs), [self._bundle(first.first)], [self._bundle(first.second)]
        )

    def _advance(self, run: _Run) -> None:
        try:
            ref = next(run.generator)
        except StopIteration:  # the task is over: each of its jobs said it was done
            self._note(run, "ended")
            self._runs.remove(run)
            for job, _left in run.left():  # cannot happen but for a bug
                self._finish(job, "the match's task ended without saying it was done")
            return
        try:
            event = ray.get(ref)
        except RayTaskError as error:  # the task itself raised (it reports its own errors)
            self._runs.remove(run)
            for job, _left in run.left():
                self._finish(job, f"{type(error).__name__}: {error}")
            return
        except RayError as error:  # its node or worker died, its objects were lost
            self._retry(run, error)
            return
        if isinstance(event, MatchPlaced):
            self._note(run, "placed")
            self.placements.append(event)
            self.log.info("match_placed", match_id=event.match_id, part=event.part,
                          node=event.node_ip, attempt=run.attempt)  # fmt: skip
        elif isinstance(event, GameFinished):
            run.reported.add(event.report.index)
            part = next((j.key for j in run.jobs if event.report.index in
                         j.config.indices_to_play), run.jobs[0].key)  # fmt: skip
            timing = self.timings[part]
            timing.last_game = time.monotonic()
            timing.first_game = timing.first_game or timing.last_game
            self._events.append(event)
        elif isinstance(event, JobDone):
            if event.part not in run.done:  # exactly one JobDone per job
                run.done.add(event.part)
                job = next(j for j in run.jobs if j.part == event.part)
                self._finish(job, event.error)
        else:
            self._events.append(event)

    def _note(self, run: _Run, moment: str) -> None:
        """Now is ``moment`` (a ``JobTiming`` field) of each of ``run``'s jobs."""
        now = time.monotonic()
        for job in run.jobs:
            if job.key in self.timings:
                setattr(self.timings[job.key], moment, now)

    def _retry(self, run: _Run, error: BaseException) -> None:
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        self._runs.remove(run)
        for job, left in run.left():
            if not left:  # every game of it arrived: only its JobDone was lost
                run.done.add(job.part)
                self._finish(job, None)
            elif run.attempt >= self.max_attempts:
                run.done.add(job.part)
                self._finish(job, f"lost {run.attempt} times, last: {reason}")
        if not run.left():
            return
        run.attempt += 1
        self.resubmitted += 1
        self.log.warning(
            "match_resubmitted", match_id=run.match_id, attempt=run.attempt, reason=reason,
            games={job.part: left for job, left in run.left()},
        )  # fmt: skip
        self._waiting.appendleft(run)  # first in line for the next free slot
        self._fill()

    def _finish(self, job: MatchJob, error: str | None) -> None:
        timing = self.timings.get(job.key)
        if timing is not None:
            timing.done = time.monotonic()
        self._events.append(JobDone(job.match_id, job.part, error))


# ---------------------------------------------------------------- node side


def _local_spec(spec: BotSpec, bundle: Any) -> BotSpec:
    """``spec`` with its files from this node's cache (filled from ``bundle`` if needed)."""
    directory = cached_bot(spec.version, lambda: ray.get(bundle))
    return dataclasses.replace(spec, directory=directory)


def _play(
    jobs: tuple[MatchJob, ...], first_bundle: list[Any], second_bundle: list[Any]
) -> Iterator[object]:
    """The runs of one match in turn (``play_in_turn``: each next run's bots prestarted),
    yielding their events as they come; one JobDone per run."""
    context = ray.get_runtime_context()
    node_ip: str = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
    job = jobs[0]
    yield MatchPlaced(job.match_id, job.part, node_ip, context.get_node_id(), os.getpid())
    # on one of the node's slots, pinned to its CPUs as a local worker is (node_slots)
    with node_slot(cache_root() / ".slots", configured_slots(), NODE_CPUS):
        yield WorkerStarted(os.getpid(), usable_cpus())
        yield from _played(jobs, first_bundle, second_bundle)


def _played(
    jobs: tuple[MatchJob, ...], first_bundle: list[Any], second_bundle: list[Any]
) -> Iterator[object]:
    """``_play`` once its slot is held: the bots from the node's cache, the runs played in
    a thread, their events yielded as they come."""
    job = jobs[0]
    events: queue.SimpleQueue[object] = queue.SimpleQueue()
    sender = LiveSender(job.match_id, events.put) if job.live else None
    finished = object()

    def on_game(report: GameReport) -> None:
        if sender is not None:
            sender.flush()
        events.put(GameFinished(job.match_id, report))

    done: set[int] = set()

    def on_done(number: int, _report: object, failure: BaseException | None) -> None:
        if sender is not None:
            sender.flush()
        done.add(number)
        error = None if failure is None else f"{type(failure).__name__}: {failure}"
        events.put(JobDone(job.match_id, jobs[number].part, error))

    def play() -> None:
        try:
            first = _local_spec(job.first, first_bundle[0])  # each a [ObjectRef]
            second = _local_spec(job.second, second_bundle[0])
            play_in_turn([j.config for j in jobs], first, second, on_done=on_done,
                         on_game=on_game, on_event=None if sender is None else sender.event)
        except Exception as failure:  # the bundles, say: every run not over fails
            for number in sorted(set(range(len(jobs))) - done):
                on_done(number, None, failure)
        finally:
            if sender is not None:
                sender.close()
            events.put(finished)

    threading.Thread(target=play, name=f"match-{job.match_id}", daemon=True).start()
    while (event := events.get()) is not finished:
        yield event


_play_task = ray.remote(_play)
