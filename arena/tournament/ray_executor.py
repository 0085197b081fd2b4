"""The Ray executor: match jobs as tasks on a Ray cluster (docs/DISTRIBUTED.md).

Imported only when a Ray address is given (``arena tournament run --ray``,
``arena serve --ray``, ``$KAHUNA_RAY_ADDRESS``): Ray is an optional extra.

- Each submitted ``MatchJob`` (one half of a match) is one Ray task that asks
  for one unit of the custom resource ``kahuna_sandbox`` (advertised only by
  nodes where ``arena sandbox-check`` passed: ``arena ray-worker``) and
  ``match_cpus`` CPUs, so that no match lands on a node that cannot sandbox.
  No more tasks are in Ray at once than the cluster has units (``_fill``): Ray
  does not move a task queued on a busy node to one that frees up.
- The task is a streaming generator: it yields the job's events (typed
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
from arena.referee import GameReport, run_match
from arena.referee.remote import REMOTE_RUNTIME
from arena.referee.types import BotSpec
from arena.tournament.bot_bundles import cached_bot, pack
from arena.tournament.cpu_placement import usable_cpus
from arena.tournament.executor import (
    GameFinished,
    JobDone,
    JobEvent,
    MatchJob,
    WorkerStarted,
)
from arena.tournament.live_feed import LiveSender

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
    """When a job was submitted, its first and last game arrived and it was done (monotonic)."""

    submitted: float
    first_game: float | None = None
    last_game: float | None = None
    done: float | None = None


@dataclass
class _Run:
    job: MatchJob  # as the runner submitted it
    generator: Any  # ray.ObjectRefGenerator of the current attempt (None: waiting)
    attempt: int = 1
    reported: set[int] = field(default_factory=set)


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
        """Queue ``jobs``; at most as many are in Ray at once as the cluster has slots
        (``kahuna_sandbox`` units): a task Ray has queued on one node stays there even
        when another node frees up, so the rest wait here and go to whichever node is
        free when a slot is."""
        for job in jobs:
            self.timings[job.key] = JobTiming(time.monotonic())
            if REMOTE_RUNTIME in (job.first.runtime, job.second.runtime):
                self._finish(job, "a remote bot's match cannot be played on a Ray cluster")
                continue
            self._waiting.append(_Run(job, None))
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
        """Hand waiting jobs to Ray while it has fewer than ``slots()`` of ours."""
        if not self._waiting:
            return
        free = self.slots() - len(self._runs)
        while free > 0 and self._waiting:
            run = self._waiting.popleft()
            left = [i for i in run.job.config.indices_to_play if i not in run.reported]
            run.generator = self._launch(run.job, left)
            self._runs.append(run)
            free -= 1

    def cancel(self) -> None:
        """Kill every task at once (their worker processes: the sandbox watchdogs kill the bots)."""
        for run in self._runs:
            try:
                ray.cancel(run.generator, force=True)
            except RayError as error:
                self.log.warning("ray_cancel_failed", match_id=run.job.match_id, error=str(error))
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

    def _launch(self, job: MatchJob, indices: Sequence[int]) -> Any:
        config = dataclasses.replace(job.config, game_indices=tuple(indices))
        options: dict[str, Any] = {
            "num_cpus": self.match_cpus,
            "resources": {SANDBOX_RESOURCE: 1},
            "max_retries": 0,
            "name": f"kahuna-match-{job.match_id}-{job.part}",
        }
        # The bundles go nested in lists: Ray then leaves them in the object store
        # until a node whose cache lacks the version asks for them.
        return _play_task.options(**options).remote(
            dataclasses.replace(job, config=config),
            [self._bundle(job.first)],
            [self._bundle(job.second)],
        )

    def _advance(self, run: _Run) -> None:
        try:
            ref = next(run.generator)
        except StopIteration:  # ended without its JobDone: cannot happen but for a bug
            self._runs.remove(run)
            self._finish(run.job, "the match's task ended without saying it was done")
            return
        try:
            event = ray.get(ref)
        except RayTaskError as error:  # the task itself raised (it reports its own errors)
            self._runs.remove(run)
            self._finish(run.job, f"{type(error).__name__}: {error}")
            return
        except RayError as error:  # its node or worker died, its objects were lost
            self._retry(run, error)
            return
        if isinstance(event, MatchPlaced):
            self.placements.append(event)
            self.log.info("match_placed", match_id=event.match_id, part=event.part,
                          node=event.node_ip, attempt=run.attempt)  # fmt: skip
        elif isinstance(event, GameFinished):
            run.reported.add(event.report.index)
            timing = self.timings[run.job.key]
            timing.last_game = time.monotonic()
            timing.first_game = timing.first_game or timing.last_game
            self._events.append(event)
        elif isinstance(event, JobDone):
            self._runs.remove(run)
            self._finish(run.job, event.error)
        else:
            self._events.append(event)

    def _retry(self, run: _Run, error: BaseException) -> None:
        left = [i for i in run.job.config.indices_to_play if i not in run.reported]
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        if not left:
            self._runs.remove(run)
            self._finish(run.job, None)
        elif run.attempt >= self.max_attempts:
            self._runs.remove(run)
            self._finish(run.job, f"lost {run.attempt} times, last: {reason}")
        else:
            run.attempt += 1
            self.resubmitted += 1
            self.log.warning(
                "match_resubmitted", match_id=run.job.match_id, part=run.job.part,
                games=left, attempt=run.attempt, reason=reason,
            )  # fmt: skip
            self._runs.remove(run)
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
    job: MatchJob, first_bundle: list[Any], second_bundle: list[Any]
) -> Iterator[object]:
    context = ray.get_runtime_context()
    node_ip: str = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
    yield MatchPlaced(job.match_id, job.part, node_ip, context.get_node_id(), os.getpid())
    yield WorkerStarted(os.getpid(), usable_cpus())
    events: queue.SimpleQueue[object] = queue.SimpleQueue()
    sender = LiveSender(job.match_id, events.put) if job.live else None

    def on_game(report: GameReport) -> None:
        if sender is not None:
            sender.flush()
        events.put(GameFinished(job.match_id, report))

    def play() -> None:
        error: str | None = None
        try:
            first = _local_spec(job.first, first_bundle[0])  # each a [ObjectRef]
            second = _local_spec(job.second, second_bundle[0])
            run_match(job.config, first, second, on_game=on_game,
                      on_event=None if sender is None else sender.event)  # fmt: skip
        except Exception as failure:
            error = f"{type(failure).__name__}: {failure}"
        finally:
            if sender is not None:
                sender.close()
        events.put(JobDone(job.match_id, job.part, error))

    threading.Thread(target=play, name=f"match-{job.match_id}", daemon=True).start()
    while True:
        event = events.get()
        yield event
        if isinstance(event, JobDone):
            return


_play_task = ray.remote(_play)
