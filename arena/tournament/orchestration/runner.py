"""Runs a stored tournament: concurrent matches, each game stored and rated as it ends.

Matches are played by an executor (``arena.tournament.execution.executor``: submit
match jobs, receive their games as they end, cancel), by default the local
one: worker processes, at most ``concurrency`` at a time, each on its own CPUs
(``arena.tournament.execution.local_executor``), longest expected match first. Each
finished ``GameReport`` is committed with its rating update as it arrives;
the games that arrive together are committed in one transaction
(``arena.tournament.policy.results.store_games``): all or none, one wait for the disk.

Resume after an interruption at any moment, even ``kill -9``: games are keyed
by ``(match, game index)`` with a UNIQUE constraint. A match with unstored
games is run again with the same seed, playing only the unstored game indices
(``MatchConfig.game_indices``): each keeps the deal and seats of its index and
no stored game is played again; the unstored indices are still split into
their halves (``arena.referee.halves``: even and odd indices of a paired match
are separate jobs, each with its own bot processes, so no process plays both
games of a deal; one worker plays the two jobs of a match in turn). Should a report of
a stored game still arrive it is discarded, never counted twice. Swiss rounds are paired and stored
whole, so a round is paired once; an SPRT test's pairs are stored a batch at a time (one pair
per worker, ``arena.tournament.policy.sprt_format``) once the batch before is played, none once the
test has decided. Workers die with the runner, their bots
with them.

Live view: each job also sends its match's live events (``run_match``'s
``on_event``); the parent writes them to the store's live tables
(``arena.store.live``) in batches, so that an admin can watch a game while it
is played. ``record_game`` (the store) drops a game's live view when it stores the game;
the live views of a failed match, or left by a killed run, are dropped too.
Publishing is best effort: a store error there never stops a tournament.

One runner at a time: ``run`` holds the tournament's runner lease
(``arena.store.lease``, an flock the kernel drops when the process dies), so
a second runner, in this process or another, is refused before it stores
anything, and a tournament stored as ``running`` whose lease nobody holds
reads as ``interrupted``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from arena.conformance import ensure_class_archive
from arena.referee import MatchConfig
from arena.referee.halves import half_configs
from arena.referee.remote import REMOTE_RUNTIME, SeatOffer
from arena.referee.result_words import report_words
from arena.referee.seeds import earlier_deal_seed, match_seed_material
from arena.sandbox import SandboxLimits
from arena.store import (
    MatchRow,
    SeatOfferRow,
    StorageFullError,
    Store,
    StoreError,
    TournamentLease,
    TournamentRow,
    add_rejected_game,
    add_rounds,
    add_seat_offer,
    bot_spec,
    close_seat_offers,
    find_game,
    game_record,
    get_tournament,
    list_matches,
    set_status,
    think_ms_per_game,
    tournament_secret,
)
from arena.store.copies import check_stored_copy
from arena.store.models import TournamentConfig, TournamentFormat, TournamentStatus
from arena.store.play import is_play_tournament, only_its_table
from arena.tournament.execution.executor import (
    GameFinished,
    GameRejected,
    JobDone,
    JobEvent,
    LiveBatch,
    MatchExecutor,
    MatchJob,
    SeatOffered,
    WorkerStarted,
)
from arena.tournament.orchestration.base import RunnerBase, record_stop
from arena.tournament.policy.config import TournamentError, match_identity
from arena.tournament.policy.earlier_deals import dealt_earlier
from arena.tournament.policy.results import store_games
from arena.tournament.policy.rounds import next_rounds

_POLL_S = 0.2
_DRAIN_MAX_MESSAGES = 500
"""Messages handled before live entries are written out, when workers send faster."""


class ProgressKind(StrEnum):
    """What a ``ProgressEvent`` reports; ``ENDED`` is always a run's last event."""

    GAME_STORED = "game_stored"
    ROUND_PAIRED = "round_paired"
    INTERRUPTED = "interrupted"
    ENDED = "ended"


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """What changed (``kind``), in words for people (``message``): a game stored
    (``game_id`` set), a round paired, why a run stopped, the run's end."""

    tournament_id: int
    games_played: int
    games_scheduled: int
    message: str
    kind: ProgressKind
    game_id: int | None = None
    round: int | None = None


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
        return self.tournament.status is TournamentStatus.FINISHED


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


