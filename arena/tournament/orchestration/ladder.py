"""The ladder runner: keeps ``concurrency`` matches in play until it is stopped.

The entrants are the store's (the latest version of every bot not
withdrawn; of a user's bots only the ``entrants_per_user`` latest-submitted,
``active_entrants``), read with their ratings before each pick
(``ladder_ratings``, one read of the bots), so a new submission joins and a
withdrawn bot leaves without a restart. Their matches are played with
anonymous opponents (``match_jobs(anonymous=True)``, docs/PROTOCOL.md), and
two bots of one owner are never paired (``arena.tournament.pairing.ladder_schedule``).
Their ladder history (matches, the latest, recent opponents) is read once a
run (``ladder_history``, the store's running totals) and then kept by the
runner as it stores each match (``history_after``): it alone adds ladder
matches (it holds the lease), so the kept history is the stored one, and the
picks are those of ``ladder_entrants``. Each free
slot gets the scheduler's next pick (``arena.tournament.pairing.ladder_schedule``,
from the stored ratings and history only), stored as the ladder's next match
before it is played, then played by the executor in its halves (paired
deals: each half with its own bot processes) exactly as a tournament's
matches are. Each game is stored with its rating update as it ends
(``arena.tournament.policy.results.store_game``).

One match waits queued per worker (``ahead``, by default ``concurrency``):
the runner keeps ``concurrency + ahead`` matches scheduled, so a worker whose
match ends starts the queued one at once, as a round robin's workers take
their next job, instead of idling while the runner stores the last game,
reads the entrants, picks and stores the next match. The scheduler counts
queued matches as in play (a queued bot is not idle). The price: a queued
match was picked before the matches in play ended, from ratings up to one
match per worker older; and a bot withdrawn (or superseded) while its match is
queued still plays that match.

Resume: the runner holds the ladder's runner lease (``interrupted`` without
it); a restart first plays the unstored games of the unfinished matches
(same seeds, same deals; a stored game is never played again), then goes on
scheduling. An unfinished match of a version no longer on the ladder (a
newer version came, or the bot was withdrawn) is left as it is. Stopping
(``stop``) cancels the matches in play at once; their unstored games are
played again by the next run. Every run ends with the ladder interrupted and
the reason recorded (``stop``'s, "the server was stopped" from `arena serve`,
a full disk, or the error that ended it). A bot whose stored copy is gone
(DATA_DIR/bots/NAME/VERSION) is withdrawn, with an error log line naming the
copy, and the ladder goes on without it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from arena.sandbox import SandboxLimits
from arena.store import (
    LadderEntrantRow,
    LadderHistory,
    LadderRating,
    LadderUsage,
    MatchRow,
    Store,
    TournamentLease,
    add_ladder_match,
    bot_matches,
    bot_owners,
    join_owners,
    ladder_history,
    ladder_ratings,
    ladder_settings,
    ladder_usage,
    match_version_ids,
    next_ladder_round,
    owner_turns,
    owner_usage,
    set_withdrawn,
    unfinished_matches,
    usage_key,
    version_bots,
)
from arena.store.copies import MissingBotCopyError
from arena.tournament.execution.executor import (
    GameFinished,
    JobDone,
    LiveBatch,
    MatchExecutor,
    MatchJob,
    WorkerStarted,
)
from arena.tournament.orchestration.base import RunnerBase, record_stop
from arena.tournament.orchestration.runner import match_jobs
from arena.tournament.pairing.ladder_schedule import Contender, pick
from arena.tournament.policy.config import match_seed
from arena.tournament.policy.ladder_config import LadderSettings
from arena.tournament.policy.results import store_game

POLL_S = 0.2


class _Entrant(Protocol):
    @property
    def version_id(self) -> int: ...
    @property
    def owner(self) -> str | None: ...


E = TypeVar("E", bound=_Entrant)


def active_entrants(rows: Sequence[E], per_user: int) -> list[E]:
    """The entrants that play: each user's ``per_user`` latest-submitted bots (their newest
    versions), every bot of the admin's (owner None); ``per_user`` 0: everyone. A user's
    other bots wait off the ladder, their history kept, until they are the latest again
    (`arena ladder withdraw` the newer one)."""
    if per_user <= 0:
        return list(rows)
    newest = sorted(rows, key=lambda r: -r.version_id)
    kept: dict[str, int] = {}
    active: set[int] = set()
    for row in newest:
        if row.owner is not None:
            if kept.get(row.owner, 0) >= per_user:
                continue
            kept[row.owner] = kept.get(row.owner, 0) + 1
        active.add(row.version_id)
    return [r for r in rows if r.version_id in active]


def owner_last(turns: Sequence[int], entrants: int) -> int | None:
    """An owner's turn (``Contender.owner_last``): with ``entrants`` bots on the ladder, the
    ``entrants``-th latest of ``turns`` (its bots' latest ladder matches, newest first, bots
    off the ladder too). Its entrants that played since keep their own wait; one that has
    been off the ladder waits from there, as if it had played then: a user's bots share
    the user's turns instead of each banking wait while another plays."""
    return turns[entrants - 1] if 0 < entrants <= len(turns) else None


