"""The Ray executor: match jobs on a Ray cluster's slot players (docs/design/DISTRIBUTED.md).

Imported only when a Ray address is given (``arena tournament run --ray``,
``arena serve --ray``, ``$KAHUNA_RAY_ADDRESS``): Ray is an optional extra.

- A task (a call to a slot player, ``arena.tournament.execution.slot_players``:
  a long-lived actor per unit of the custom resource ``kahuna_sandbox``,
  advertised only by nodes where ``arena sandbox-check`` passed: ``arena
  ray-worker``) plays a chain of matches (each its halves: the submitted
  ``MatchJob`` of one match) one after the other, so that no match lands on
  a node that cannot sandbox and no fresh driver waits for Ray to start a
  worker process. Each player has at most one of our tasks at a time
  (``_fill``); the rest wait here for the first player that frees up.
- A chain is an even share of the matches waiting over the cluster's slots,
  at most ``max_chain`` (``chain_length``: guided self-scheduling, the chains
  shorten as the queue drains, so that the slots finish together), so a
  match's launch mostly overlaps the match before it: the task plays its
  matches as the local executor's single worker plays its batch
  (``arena.tournament.execution.match_chain``): each match's halves in turn, the next
  half's bots started while the current one plays, and each next match's
  first half started while the current match's last half plays, where
  ``arena.referee.prestart`` says so (not on a one-CPU slot); the driver
  waits for a free slot, Ray places the task and the task takes its slot once
  per chain, not once per match.
- The task plays on one of its node's slots, pinned to that slot's CPUs as a
  local worker is (``arena.tournament.execution.node_slots``).
- The task is a streaming generator: it yields the jobs' events (typed
  messages of ``arena.tournament.execution.executor``) as they happen, each finished
  game at once, what comes within 10 ms together (one message to the driver
  instead of several); the driver, the only writer of the store, stores them.
- Bot versions travel content-addressed (``arena.tournament.execution.bot_bundles``):
  the driver puts each version's files into the object store once; a node
  unpacks them into its cache under the version hash, checking the hash
  before every use, and fetches the bundle only when its cache lacks it.
- A node is trusted with its match only (``arena.tournament.execution.node_trust``): its task
  carries the seeds of its games' deals, never the secret, and every game it
  streams is checked before the runner sees it. A node that sends a game that
  fails (or one of a match it was not given, or says a half is done with games
  missing) is named (``GameRejected``), gets no more tasks (its players are
  no longer used or counted) and its task is killed (its player); its
  matches' unstored games are played again elsewhere, as for a lost node.
- A task's worker dies with its raylet (``_watch_raylet``), so that its matches
  stop at once.
- Exactly once: Ray retries nothing (``max_task_retries=0``). When a task fails
  for a system reason (its node or worker died, its objects were lost), this
  executor submits each of its matches again with only the game indices it
  has not reported yet (same seeds: same deals and seats; a match still
  queued in the chain: all of them), up to ``max_attempts`` times; a job's
  ``JobDone`` comes after its last attempt. A game reported twice anyway (a
  resumed tournament) is dropped by the store's (match, index) key.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import dataclasses
import logging
import os
import queue
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import RayError, RayTaskError

from arena.logs import get_logger
from arena.referee.remote import REMOTE_RUNTIME
from arena.referee.types import BotSpec
from arena.store.rejected import MAX_PROBLEM_CHARS
from arena.tournament.execution.bot_bundles import cache_root, cached_bot, pack
from arena.tournament.execution.cpu_placement import usable_cpus
from arena.tournament.execution.executor import (
    GameFinished,
    GameRejected,
    JobDone,
    JobEvent,
    LiveBatch,
    MatchJob,
    WorkerStarted,
)
from arena.tournament.execution.match_chain import chain_length, play_chain
from arena.tournament.execution.node_slots import NODE_CPUS, configured_slots, node_slot
from arena.tournament.execution.node_trust import ForgedGame, check_game, deal_seeds, sealed
from arena.tournament.execution.slot_players import SlotPlayers

SANDBOX_RESOURCE = "kahuna_sandbox"
DEFAULT_MATCH_CPUS = 1.0
DEFAULT_MAX_ATTEMPTS = 4
DEFAULT_MAX_CHAIN = 4  # matches a task plays at most (the next waits on its node meanwhile)
_SLOTS_TTL_S = 1.0  # how long a look at the cluster's slots is trusted
_GATHER_S = 0.01  # how long a task gathers events after the first before it yields them


@dataclass(frozen=True, slots=True)
class MatchPlaced:
    """The first message of a task: where its job runs (the driver logs it; tests read it)."""

    match_id: int
    half: int
    node_ip: str
    node_id: str
    pid: int
    prestarted: bool = False  # its first half launched while the match before it played
    chain: int = 0  # its place in its task's chain of matches (0: the task's first)


@dataclass
class JobTiming:
    """When a job was submitted, handed to Ray (its task), its turn came on a node (its
    ``MatchPlaced``), its first and last game arrived, it was done, and its task ended
    (the driver's monotonic clock)."""

    submitted: float
    launched: float | None = None  # its (last) task handed to Ray: a slot was free
    placed: float | None = None  # its MatchPlaced arrived: its turn in its task came
    first_game: float | None = None
    last_game: float | None = None
    done: float | None = None
    ended: float | None = None  # its task's stream ended (the last match of its chain only)


@dataclass
class _Match:
    """The jobs of one match (its halves, played in turn with the next half's bots
    prestarted, as the local executor does), in one task at a time."""

    jobs: tuple[MatchJob, ...]  # as the runner submitted them
    seeds: dict[int, int] = field(default_factory=dict)  # deal index -> seed (driver only)
    attempt: int = 1
    reported: set[int] = field(default_factory=set)  # game indices received
    done: set[int] = field(default_factory=set)  # halves whose JobDone was passed on

    @property
    def match_id(self) -> int:
        return self.jobs[0].match_id

    def left(self) -> list[tuple[MatchJob, list[int]]]:
        """The jobs not done yet, each with the indices still to play."""
        return [
            (job, [i for i in job.config.indices_to_play if i not in self.reported])
            for job in self.jobs
            if job.half not in self.done
        ]


@dataclass
class _Task:
    """One Ray task: the matches it plays in turn (a chain) and its stream of events."""

    matches: list[_Match]
    generator: Any  # ray.ObjectRefGenerator
    node: tuple[str, str] | None = None  # (ip, id) of its node, once its MatchPlaced came
    player: str = ""  # the slot player (``slot_players``) that plays it

    def match_of(self, match_id: int) -> _Match | None:
        return next((match for match in self.matches if match.match_id == match_id), None)


class RayExecutor:
    """``MatchExecutor`` on a Ray cluster (see the module docstring)."""

    def __init__(
        self,
        address: str,
        *,
        match_cpus: float = DEFAULT_MATCH_CPUS,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        max_chain: int = DEFAULT_MAX_CHAIN,
        prestart: bool = True,
    ) -> None:
        self.address = address
        self.match_cpus = match_cpus
        self.max_attempts = max_attempts
        self.max_chain = max(1, max_chain)
        self.prestart = prestart  # False: no bots launched while a half plays (an A/B test)
        self.log = get_logger(executor="ray")
        self.placements: list[MatchPlaced] = []
        self.timings: dict[tuple[int, int], JobTiming] = {}
        self.resubmitted = 0
        self.tasks_launched = 0
        self._events: collections.deque[JobEvent] = collections.deque()
        self._tasks: list[_Task] = []  # in Ray now
        self._waiting: collections.deque[_Match] = collections.deque()  # for a free slot
        self._bundles: dict[str, Any] = {}  # version -> ObjectRef of its bundle
        self._slots_read = (-_SLOTS_TTL_S, 1)  # (when, slots()) of the last look
        self.distrusted: dict[str, str] = {}  # node id -> ip: nodes that sent a forged game
        if not ray.is_initialized():
            ray.init(
                address=address, namespace="kahuna", log_to_driver=False,
                logging_level=logging.ERROR, configure_logging=False,
            )  # fmt: skip
        self._players = SlotPlayers(match_cpus)
        self.log.info("ray_connected", address=address)

    # ----------------------------------------------------------- interface

    def submit(self, jobs: Sequence[MatchJob]) -> None:
        """Queue ``jobs``, the halves of one match (neighbours in ``jobs``) together; at
        most as many tasks are in Ray at once as the cluster has slots (``kahuna_sandbox``
        units): a task Ray has queued on one node stays there even when another node
        frees up, so the rest wait here and go to whichever node is free first, in
        chains (``chain_length``)."""
        groups: list[list[MatchJob]] = []
        for job in jobs:
            self.timings[job.key] = JobTiming(time.monotonic())
            if REMOTE_RUNTIME in (job.first.runtime, job.second.runtime):
                self._finish(job, "a remote bot's match cannot be played on a Ray cluster")
            elif groups and groups[-1][0].match_id == job.match_id:
                groups[-1].append(job)
            else:
                groups.append([job])
        for group in groups:  # the seeds of the match's deals, derived here once
            seeds: dict[int, int] = {}
            for job in group:
                seeds.update(deal_seeds(job.config))
            self._waiting.append(_Match(tuple(group), seeds))
        self._fill()

    def next_event(self, timeout_s: float) -> JobEvent | None:
        deadline = time.monotonic() + max(0.0, timeout_s)
        while not self._events:
            self._fill()
            if not self._tasks:
                return None
            left = max(0.0, deadline - time.monotonic())
            ready, _ = ray.wait([task.generator for task in self._tasks], num_returns=1,
                                timeout=left)  # fmt: skip
            if not ready:
                return None
            for task in [task for task in self._tasks if any(task.generator is r for r in ready)]:
                self._advance(task)
        return self._events.popleft()

    def slots(self) -> int:
        """The cluster's ``kahuna_sandbox`` units now (nodes come and go); at least 1, so
        that a cluster whose workers have not joined yet waits for them."""
        now = time.monotonic()
        if now - self._slots_read[0] > _SLOTS_TTL_S:  # distrusted nodes' are not ours
            self._slots_read = (now, max(1, self._players.refresh(self.distrusted)))
        return self._slots_read[1]

    def _fill(self) -> None:
        """Hand waiting matches to Ray, in chains, while it has fewer than ``slots()`` of
        our tasks."""
        if not self._waiting:
            return
        slots = self.slots()
        free = slots - len(self._tasks)
        while free > 0 and self._waiting:
            player = self._players.pick({task.player for task in self._tasks}, self.distrusted)
            if player is None:
                break
            length = chain_length(len(self._waiting), slots, self.max_chain)
            matches = [self._waiting.popleft() for _ in range(min(length, len(self._waiting)))]
            task = _Task(matches, self._launch(matches, player), player=player)
            for match in matches:
                self._note(match, "launched")
            self._tasks.append(task)
            self.tasks_launched += 1
            free -= 1

    def cancel(self) -> None:
        """Kill every task at once (their worker processes: the sandbox watchdogs kill the bots)."""
        for task in self._tasks:
            try:
                self._players.stop(task.player)
            except RayError as error:
                matches = [match.match_id for match in task.matches]
                self.log.warning("ray_cancel_failed", matches=matches, error=str(error))
        self._tasks.clear()
        self._waiting.clear()
        self._events.clear()

    def close(self) -> None:
        # A chain whose matches are all done is only closing its bots: its player ends it
        # alone and stays warm; a player is killed only to stop matches still playing.
        self._tasks = [task for task in self._tasks if any(match.left() for match in task.matches)]
        if self._tasks or self._waiting:
            self.cancel()

    def leave_cluster(self) -> None:
        """Leave the cluster (``ray.shutdown``): for a process done with Ray, such as
        `arena tournament run`; Ray's own leaving at exit takes about a second longer.
        Not for `arena serve`, whose tournaments share one connection."""
        self.close()
        if ray.is_initialized():
            ray.shutdown()

    # -------------------------------------------------------------- driver

    def _bundle(self, spec: BotSpec) -> Any:
        """The object-store copy of ``spec``'s files, put once per version."""
        if spec.version not in self._bundles:
            self._bundles[spec.version] = ray.put(pack(spec.directory))
        return self._bundles[spec.version]

    def _launch(self, matches: list[_Match], player: str) -> Any:
        """``matches`` handed to slot player ``player``, each with its jobs not done yet
        playing only their indices left."""
        groups = tuple(tuple(sealed(job, match.seeds, tuple(left)) for job, left in match.left())
                       for match in matches)  # fmt: skip
        # The bundles go nested in a dict: Ray then leaves them in the object store
        # until a node whose cache lacks the version asks for them.
        bundles = {spec.version: self._bundle(spec) for group in groups
                   for spec in (group[0].first, group[0].second)}  # fmt: skip
        return self._players.play(player, groups, bundles, self.prestart)

    def _advance(self, task: _Task) -> None:
        try:
            ref = next(task.generator)
        except StopIteration:  # the task is over: each of its jobs said it was done
            self._tasks.remove(task)
            self._note(task.matches[-1], "ended")
            for match in task.matches:
                for job, _left in match.left():  # cannot happen but for a bug
                    self._finish(job, "the match's task ended without saying it was done")
            return
        try:
            events: tuple[object, ...] = ray.get(ref)
        except RayTaskError as error:  # the task itself raised (it reports its own errors)
            self._tasks.remove(task)
            for match in task.matches:
                for job, _left in match.left():
                    self._finish(job, f"{type(error).__name__}: {error}")
            return
        except RayError as error:  # its node or worker died, its objects were lost
            self._tasks.remove(task)
            self._players.lost(task.player)
            for match in reversed(task.matches):  # back in line in their order
                self._retry(match, error)
            self._fill()
            return
        for event in events:
            if not self._handle(task, event):
                return

    def _handle(self, task: _Task, event: object) -> bool:
        """One event of ``task``'s stream; False when it was a forged game (the task is
        then gone: nothing more of it is read)."""
        owner = task.match_of(getattr(event, "match_id", -1))
        if isinstance(event, MatchPlaced):
            task.node = (event.node_ip, event.node_id)
            if owner is not None:
                self._note(owner, "placed")
            self.placements.append(event)
            self.log.info("match_placed", match_id=event.match_id, half=event.half,
                          node=event.node_ip, chain=event.chain, prestarted=event.prestarted,
                          attempt=None if owner is None else owner.attempt)  # fmt: skip
        elif isinstance(event, (GameFinished, JobDone)) and owner is None:
            self._reject(task, task.matches[0],
                         getattr(getattr(event, "report", None), "index", -1),
                         f"it sent a game of match {event.match_id!r}, which it was not given")
            return False
        elif isinstance(event, GameFinished) and owner is not None:
            index = getattr(event.report, "index", None)
            try:
                job = next((j for j in owner.jobs if index in j.config.indices_to_play), None)
                if job is None:
                    raise ForgedGame(f"game index {index!r} is not one of this match's")
                if index in owner.reported:
                    raise ForgedGame(f"game {index} reported twice")
                check_game(job, owner.seeds, event.report)
            except ForgedGame as forged:
                self._reject(task, owner, index, str(forged))
                return False
            except Exception as failure:  # a report no check foresaw is refused the same
                self._reject(task, owner, index, f"unreadable report: {failure!r}")
                return False
            owner.reported.add(event.report.index)
            timing = self.timings[job.key]
            timing.last_game = time.monotonic()
            timing.first_game = timing.first_game or timing.last_game
            self._events.append(event)
        elif isinstance(event, JobDone) and owner is not None:
            done = next((j for j in owner.jobs if j.half == event.half), None)
            missing = [] if done is None else [
                i for i in done.config.indices_to_play if i not in owner.reported]
            if done is None or (event.error is None and missing):  # games withheld
                self._reject(task, owner, missing[0] if missing else -1,
                             f"its half {event.half} said it was done without games {missing}")
                return False
            if event.half not in owner.done:  # exactly one JobDone per job
                owner.done.add(event.half)
                self._finish(done, event.error)
        elif isinstance(event, WorkerStarted) or (
            isinstance(event, LiveBatch) and owner is not None
        ):  # information only (a node's live view is not checked)
            self._events.append(event)
        return True  # anything else (a seat offer: no remote bot plays on Ray) is dropped

    def _reject(self, task: _Task, match: _Match, index: object, problem: str) -> None:
        """A game of ``match`` failed the driver's check: it is not stored, the node that
        sent it gets no more matches, its task is killed and each of its matches is
        played again (the games not stored yet) on other nodes."""
        ip, node_id = task.node or ("unknown", "unknown")
        problem = problem[:MAX_PROBLEM_CHARS]  # the node's own text may be in it
        self.log.error("game_rejected_from_node", match_id=match.match_id, game=index,
                       node_ip=ip, node_id=node_id, problem=problem)  # fmt: skip
        if node_id != "unknown":
            self.distrusted[node_id] = ip
            self._slots_read = (-_SLOTS_TTL_S, 1)
        shown = -1  # what the node sent may be no game index at all
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < 2**31:
            shown = index
        self._events.append(GameRejected(match.match_id, shown, ip, node_id, problem))
        with contextlib.suppress(RayError):
            self._players.stop(task.player)
        self._tasks.remove(task)
        for lost in reversed(task.matches):
            self._retry(lost, ForgedGame(f"node {ip} sent a forged game"))
        self._fill()

    def _note(self, match: _Match, moment: str) -> None:
        """Now is ``moment`` (a ``JobTiming`` field) of each of ``match``'s jobs."""
        now = time.monotonic()
        for job in match.jobs:
            if job.key in self.timings:
                setattr(self.timings[job.key], moment, now)

    def _retry(self, match: _Match, error: BaseException) -> None:
        """Put ``match`` back first in line with its games not reported yet (its task was
        lost), unless it has had ``max_attempts``."""
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        for job, left in match.left():
            if not left:  # every game of it arrived: only its JobDone was lost
                match.done.add(job.half)
                self._finish(job, None)
            elif match.attempt >= self.max_attempts:
                match.done.add(job.half)
                self._finish(job, f"lost {match.attempt} times, last: {reason}")
        if not match.left():
            return
        match.attempt += 1
        self.resubmitted += 1
        self.log.warning(
            "match_resubmitted", match_id=match.match_id, attempt=match.attempt, reason=reason,
            games={job.half: left for job, left in match.left()},
        )  # fmt: skip
        self._waiting.appendleft(match)  # first in line for the next free slot

    def _finish(self, job: MatchJob, error: str | None) -> None:
        timing = self.timings.get(job.key)
        if timing is not None:
            timing.done = time.monotonic()
        self._events.append(JobDone(job.match_id, job.half, error))


# ---------------------------------------------------------------- node side


def _local_spec(spec: BotSpec, bundle: Any) -> BotSpec:
    """``spec`` with its files from this node's cache (filled from ``bundle`` if needed)."""
    directory = cached_bot(spec.version, lambda: ray.get(bundle))
    return dataclasses.replace(spec, directory=directory)


def _play(
    groups: tuple[tuple[MatchJob, ...], ...], bundles: dict[str, Any], prestart: bool = True
) -> Iterator[tuple[object, ...]]:
    """A chain of matches (each its halves) on one of the node's slots, played in turn
    (``play_chain``: the next half's bots prestarted where ``arena.referee.prestart`` says
    so, not on a one-CPU slot), yielding their events as they come, gathered
    (``_gathered``): a ``MatchPlaced`` as each match's turn comes, one ``JobDone`` per job."""
    _watch_raylet()
    # on one of the node's slots, pinned to its CPUs as a local worker is (node_slots)
    with node_slot(cache_root() / ".slots", configured_slots(), NODE_CPUS):
        yield (WorkerStarted(os.getpid(), usable_cpus()),)
        yield from _played(groups, bundles, prestart)


_PR_SET_PDEATHSIG = 1  # prctl(2)


def _watch_raylet() -> None:
    """End this worker process the moment its node's raylet dies: its matches stop at once
    (the sandbox watchdogs kill the bots of a dead worker), instead of playing on and
    streaming games for the seconds Ray's worker takes to notice. The kernel sends it
    SIGKILL when its parent dies (``PR_SET_PDEATHSIG``: no thread of ours must run, nor
    take the GIL, which a Ray call stuck on the dead raylet may hold). A Ray worker is the
    raylet's child; one that is not (a local-mode run) is left alone."""
    parent = os.getppid()
    try:
        if Path(f"/proc/{parent}/comm").read_text().strip() != "raylet":
            return
    except OSError:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return
    if os.getppid() != parent:  # the raylet died before the signal was armed
        os.kill(os.getpid(), signal.SIGKILL)


def _played(
    groups: tuple[tuple[MatchJob, ...], ...], bundles: dict[str, Any], prestart: bool
) -> Iterator[tuple[object, ...]]:
    """``_play`` once its slot is held: the chain played in a thread (the bots from the
    node's cache), its events yielded as they come."""
    context = ray.get_runtime_context()
    node_ip: str = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
    node_id = context.get_node_id()
    events: queue.SimpleQueue[object] = queue.SimpleQueue()
    finished = object()
    done: set[tuple[int, int]] = set()
    turns = {group[0].match_id: number for number, group in enumerate(groups)}

    def put(event: object) -> None:
        if isinstance(event, JobDone):
            done.add(event.key)
        events.put(event)

    def resolve(job: MatchJob) -> tuple[BotSpec, BotSpec]:
        return (_local_spec(job.first, bundles[job.first.version]),
                _local_spec(job.second, bundles[job.second.version]))  # fmt: skip

    def on_turn(group: tuple[MatchJob, ...], prestarted: bool) -> None:
        job = group[0]
        events.put(MatchPlaced(job.match_id, job.half, node_ip, node_id, os.getpid(),
                               prestarted, turns[job.match_id]))  # fmt: skip

    def play() -> None:
        try:
            play_chain(groups, put, resolve=resolve, on_turn=on_turn, prestart=prestart)
        except Exception as failure:  # cannot happen but for a bug: every job not over fails
            error = f"{type(failure).__name__}: {failure}"
            for group in groups:
                for job in group:
                    if job.key not in done:
                        put(JobDone(job.match_id, job.half, error))
        finally:
            events.put(finished)

    threading.Thread(target=play, name=f"chain-{groups[0][0].match_id}", daemon=True).start()
    yield from _gathered(events, finished)


def _gathered(events: queue.SimpleQueue[object], finished: object) -> Iterator[tuple[object, ...]]:
    """``events`` until ``finished``, in tuples: each what came within ``_GATHER_S`` of its
    first. Each yield is a message to the driver, which pays for each (an object, an
    RPC, a ``ray.get``): a game's end, the live view's batch before it and the next
    game's start go together."""
    while True:
        batch = [events.get()]
        deadline = time.monotonic() + _GATHER_S
        while batch[-1] is not finished:
            try:
                batch.append(events.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                break
        if batch[-1] is finished:
            if batch[:-1]:
                yield tuple(batch[:-1])
            return
        yield tuple(batch)