def match_jobs(
    store: Store, match: MatchRow, config: TournamentConfig, *, limits: SandboxLimits,
    unsafe: bool, live: bool, paired_remote: bool, anonymous: bool = False,
) -> list[MatchJob]:  # fmt: skip
    """The jobs of ``match``'s unstored games, one per half (two when paired), each half
    with its own bot processes, so that no process plays both games of a deal. Whether the
    match pairs its deals is the rule its tournament committed (``config.deals_paired``);
    a tournament that committed none pairs a match with a remote bot only if
    ``paired_remote``. With ``anonymous`` each bot is told its opponent's name as
    ``ANONYMOUS_OPPONENT`` only (the ladder's matches)."""
    first = bot_spec(store, match.first, match.first_version)
    second = bot_spec(store, match.second, match.second_version)
    for spec in (first, second):
        check_stored_copy(spec)
    for spec in (first, second):  # a Java version without its class-data archive for this
        ensure_class_archive(spec, limits=limits)  # JDK: built now, out of any match clock
    remote = REMOTE_RUNTIME in (first.runtime, second.runtime)
    paired = config.deals_paired(match.first, match.second)
    secret = tournament_secret(store, match.tournament_id)
    match_config = MatchConfig(
        games=match.games, seed=match.seed,
        secret=match_seed_material(secret, match_identity(match)),
        paired=(paired_remote or not remote) if paired is None else paired, variant=config.variant,
        time_control=config.time_control, limits=limits, unsafe=unsafe,
        game_indices=unstored_indices(match), anonymous_opponents=anonymous,
    )  # fmt: skip
    if config.fresh_deals is None and _dealt_earlier(store, secret, match):
        match_config = replace(match_config, deal_seeds=tuple(
            (deal, earlier_deal_seed(secret, match.seed, deal)) for deal in sorted(
                {match_config.deal_index(i) for i in match_config.indices_to_play})))  # fmt: skip
    return [
        MatchJob(match.id, half, first, second, half=half.indices_to_play[0] % 2, live=live)
        for half in half_configs(match_config, remote=remote)
    ]


def _dealt_earlier(store: Store, secret: bytes, match: MatchRow) -> bool:
    """Whether ``match``, half played, was dealt by an arena of the earlier derivation
    (``earlier_deal_seed``): its other games then play the same derivation's deals, so
    that a pair's second game gets its first game's deal."""
    if not match.games_played:
        return False
    index = min(match.games_played)
    game = find_game(store, match.id, index)
    if game is None:
        return False
    record = json.dumps(game_record(store, game.id))
    return dealt_earlier(secret, match_identity(match), match.seed, index, record)


def unstored_indices(match: MatchRow) -> tuple[int, ...] | None:
    """The game indices of ``match`` not stored yet; None when none is stored (play all)."""
    if not match.games_played:
        return None
    stored = set(match.games_played)
    return tuple(index for index in range(match.games) if index not in stored)