def _entrants_of(rows: Sequence[_Entrant]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in rows:
        if r.owner is not None:
            counts[r.owner] = counts.get(r.owner, 0) + 1
    return counts


def match_ms(game_ms: float | None, games_per_match: int) -> float | None:
    """What a match costs an entrant whose games cost it ``game_ms`` each on average."""
    return None if game_ms is None else game_ms * games_per_match


def contenders(
    rows: Sequence[LadderEntrantRow], in_play: dict[int, int], games_per_match: int = 2
) -> list[Contender]:
    """The scheduler's view of the stored entrants (those that play: ``active_entrants``);
    ``in_play``: matches this run plays now; ``games_per_match``: the ladder's."""
    entrants = _entrants_of(rows)
    return [
        Contender(
            id=r.version_id,
            mu=r.mu,
            sigma=r.sigma,
            matches=r.matches,
            last_match=r.last_match,
            in_play=in_play.get(r.version_id, 0),
            recent=r.recent,
            owner=r.owner,
            placed=r.bot_matches,
            owner_last=None if r.owner is None else owner_last(r.owner_turns, entrants[r.owner]),
            owner_used=r.owner_used_ms,
            match_ms=match_ms(r.game_ms, games_per_match),
        )
        for r in rows
    ]


def rated_contenders(
    ratings: list[LadderRating],
    history: Mapping[int, LadderHistory],
    in_play: dict[int, int],
    bot_of: Mapping[int, int] | None = None,
    owner_of: Mapping[int, str | None] | None = None,
    usage: Mapping[int, LadderUsage] | None = None,
    games_per_match: int = 2,
    lifts: Mapping[str | int, tuple[float, float]] | None = None,
) -> list[Contender]:
    """``contenders`` from the entrants' ratings and a history kept up to date by the
    runner (``history_after``): the same list, without reading every ladder match.
    ``bot_of`` (version id: bot id, ``arena.store.version_bots``) sums a bot's versions'
    matches for its placement burst; without it each version places on its own.
    ``owner_of`` (bot id: owner, ``arena.store.bot_owners``, with ``bot_of``) gives each
    user's entrants their owner's turn (``owner_last``); without it they have none.
    ``usage`` (version id: its runner time, ``arena.store.ladder_usage``, with ``bot_of`` and
    ``owner_of``) gives each its owner's time and what a match of ``games_per_match``
    games costs it, with what each owner was lifted by on joining the ladder (``lifts``,
    ``arena.store.join_owners``); without it nobody has used any."""
    empty = LadderHistory()
    placed, last_of = ({}, {}) if bot_of is None else bot_matches(history, bot_of)
    turns = {} if owner_of is None else owner_turns(last_of, owner_of)
    used = (
        {} if usage is None or bot_of is None or owner_of is None
        else owner_usage(usage, bot_of, owner_of, lifts)
    )  # fmt: skip
    spent = usage or {}
    entrants = _entrants_of(ratings)
    return [
        Contender(
            id=r.version_id,
            mu=r.mu,
            sigma=r.sigma,
            matches=(h := history.get(r.version_id, empty)).matches,
            last_match=h.last_match,
            in_play=in_play.get(r.version_id, 0),
            recent=h.recent,
            owner=r.owner,
            placed=None if bot_of is None else placed.get(r.bot_id, 0),
            owner_last=None if r.owner is None
            else owner_last(turns.get(r.owner, ()), entrants[r.owner]),
            owner_used=used.get(usage_key(r.bot_id, r.owner), 0.0),
            match_ms=match_ms(spent.get(r.version_id, LadderUsage()).game_ms, games_per_match),
        )
        for r in ratings
    ]


def history_after(history: LadderHistory, opponent: int, number: int, keep: int) -> LadderHistory:
    """A version's history once ladder match number ``number`` against ``opponent`` is
    stored (``keep``: how many latest opponents the scheduler reads)."""
    return LadderHistory(
        matches=history.matches + 1, last_match=number, recent=(opponent, *history.recent)[:keep]
    )


@dataclass
class LadderSummary:
    games_recorded: int = 0
    games_discarded: int = 0
    matches_scheduled: int = 0
    matches_resumed: int = 0
    failed_matches: dict[int, str] = field(default_factory=dict)
    stopped: str | None = None


class LadderRunner(RunnerBase):
    kind = "ladder"

    def __init__(
        self,
        store: Store,
        tournament_id: int,
        *,
        concurrency: int | None = None,
        limits: SandboxLimits | None = None,
        unsafe: bool = False,
        pin_cpus: bool = True,
        live: bool = True,
        executor: MatchExecutor | None = None,
        on_game: Callable[[int], None] | None = None,
        ahead: int | None = None,
    ) -> None:
        _, stored = ladder_settings(store, tournament_id)
        self.settings = LadderSettings.from_json(stored)
        super().__init__(
            store, tournament_id, concurrency=concurrency or self.settings.concurrency,
            limits=limits, unsafe=unsafe, live=live, pin_cpus=pin_cpus, executor=executor,
            log_context={"ladder": True},
        )  # fmt: skip
        self.ahead = self.concurrency if ahead is None else max(0, ahead)  # matches queued
        self.on_game = on_game  # a game id, as each is stored
        self._open_jobs: set[tuple[int, int]] = set()
        self._open_matches: dict[int, tuple[int, int]] = {}  # match id: its version ids
        self._history: dict[int, LadderHistory] | None = None  # read at the first pick
        self._bot_of: dict[int, int] = {}  # version id: bot id (a bot places once)
        self._owner_of: dict[int, str | None] = {}  # bot id: owner (a user's turns)
        self._present: frozenset[str | int] | None = None  # owners on the ladder at the last look
        self._lifts: dict[str | int, tuple[float, float]] = {}  # each owner's lift on joining

    def stop(self, reason: str = "the ladder was stopped") -> None:
        """Ask ``run`` to end (from any thread): the matches in play are cancelled, and
        the ladder reads interrupted saying ``reason`` until it is started again."""
        super().stop(reason)

    def run(self, lease: TournamentLease | None = None) -> LadderSummary:
        """Play until ``stop``; LeaseHeldError (nothing stored) while another runner runs it."""
        summary = LadderSummary()
        with lease if lease is not None else self.take_lease() as held:
            self.log.info("ladder_started", concurrency=self.concurrency)
            summary.stopped = self._guarded(
                held, lambda: self._play_on(summary),
                when_full="free space, then start the ladder again",
            )  # fmt: skip
            # A ladder never finishes: every run ends interrupted, saying why.
            reason = summary.stopped or self._stop_reason
            record_stop(self.store, self.tournament_id, held, reason, self.log)
            self.log.info("ladder_ended", games=summary.games_recorded, reason=reason)
        return summary

    def _play_on(self, summary: LadderSummary) -> None:
        """Resume the unfinished matches, then keep the slots full until ``stop``."""
        resumed = self._resume(summary)
        while True:
            self._check_stop()
            self._fill(summary, resumed)
            resumed = []
            self._collect(summary)

    # --------------------------------------------------------------- matches

    def _resume(self, summary: LadderSummary) -> list[MatchJob]:
        """The jobs of the unfinished matches to play again (handed to the executor with
        the first new ones: its first batch decides how many workers it starts)."""
        playing = active_entrants(ladder_ratings(self.store), self.settings.entrants_per_user)
        current = {r.version_id for r in playing}
        jobs: list[MatchJob] = []
        for match in unfinished_matches(self.store, self.tournament_id):
            versions = match_version_ids(self.store, match.id)
            if set(versions) <= current:
                jobs += self._jobs(match, versions)
                summary.matches_resumed += 1
        if jobs:
            self.log.info("ladder_resumed", matches=summary.matches_resumed)
        return jobs

    def _fill(self, summary: LadderSummary, resumed: list[MatchJob] | None = None) -> None:
        """Schedule matches until ``concurrency`` are in play and ``ahead`` more are queued
        (or nobody can be paired); ``resumed`` go first."""
        jobs: list[MatchJob] = list(resumed or ())
        keep = self.settings.max_repeat
        if self._history is None:  # every ladder match, read once a run
            self._history = ladder_history(self.store, self.tournament_id, recent=keep)
            self._bot_of = version_bots(self.store)
            self._owner_of = bot_owners(self.store)
        usage = ladder_usage(self.store, self.tournament_id)  # as each stored game charged it
        config, _ = ladder_settings(self.store, self.tournament_id)
        while len(self._open_matches) < self.concurrency + self.ahead:
            ratings = active_entrants(  # new versions come, withdrawn ones go
                ladder_ratings(self.store), self.settings.entrants_per_user
            )
            self._bot_of.update((r.version_id, r.bot_id) for r in ratings)
            self._owner_of.update((r.bot_id, r.owner) for r in ratings)
            if frozenset(usage_key(r.bot_id, r.owner) for r in ratings) != self._present:
                # an owner joined or left: a joining one starts from the least-used's time
                self._lifts, self._present = join_owners(self.store, self.tournament_id)
            in_play: dict[int, int] = {}
            for versions in self._open_matches.values():
                for version in versions:
                    in_play[version] = in_play.get(version, 0) + 1
            number = next_ladder_round(self.store, self.tournament_id)
            state = rated_contenders(
                ratings, self._history, in_play, self._bot_of, self._owner_of,
                usage, config.games_per_match, self._lifts,
            )  # fmt: skip
            chosen = pick(state, number, self.settings.policy)
            if chosen is None:
                break
            match = self._store_match(number, chosen.first, chosen.second)
            kept = self._history
            for version, opponent in ((chosen.first, chosen.second), (chosen.second, chosen.first)):
                before = kept.get(version, LadderHistory())
                kept[version] = history_after(before, opponent, match.round, keep)
            jobs += self._jobs(match, (chosen.first, chosen.second))
            summary.matches_scheduled += 1
            self.log.info(
                "ladder_match_scheduled", match_id=match.id, first=match.first,
                second=match.second, placement=chosen.placement,
            )  # fmt: skip
        if jobs:
            self.executor.submit(jobs)

    def _store_match(self, round_no: int, first_id: int, second_id: int) -> MatchRow:
        """Store match number ``round_no`` (this runner alone adds matches: it holds the lease)."""
        config, _ = ladder_settings(self.store, self.tournament_id)
        seed = match_seed(config.seed, round_no, first_id, second_id)
        match_id = add_ladder_match(
            self.store, self.tournament_id, first_id, second_id,
            games=config.games_per_match, seed=seed,
        )  # fmt: skip
        return next(
            m for m in unfinished_matches(self.store, self.tournament_id) if m.id == match_id
        )

    def _jobs(self, match: MatchRow, versions: tuple[int, int]) -> list[MatchJob]:
        """``match``'s jobs (one per half), now open; none when a bot's stored copy is
        gone: that bot is withdrawn (the others play on) and the match is left unplayed."""
        config, _ = ladder_settings(self.store, self.tournament_id)
        try:
            jobs = match_jobs(
                self.store, match, config, limits=self.limits, unsafe=self.unsafe,
                live=self.live is not None, paired_remote=True, anonymous=True,
            )  # fmt: skip
        except MissingBotCopyError as missing:
            self._withdraw_missing(match, missing)
            return []
        self._open_matches[match.id] = versions
        self._open_jobs.update(job.key for job in jobs)
        return jobs

    def _withdraw_missing(self, match: MatchRow, missing: MissingBotCopyError) -> None:
        """Take the bot whose stored copy is gone or changed off the ladder, saying why (its
        games would each be its crash, rated as its loss). ``arena ladder return BOT`` once the
        copy is restored, or a new version, brings it back; ``match`` stays unplayed, as
        a withdrawn version's unfinished match does."""
        set_withdrawn(self.store, missing.bot, True, by="arena")
        self.log.error(
            "ladder_bot_withdrawn", bot=missing.bot, version=missing.version, match_id=match.id,
            reason=f"the stored copy of {missing.bot} version {missing.version}"
            f" {missing.problem}: restore it, then `arena ladder return {missing.bot}`",
        )  # fmt: skip

    def _collect(self, summary: LadderSummary) -> None:
        """Handle what the executor reports for up to ``POLL_S``, until a match ends."""
        if not self._open_jobs:  # nobody to pair yet: wait for a submission
            self._stop.wait(POLL_S)
            return
        event = self.executor.next_event(POLL_S)
        ended = False
        while event is not None:
            if isinstance(event, GameFinished):
                self._store_game(event, summary)
            elif isinstance(event, LiveBatch):
                if self.live is not None:
                    self.live.batch(event.match_id, event.payloads)
            elif isinstance(event, JobDone):
                ended = self._job_done(event, summary) or ended
            elif not isinstance(event, WorkerStarted):  # a seat offer: no remote bots here
                self.log.warning("ladder_event_ignored", event=type(event).__name__)
            if ended:
                break
            event = self.executor.next_event(0)
        if self.live is not None:
            self.live.flush()

    def _store_game(self, event: GameFinished, summary: LadderSummary) -> None:
        if self.live is not None:
            self.live.stored(event.match_id, event.report.index)
        game_id = store_game(self.store, event.match_id, event.report)
        if game_id is None:
            summary.games_discarded += 1
            return
        summary.games_recorded += 1
        self.log.info("game_recorded", match_id=event.match_id, game_id=game_id)
        if self.on_game is not None:
            self.on_game(game_id)

    def _job_done(self, done: JobDone, summary: LadderSummary) -> bool:
        """Forget a finished job; whether its match is over (a slot is free)."""
        self._open_jobs.discard(done.key)
        if done.error is not None:
            summary.failed_matches[done.match_id] = done.error
            self.log.error("ladder_match_failed", match_id=done.match_id, error=done.error)
            if self.live is not None:
                self.live.drop_match(done.match_id)
        if any(key[0] == done.match_id for key in self._open_jobs):
            return False
        self._open_matches.pop(done.match_id, None)
        return True
