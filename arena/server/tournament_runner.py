"""Runs a stored tournament: concurrent matches, each game stored and rated as it ends.

Matches run in worker processes, at most ``concurrency`` at a time, each
worker on its own CPUs (``arena.server.cpu_placement``), longest expected
match first. Workers come from a ``multiprocessing`` forkserver that has
imported this module once: the parent may be a threaded gRPC server, where
fork is unsafe, and a spawned worker would import the referee anew (~0.3 s of
CPU each). Workers send each finished ``GameReport`` back over a queue; the
parent commits it with its rating update in one transaction
(``arena.store.record_game``) as it arrives.

Resume after an interruption at any moment, even ``kill -9``: games are keyed
by ``(match, game index)`` with a UNIQUE constraint. A match with unstored
games is run again with the same seed, playing only the unstored game indices
(``MatchConfig.game_indices``): each keeps the deal and seats of its index and
no stored game is played again; the unstored indices are still split into
their halves (``arena.referee.halves``: even and odd indices of a paired match
are separate jobs, each with its own bot processes, so no process plays both
games of a deal; the two jobs of a match may run at once). Should a report of
a stored game still arrive it is discarded, never counted twice. Swiss rounds are paired and stored
whole, so a round is paired once. Workers die with the runner (a thread
waiting on its pidfd: ``_die_with``), their bots with them.

Live view: each worker also sends its match's live events (``run_match``'s
``on_event``); the parent writes them to the store's live tables
(``arena.store.live``) in batches, so that an admin can watch a game while it
is played. ``record_game`` drops a game's live view when it stores the game;
the live views of a failed match, or left by a killed run, are dropped too.
Publishing is best effort: a store error there never stops a tournament.

One runner at a time: ``run`` holds the tournament's runner lease
(``arena.store.lease``, an flock the kernel drops when the process dies), so
a second runner, in this process or another, is refused before it stores
anything, and a tournament stored as ``running`` whose lease nobody holds
reads as ``interrupted``.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import multiprocessing
import os
import queue
import select
import signal
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from arena.kahuna import Variant
from arena.logs import get_logger
from arena.referee import GameReport, MatchConfig, TimeControl, run_match
from arena.referee.halves import half_configs
from arena.referee.remote import REMOTE_RUNTIME, SeatOffer
from arena.referee.types import BotSpec
from arena.sandbox import SandboxLimits
from arena.sandbox.running import is_running
from arena.server.cpu_placement import pin_this_process, usable_cpus, worker_cpus
from arena.server.live_feed import LiveFeed, LiveSender
from arena.store import (
    MatchRow,
    SeatOfferRow,
    StorageFullError,
    Store,
    StoreError,
    TournamentLease,
    TournamentRow,
    acquire_lease,
    add_round,
    add_seat_offer,
    bot_spec,
    close_seat_offers,
    get_tournament,
    list_matches,
    record_game,
    set_status,
    think_ms_per_game,
    tournament_byes,
    tournament_secret,
    tournament_standings,
)
from arena.store.tournaments import max_swiss_rounds
from arena.tournament.swiss import SwissEntrant, pair_swiss_round

_PR_SET_PDEATHSIG = 1
_RUNNER_POLL_S = 0.2
_POLL_S = 0.2
_DRAIN_MAX_MESSAGES = 500
"""Messages handled before live entries are written out, when workers send faster."""


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """What changed: a game stored (``game_id`` set) or a round paired / tournament state."""

    tournament_id: int
    games_played: int
    games_scheduled: int
    message: str
    game_id: int | None = None
    round: int | None = None


@dataclass(frozen=True, slots=True)
class MatchJob:
    """One run of a match: one of its halves (``arena.referee.halves``), or all of it."""

    match_id: int
    config: MatchConfig
    first: BotSpec
    second: BotSpec
    part: int = 0  # which of the match's halves (0 "even" or 1 "odd"; 0 when unpaired)

    @property
    def key(self) -> tuple[int, int]:
        return self.match_id, self.part


@dataclass
class RunSummary:
    tournament: TournamentRow
    games_recorded: int = 0
    games_discarded: int = 0  # reports of games already stored (resumed matches)
    failed_matches: dict[int, str] = field(default_factory=dict)
    worker_cpus: dict[int, tuple[int, ...]] = field(default_factory=dict)  # pid: CPUs it ran on
    stopped: str | None = None  # why the run stopped before the end (a full disk), if it did

    @property
    def finished(self) -> bool:
        return self.tournament.status == "finished"


def swiss_rounds(tournament: TournamentRow) -> int:
    """Rounds of a Swiss tournament: configured, else ceil(log2(bots)) + 1, within limits."""
    bots = len(tournament.entrants)
    wanted = tournament.config.rounds or math.ceil(math.log2(bots)) + 1
    return min(wanted, max_swiss_rounds(bots))


GAME_OVERHEAD_MS = 60.0
"""What a game costs beyond its bots' thinking (referee, transport), for ordering only."""