class TournamentRunner(RunnerBase):
    kind = "tournament"

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
        executor: MatchExecutor | None = None,
    ) -> None:
        super().__init__(
            store, tournament_id, concurrency=concurrency, limits=limits, unsafe=unsafe,
            live=live, pin_cpus=pin_cpus, executor=executor,
        )  # fmt: skip
        # pair deals in matches with a remote bot too, in a tournament that committed no rule
        self.paired_remote = paired_remote
        self.on_progress = on_progress
        self.on_seat_offer = on_seat_offer  # (stored offer, its token): for `arena serve`

    def run(self, lease: TournamentLease | None = None) -> RunSummary:
        """Play every unplayed game (pairing Swiss rounds as they come); idempotent.

        The whole run holds the tournament's runner lease (``take_lease``, or
        ``lease`` when the caller took it first; released here in every case):
        while another runner holds it, LeaseHeldError and nothing is stored.
        """
        with lease if lease is not None else self.take_lease() as held:
            tournament = get_tournament(self.store, self.tournament_id)
            if tournament.format is TournamentFormat.LADDER:
                raise TournamentError(
                    f"{tournament.name!r} is a ladder: arena serve --ladder runs it"
                )
            summary = RunSummary(tournament)
            if tournament.status is TournamentStatus.FINISHED:
                return summary
            if is_play_tournament(self.store, tournament.id):  # run only by its table
                raise TournamentError(
                    f"{only_its_table(tournament.name)} (the person's seat is gone once it"
                    " stopped; a run would store their forfeit and rate it as a bots' game)"
                )
            self.log.info("tournament_started", name=tournament.name, format=tournament.format)
            summary.stopped = self._guarded(
                held, lambda: self._play_all(summary), when_full="free space, then resume it"
            )
            if summary.stopped is not None:
                self._withdraw_seats()
            if not summary.failed_matches and summary.stopped is None:
                set_status(self.store, self.tournament_id, TournamentStatus.FINISHED)
                self.log.info("tournament_finished", games=summary.games_recorded)
            else:
                self._record_interruption(summary.stopped or _failed_reason(summary))
        # Read once the lease is given up: a stopped run now reads "interrupted".
        summary.tournament = get_tournament(self.store, self.tournament_id)
        if summary.stopped is not None:
            self._emit(ProgressKind.INTERRUPTED, f"interrupted: {summary.stopped}")
        self._emit(ProgressKind.ENDED, "finished" if summary.finished else "stopped")
        return summary

    def _play_all(self, summary: RunSummary) -> None:
        """Play the pending matches, pairing what comes next, until nothing is left or a
        match failed."""
        while True:
            self._check_stop()
            pending = [m for m in list_matches(self.store, self.tournament_id) if not m.finished_at]
            if not pending and not self._pair_next_round():
                return
            if pending:
                self._play(pending, summary)
                if summary.failed_matches:
                    return

    def _withdraw_seats(self) -> None:
        """A stopped run: its remote bots' open seats are no longer played, so a Hello
        with their tokens is refused as withdrawn (on a full disk they expire instead)."""
        try:
            close_seat_offers(self.store, tournament_id=self.tournament_id)
        except (StoreError, StorageFullError) as error:
            self.log.error("seat_offers_not_closed", error=str(error))

    def _record_interruption(self, reason: str) -> None:
        record_stop(self.store, self.tournament_id, self._lease, reason, self.log)

    # ------------------------------------------- rounds paired as play goes

    def _pair_next_round(self) -> bool:
        """Pair and store what comes next (a Swiss round, an SPRT test's next batch of
        pairs, one per worker); False when there is nothing more to play."""
        planned = next_rounds(self.store, self.tournament_id, batch=self.concurrency)
        if not planned:
            return False
        add_rounds(self.store, self.tournament_id, planned)
        first, last = planned[0].number, planned[-1].number
        self.log.info("round_paired", round=first, rounds=len(planned), bye=planned[0].bye)
        what = f"round {first}" if first == last else f"rounds {first}-{last}"
        self._emit(ProgressKind.ROUND_PAIRED, f"{what} paired", round_no=first)
        return True

    # ---------------------------------------------------------------- matches

    def _jobs(self, tournament: TournamentRow, match: MatchRow) -> list[MatchJob]:
        return match_jobs(
            self.store, match, tournament.config, limits=self.limits, unsafe=self.unsafe,
            live=self.live is not None, paired_remote=self.paired_remote,
        )  # fmt: skip

    def _play(self, matches: list[MatchRow], summary: RunSummary) -> None:
        tournament = get_tournament(self.store, self.tournament_id)
        ordered = longest_first(matches, think_ms_per_game(self.store))
        jobs = [job for m in ordered for job in self._jobs(tournament, m)]
        try:
            self.executor.submit(jobs)
            self._collect({job.key for job in jobs}, summary)
        except KeyboardInterrupt:
            # Stop at once: the workers' bots die with them (sandbox), and the
            # games not yet stored are played again by `resume`.
            self.executor.cancel()
            raise

    def _collect(self, open_jobs: set[tuple[int, int]], summary: RunSummary) -> None:
        """Store games as the executor reports them, until every job has said it is done.

        The games already waiting are stored together, in one transaction (one wait
        for the disk: ``store_games``), before any other event is handled, so that a
        job's games are stored before its ``JobDone`` counts.
        """
        while open_jobs:
            self._check_stop()
            event = self.executor.next_event(_POLL_S)
            handled = 0
            finished: list[GameFinished] = []
            while event is not None:  # what is already there, then live entries
                if isinstance(event, GameFinished):
                    finished.append(event)
                else:
                    self._store_games(finished, summary)
                    finished = []
                    self._handle(event, open_jobs, summary)
                handled += 1
                if handled > _DRAIN_MAX_MESSAGES:
                    break
                event = self.executor.next_event(0)
            self._store_games(finished, summary)
            if self.live is not None:
                self.live.flush()

    def _handle(
        self, event: JobEvent, open_jobs: set[tuple[int, int]], summary: RunSummary
    ) -> None:
        if isinstance(event, LiveBatch):
            if self.live is not None:
                self.live.batch(event.match_id, event.payloads)
        elif isinstance(event, SeatOffered):
            self._offer_seat(event.match_id, event.offer)
        elif isinstance(event, WorkerStarted):
            summary.worker_cpus[event.pid] = event.cpus
        elif isinstance(event, GameFinished):
            self._store_games([event], summary)
        elif isinstance(event, GameRejected):
            self._game_rejected(event)
        else:
            self._job_done(event, open_jobs, summary)

    def _job_done(
        self, done: JobDone, open_jobs: set[tuple[int, int]], summary: RunSummary
    ) -> None:
        open_jobs.discard(done.key)
        if not any(key[0] == done.match_id for key in open_jobs):  # its last half is over
            close_seat_offers(self.store, match_id=done.match_id)
        if done.error is not None:
            self._match_failed(done.match_id, done.error, summary)

    def _game_rejected(self, event: GameRejected) -> None:
        """Keep which node sent a game the driver refused (it is played again elsewhere)."""
        node = {"node_ip": event.node_ip, "node_id": event.node_id, "problem": event.problem}
        self.log.error("game_rejected", match_id=event.match_id, game=event.index, **node)
        add_rejected_game(self.store, match_id=event.match_id, game_index=event.index, **node)

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

    def _store_games(self, finished: list[GameFinished], summary: RunSummary) -> None:
        """Store ``finished`` (in order, each with its rating update) in one transaction."""
        if not finished:
            return
        if self.live is not None:
            for event in finished:  # record_game drops their live views
                self.live.stored(event.match_id, event.report.index)
        game_ids = store_games(self.store, [(e.match_id, e.report) for e in finished])
        counts = None
        if self.on_progress is not None:  # read once: each game's count follows from it
            tournament = get_tournament(self.store, self.tournament_id)
            played = tournament.games_played - sum(1 for i in game_ids if i is not None)
            counts = [played, tournament.games_scheduled]
        for event, game_id in zip(finished, game_ids, strict=True):
            match_id, report = event.match_id, event.report
            if game_id is None:  # reported twice (a resumed match): never stored twice
                summary.games_discarded += 1
                self.log.warning("game_discarded_duplicate", match_id=match_id, game=report.index)
                continue
            summary.games_recorded += 1
            self.log.info("game_recorded", match_id=match_id, game=report.index, game_id=game_id)
            if counts is not None:
                counts[0] += 1
            bots = report.bots_by_seat
            self._emit(
                ProgressKind.GAME_STORED,
                f"{bots[0]} vs {bots[1]}: "
                + report_words(bots, report.winner, report.reason, report.statuses),
                game_id=game_id,
                counts=None if counts is None else (counts[0], counts[1]),
            )

    def _emit(
        self, kind: ProgressKind, message: str, *, game_id: int | None = None,
        round_no: int | None = None, counts: tuple[int, int] | None = None,
    ) -> None:  # fmt: skip
        """Tell ``on_progress``; ``counts``: (games played, scheduled) if known already."""
        if self.on_progress is None:
            return
        if counts is None:
            tournament = get_tournament(self.store, self.tournament_id)
            counts = (tournament.games_played, tournament.games_scheduled)
        self.on_progress(
            ProgressEvent(
                tournament_id=self.tournament_id,
                games_played=counts[0],
                games_scheduled=counts[1],
                message=message,
                kind=kind,
                game_id=game_id,
                round=round_no,
            )
        )


def _failed_reason(summary: RunSummary) -> str:
    match_id, error = next(iter(summary.failed_matches.items()))
    more = len(summary.failed_matches) - 1
    return f"match {match_id} failed: {error}" + (f" (and {more} more)" if more else "")