def longest_first(
    matches: list[MatchRow], think_ms: Mapping[tuple[str, str], float]
) -> list[MatchRow]:
    """``matches`` by expected duration, longest first (stable), so that a short match,
    not a long one, is what runs alone at the end of a round (the tail of a list
    scheduled greedily). A match's expected duration: its unplayed games times the
    mean thinking time per game of both bots (``think_ms``, from stored games) plus
    ``GAME_OVERHEAD_MS``; a bot with no stored game counts as the mean of those known.
    """
    known = list(think_ms.values())
    unknown_ms = sum(known) / len(known) if known else 0.0

    def expected_ms(match: MatchRow) -> float:
        games = match.games - len(match.games_played)
        first = think_ms.get((match.first, match.first_version), unknown_ms)
        second = think_ms.get((match.second, match.second_version), unknown_ms)
        return games * (first + second + GAME_OVERHEAD_MS)

    return sorted(matches, key=expected_ms, reverse=True)


def unstored_indices(match: MatchRow) -> tuple[int, ...] | None:
    """The game indices of ``match`` not stored yet; None when none is stored (play all)."""
    if not match.games_played:
        return None
    stored = set(match.games_played)
    return tuple(index for index in range(match.games) if index not in stored)


class TournamentRunner:
    def __init__(
        self,
        store: Store,
        tournament_id: int,
        *,
        concurrency: int | None = None,
        limits: SandboxLimits | None = None,
        unsafe: bool = False,
        on_progress: Callable[[ProgressEvent], None] | None = None,
        live: bool = True,
        on_seat_offer: Callable[[SeatOfferRow, str], None] | None = None,
        pin_cpus: bool = True,
        paired_remote: bool = False,
    ) -> None:
        self.store = store
        self.paired_remote = paired_remote  # pair deals in matches with a remote bot too
        self.tournament_id = tournament_id
        self.concurrency = max(1, concurrency or len(usable_cpus()))  # the CPUs we may use
        self.limits = limits or SandboxLimits()
        self.unsafe = unsafe
        self.on_progress = on_progress
        self.on_seat_offer = on_seat_offer  # (stored offer, its token): for `arena serve`
        self.log = get_logger(tournament_id=tournament_id)
        self.live = LiveFeed(store, tournament_id) if live else None
        self._workers = _WorkerPool(self.concurrency, pin_cpus)

    def run(self, lease: TournamentLease | None = None) -> RunSummary:
        """Play every unplayed game (pairing Swiss rounds as they come); idempotent.

        The whole run holds the tournament's runner lease (``take_lease``, or
        ``lease`` when the caller took it first; released here in every case):
        while another runner holds it, LeaseHeldError and nothing is stored.
        """
        with lease if lease is not None else self.take_lease():
            tournament = get_tournament(self.store, self.tournament_id)
            summary = RunSummary(tournament)
            if tournament.status == "finished":
                return summary
            set_status(self.store, self.tournament_id, "running")
            if self.live is not None:
                self.live.drop_all()  # left by a run that was killed
            self.log.info("tournament_started", name=tournament.name, format=tournament.format)
            try:
                while True:
                    pending = [
                        m
                        for m in list_matches(self.store, self.tournament_id)
                        if not m.finished_at
                    ]
                    if not pending and not self._pair_next_round():
                        break
                    if pending:
                        self._play(pending, summary)
                        if summary.failed_matches:
                            break
            except StorageFullError as error:
                # Nothing more can be stored: stop at once (the games being played would be
                # lost anyway). The tournament reads interrupted; resume replays what is
                # not stored, once there is space.
                self._workers.kill()
                summary.stopped = f"{error}: free space, then resume it"
                self.log.error("tournament_stopped", reason=str(error))
            except BaseException:
                self._workers.kill()  # never wait for matches whose games cannot be stored
                raise
            finally:
                self._workers.close()
            if not summary.failed_matches and summary.stopped is None:
                set_status(self.store, self.tournament_id, "finished")
                self.log.info("tournament_finished", games=summary.games_recorded)
        # Read once the lease is given up: a stopped run now reads "interrupted".
        summary.tournament = get_tournament(self.store, self.tournament_id)
        if summary.stopped is not None:
            self._emit(f"interrupted: {summary.stopped}")
        self._emit("finished" if summary.finished else "stopped")
        return summary

    def take_lease(self) -> TournamentLease:
        """The tournament's runner lease (LeaseHeldError naming the holder's pid)."""
        name = get_tournament(self.store, self.tournament_id).name
        lease = acquire_lease(self.store, self.tournament_id, name=name)
        self.log.info("tournament_lease_taken", path=str(lease.path))
        return lease

    # ----------------------------------------------------------------- Swiss

    def _pair_next_round(self) -> bool:
        """Pair and store the next Swiss round; False when there is none to play."""
        tournament = get_tournament(self.store, self.tournament_id)
        if tournament.format != "swiss":
            return False
        matches = list_matches(self.store, self.tournament_id)
        byes = tournament_byes(self.store, self.tournament_id)
        played_rounds = max([m.round for m in matches] + list(byes), default=0)
        if played_rounds >= swiss_rounds(tournament):
            return False
        points = {s.bot: s.points for s in tournament_standings(self.store, self.tournament_id)}
        seed_rank = {bot: i for i, bot in enumerate(tournament.entrants)}
        opponents: dict[str, set[str]] = {bot: set() for bot in tournament.entrants}
        for m in matches:
            opponents[m.first].add(m.second)
            opponents[m.second].add(m.first)
        had_bye = set(byes.values())
        order = sorted(tournament.entrants, key=lambda b: (-points[b], seed_rank[b]))
        entrants = [
            SwissEntrant(b, points[b], frozenset(opponents[b]), b in had_bye) for b in order
        ]
        paired = pair_swiss_round(entrants)
        add_round(self.store, self.tournament_id, played_rounds + 1, paired.pairings, paired.bye)
        self.log.info("round_paired", round=played_rounds + 1, bye=paired.bye)
        self._emit(f"round {played_rounds + 1} paired", round_no=played_rounds + 1)
        return True

    # ---------------------------------------------------------------- matches

    def _jobs(self, tournament: TournamentRow, match: MatchRow) -> list[MatchJob]:
        """The runs of ``match``'s unstored games: its halves when paired, each run with
        its own bot processes, so that no process plays both games of a deal."""
        config = tournament.config
        first = bot_spec(self.store, match.first, match.first_version)
        second = bot_spec(self.store, match.second, match.second_version)
        remote = REMOTE_RUNTIME in (first.runtime, second.runtime)
        match_config = MatchConfig(
            games=match.games,
            seed=match.seed,
            secret=tournament_secret(self.store, self.tournament_id),
            paired=self.paired_remote or not remote,
            variant=Variant(strategic=config.strategic, tactical=config.tactical),
            time_control=TimeControl(action_ms=config.action_ms, bank_ms=config.bank_ms),
            limits=self.limits,
            unsafe=self.unsafe,
            game_indices=unstored_indices(match),
        )
        return [
            MatchJob(match.id, half, first, second, part=half.indices_to_play[0] % 2)
            for half in half_configs(match_config, remote=remote)
        ]

    def _play(self, matches: list[MatchRow], summary: RunSummary) -> None:
        tournament = get_tournament(self.store, self.tournament_id)
        ordered = longest_first(matches, think_ms_per_game(self.store))
        jobs = [job for m in ordered for job in self._jobs(tournament, m)]
        open_jobs = {job.key for job in jobs}
        pool = self._workers.pool(len(jobs))
        futures: dict[Future[None], tuple[int, int]] = {
            pool.submit(_play_match, job, self.live is not None): job.key for job in jobs
        }
        try:
            self._collect(self._workers.reports, futures, open_jobs, self._workers.pids, summary)
        except KeyboardInterrupt:
            # Stop at once: the workers' bots die with them (sandbox), and the
            # games not yet stored are played again by `resume`.
            self._workers.kill()
            raise

    def _collect(
        self,
        reports: Any,
        futures: dict[Future[None], tuple[int, int]],
        open_jobs: set[tuple[int, int]],
        worker_pids: set[int],
        summary: RunSummary,
    ) -> None:
        """Store games as workers report them, until every job has said it is done."""
        while open_jobs:
            try:
                message = reports.get(timeout=_POLL_S)
            except queue.Empty:
                self._check_workers(futures, open_jobs, summary)
                continue
            for _ in range(_DRAIN_MAX_MESSAGES):  # what is already there, then live entries
                self._handle(message, open_jobs, worker_pids, summary)
                try:
                    message = reports.get_nowait()
                except queue.Empty:
                    break
            else:
                self._handle(message, open_jobs, worker_pids, summary)
            if self.live is not None:
                self.live.flush()

    def _handle(
        self,
        message: tuple[str, int, Any],
        open_jobs: set[tuple[int, int]],
        worker_pids: set[int],
        summary: RunSummary,
    ) -> None:
        kind, match_id, payload = message
        if kind == "live":
            if self.live is not None:
                self.live.batch(match_id, payload)
        elif kind == "offer":
            self._offer_seat(match_id, payload)
        elif kind == "worker":
            worker_pids.add(match_id)  # a worker's pid, and the CPUs it may run on
            summary.worker_cpus[match_id] = payload
        elif kind == "game":
            self._store_game(match_id, payload, summary)
        else:  # "done": payload is (the job's part, its error or None)
            part, error = payload
            open_jobs.discard((match_id, part))
            if not any(key[0] == match_id for key in open_jobs):  # its last run is over
                close_seat_offers(self.store, match_id=match_id)
            if error is not None:
                self._match_failed(match_id, error, summary)

    def _check_workers(
        self,
        futures: dict[Future[None], tuple[int, int]],
        open_jobs: set[tuple[int, int]],
        summary: RunSummary,
    ) -> None:
        """A worker that died without saying so (killed, out of memory) fails its match."""
        for future, key in futures.items():
            if key in open_jobs and future.done() and future.exception() is not None:
                open_jobs.discard(key)
                self._match_failed(key[0], f"worker died: {future.exception()}", summary)

    def _offer_seat(self, match_id: int, offer: SeatOffer) -> None:
        """Store a remote bot's seat offer (token hash only), then hand it to `arena serve`."""
        try:
            row = add_seat_offer(
                self.store, bot=offer.bot, version=offer.version, token=offer.token,
                match_id=match_id, referee_match=offer.referee_match, slot=offer.slot,
                socket_path=offer.socket_path, expires_at_ms=offer.expires_at_ms,
            )  # fmt: skip
        except StoreError as error:  # the seat then times out like a silent bot
            self.log.error("seat_offer_failed", match_id=match_id, error=str(error))
            return
        self.log.info("seat_offered", match_id=match_id, bot=offer.bot, slot=offer.slot)
        if self.on_seat_offer is not None:
            self.on_seat_offer(row, offer.token)

    def _match_failed(self, match_id: int, error: str, summary: RunSummary) -> None:
        summary.failed_matches[match_id] = error
        close_seat_offers(self.store, match_id=match_id)
        self.log.error("match_failed", match_id=match_id, error=error)
        if self.live is not None:
            self.live.drop_match(match_id)

    def _store_game(self, match_id: int, report: GameReport, summary: RunSummary) -> None:
        if self.live is not None:
            self.live.stored(match_id, report.index)  # record_game drops its live view
        game_id = record_game(self.store, match_id, report)
        if game_id is None:
            summary.games_discarded += 1
            return
        summary.games_recorded += 1
        self.log.info("game_recorded", match_id=match_id, game=report.index, game_id=game_id)
        self._emit(
            f"{report.bots_by_seat[0]} vs {report.bots_by_seat[1]}: "
            + (f"{report.winner} won" if report.winner else "draw")
            + f" ({report.reason})",
            game_id=game_id,
        )

    def _emit(
        self, message: str, *, game_id: int | None = None, round_no: int | None = None
    ) -> None:
        if self.on_progress is None:
            return
        tournament = get_tournament(self.store, self.tournament_id)
        self.on_progress(
            ProgressEvent(
                tournament_id=self.tournament_id,
                games_played=tournament.games_played,
                games_scheduled=tournament.games_scheduled,
                message=message,
                game_id=game_id,
                round=round_no,
            )
        )


class _WorkerPool:
    """The match worker processes of one run, kept from one Swiss round to the next.

    Started on first use (forked by a forkserver that imported the referee once), at
    most ``concurrency`` of them and no more than the first batch of matches
    (a Swiss round is never bigger than the first), each on its own CPUs
    when ``pin_cpus`` (``arena.server.cpu_placement``).
    """

    def __init__(self, concurrency: int, pin_cpus: bool) -> None:
        self.concurrency = concurrency
        self.pin_cpus = pin_cpus
        self.pids: set[int] = set()  # reported by the workers as they start
        self.reports: Any = None
        self._pool: ProcessPoolExecutor | None = None

    def pool(self, matches: int) -> ProcessPoolExecutor:
        if self._pool is None:
            workers = max(1, min(self.concurrency, matches))
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload([__name__])
            self.reports = context.Queue()
            placement = _Placement(context.Value("i", 0), usable_cpus(), workers, self.pin_cpus)
            self._pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=context,
                initializer=_init_worker,
                initargs=(self.reports, os.getpid(), placement),
            )
        return self._pool

    def kill(self) -> None:
        """SIGKILL every worker and forget the pool (Ctrl-C: stop at once)."""
        for pid in self.pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None


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
    reports.put(("worker", os.getpid(), usable_cpus()))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle


def _play_match(job: MatchJob, live: bool) -> None:
    reports = _worker_queue
    error: str | None = None

    sender = LiveSender(job.match_id, reports.put) if live else None

    def on_game(report: GameReport) -> None:
        if sender is not None:
            sender.flush()
        reports.put(("game", job.match_id, report))

    try:
        run_match(
            job.config, job.first, job.second,
            on_game=on_game,
            on_event=None if sender is None else sender.event,
            on_seat_offer=lambda offer: reports.put(("offer", job.match_id, offer)),
        )  # fmt: skip
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    if sender is not None:
        sender.close()
    reports.put(("done", job.match_id, (job.part, error)))
