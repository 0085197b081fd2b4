"""``kahuna.v1.ArenaService``: a thin gRPC layer over arena.store and the runner.

Authentication: ``authorization: Bearer <token>`` metadata on every call
(UNAUTHENTICATED when missing or unknown). Roles: the admin may do
everything; a user submits bots (which they then own), downloads only their
own bots' files, and reads bots, leaderboards, tournaments and finished games.
Creating/starting tournaments and creating tokens are the admin's.
Remote bots: a user registers a bot they host (RegisterRemoteBot) and waits
for its seats (WaitForSeats, their own bots only); the bot then plays through
the referee gateway on the same port (arena.server.gateway). WatchGame shows
the admin a game live; anyone else gets a game's record once it is over.
Every refusal is a gRPC status with a message naming the problem; nothing is
stored unless the whole request is valid.
"""

from __future__ import annotations

import asyncio
import io
import json
import tarfile
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import grpc

from arena.logs import get_logger
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.referee import BotConfigError, load_bot
from arena.server.archive import (
    ArchiveError,
    ArchiveTooLargeError,
    unpack_bot_archive,
    upload_directory,
)
from arena.server.offloop import LoopInbox, blocking, off_loop
from arena.server.seats import PublishedSeat, SeatHub
from arena.server.tournament_runner import ProgressEvent, TournamentRunner
from arena.server.watch import check_game, finished_record, follow_live
from arena.store import (
    INTERRUPTED,
    AlreadyExistsError,
    BotVersionRow,
    LeaseHeldError,
    NotFoundError,
    Principal,
    Store,
    StoreError,
    TournamentConfig,
    TournamentLease,
    TournamentRow,
    add_bot_version,
    bot_spec,
    check_token,
    create_token,
    create_tournament,
    game_record,
    game_stderr,
    get_bot,
    get_game,
    get_tournament,
    get_version,
    leaderboard,
    lease_holder,
    list_bots,
    list_live_games,
    list_tournaments,
    register_remote_bot,
    tournament_standings,
)
from arena.store.remote import REMOTE_RUNTIME

FORMAT_NAMES = {
    pb.TOURNAMENT_FORMAT_ROUND_ROBIN: "round_robin",
    pb.TOURNAMENT_FORMAT_SWISS: "swiss",
}
FORMAT_VALUES = {name: value for value, name in FORMAT_NAMES.items()}
ARCHIVE_NAMES = {pb.ARCHIVE_FORMAT_TAR_GZ: "tar.gz", pb.ARCHIVE_FORMAT_ZIP: "zip"}
WATCH_POLL_S = 0.5

SmokeCheck = Callable[[Path], str | None]  # bot dir -> why it failed, or None


@dataclass
class ServiceOptions:
    """How the service runs tournaments and checks submitted bots."""

    concurrency: int | None = None
    pin_cpus: bool = True  # each concurrent match on its own CPUs (arena.server.cpu_placement)
    unsafe: bool = False
    smoke_check: SmokeCheck | None = None  # None: no smoke match (tests of refusals only)
    paired_remote: bool = False  # pair deals with remote bots too (`arena serve --paired-remote`)


@dataclass
class _Hub:
    """Progress events of running tournaments, fanned out to watchers."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    watchers: dict[int, list[LoopInbox[ProgressEvent]]] = field(default_factory=dict)
    running: dict[int, threading.Thread] = field(default_factory=dict)

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
        with self.lock:
            inboxes = list(self.watchers.get(event.tournament_id, []))
        for inbox in inboxes:
            inbox.put(event)

    def is_running(self, tournament_id: int) -> bool:
        with self.lock:
            thread = self.running.get(tournament_id)
            return thread is not None and thread.is_alive()


MAX_DETAILS_CHARS = 1000
"""Refusals echo what was asked for (a name, ...): cut so the status itself always
arrives (gRPC's default limit on received metadata is 16 KiB, and non-ASCII
details travel percent-encoded)."""


def _abort(context: grpc.ServicerContext, code: grpc.StatusCode, message: str) -> NoReturn:
    if len(message) > MAX_DETAILS_CHARS:
        cut = len(message) - MAX_DETAILS_CHARS
        message = f"{message[:MAX_DETAILS_CHARS]}... ({cut} more characters cut)"
    context.abort(code, message)
    raise AssertionError("unreachable")  # context.abort raises


class ArenaService(pb_grpc.ArenaServiceServicer):
    def __init__(self, store: Store, options: ServiceOptions | None = None) -> None:
        self.store = store
        self.options = options or ServiceOptions()
        self.hub = _Hub()
        self.seats = SeatHub(store)
        self.log = get_logger(service="arena")

    # ------------------------------------------------------------------ auth

    def _principal(self, context: grpc.ServicerContext) -> Principal:
        values = [v for k, v in context.invocation_metadata() if k == "authorization"]
        if not values:
            _abort(
                context, grpc.StatusCode.UNAUTHENTICATED, "missing 'authorization: Bearer <token>'"
            )
        scheme, _, token = str(values[0]).partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            _abort(
                context, grpc.StatusCode.UNAUTHENTICATED, "authorization must be 'Bearer <token>'"
            )
        principal = check_token(self.store, token.strip())
        if principal is None:
            _abort(context, grpc.StatusCode.UNAUTHENTICATED, "unknown token")
        return principal

    def _admin(self, context: grpc.ServicerContext) -> Principal:
        principal = self._principal(context)
        if not principal.is_admin:
            _abort(context, grpc.StatusCode.PERMISSION_DENIED, "this call needs the admin token")
        return principal

    # ------------------------------------------------------------------ bots

    def SubmitBot(
        self, request: pb.SubmitBotRequest, context: grpc.ServicerContext
    ) -> pb.SubmitBotResponse:
        principal = self._principal(context)
        if not request.archive:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "archive is empty")
        if request.format not in (pb.ARCHIVE_FORMAT_UNSPECIFIED, *ARCHIVE_NAMES):
            _abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"unknown archive format {request.format}",
            )
        with upload_directory() as work:
            # the archive's own directory: 0755 like a top-level folder it may hold, so a
            # bot zipped without one (cd bot && zip -r ../b.zip .) is world-readable too,
            # as the sandboxed bot needs; the upload directory around it stays 0700
            target = Path(work) / "archive"
            target.mkdir()
            target.chmod(0o755)
            try:
                directory = unpack_bot_archive(
                    request.archive, target, ARCHIVE_NAMES.get(request.format)
                )
                spec = load_bot(directory)
            except ArchiveTooLargeError as error:
                _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, f"archive refused: {error}")
            except (ArchiveError, BotConfigError) as error:
                _abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"bot refused: {error}")
            self._check_owner(context, principal, spec.name)
            stored = _stored_version(self.store, spec.name, spec.version)
            if stored is not None:  # the same files: nothing to check or play again
                self.log.info("bot_resubmitted", bot=stored.bot, version=stored.version)
                return pb.SubmitBotResponse(bot=_bot_pb(stored), created=False)
            if self.options.smoke_check is not None and spec.runtime != REMOTE_RUNTIME:
                reason = self.options.smoke_check(directory)
                if reason is not None:
                    _abort(context, grpc.StatusCode.FAILED_PRECONDITION, f"bot refused: {reason}")
            try:
                row, created = add_bot_version(self.store, spec, owner=principal.user)
            except StoreError as error:
                _abort(context, grpc.StatusCode.PERMISSION_DENIED, str(error))
        self.log.info("bot_submitted", bot=row.bot, version=row.version, user=principal.user)
        return pb.SubmitBotResponse(bot=_bot_pb(row), created=created)

    def _check_owner(self, context: grpc.ServicerContext, principal: Principal, name: str) -> None:
        try:
            owner = get_bot(self.store, name).owner
        except NotFoundError:
            return
        if not principal.is_admin and owner != principal.user:
            _abort(
                context, grpc.StatusCode.PERMISSION_DENIED, f"bot {name!r} belongs to another user"
            )

    def ListBots(
        self, request: pb.ListBotsRequest, context: grpc.ServicerContext
    ) -> pb.ListBotsResponse:
        self._principal(context)
        return pb.ListBotsResponse(bots=[_bot_pb(b.latest) for b in list_bots(self.store)])

    def GetBotFiles(
        self, request: pb.GetBotFilesRequest, context: grpc.ServicerContext
    ) -> pb.GetBotFilesResponse:
        principal = self._principal(context)
        try:
            owner = get_bot(self.store, request.name).owner
            spec = bot_spec(self.store, request.name, request.version or None)
        except NotFoundError as error:
            _abort(context, grpc.StatusCode.NOT_FOUND, str(error))
        if not principal.is_admin and owner != principal.user:
            _abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                f"bot {request.name!r} belongs to another user",
            )
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            archive.add(spec.directory, arcname=spec.name)
        return pb.GetBotFilesResponse(version=spec.version, archive=buffer.getvalue())

    def GetLeaderboard(
        self, request: pb.GetLeaderboardRequest, context: grpc.ServicerContext
    ) -> pb.GetLeaderboardResponse:
        self._principal(context)
        rows = leaderboard(self.store, latest_only=request.latest_only)
        return pb.GetLeaderboardResponse(
            entries=[pb.LeaderboardEntry(rank=r.rank, bot=_bot_pb(r.entry)) for r in rows]
        )

    def GetGameRecord(
        self, request: pb.GetGameRecordRequest, context: grpc.ServicerContext
    ) -> pb.GetGameRecordResponse:
        principal = self._principal(context)
        if request.game_id <= 0:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "game_id must be a positive game id")
        try:
            record = game_record(self.store, request.game_id)
            game = get_game(self.store, request.game_id)
            tails = game_stderr(self.store, request.game_id)
        except NotFoundError:
            _abort(context, grpc.StatusCode.NOT_FOUND, f"no finished game {request.game_id}")
        private = [  # a bot's stderr is its owner's (and the admin's), never the opponent's
            pb.BotStderr(seat=seat, bot=game.bots[seat], text=text)
            for seat, text in sorted(tails.items())
            if principal.is_admin or get_bot(self.store, game.bots[seat]).owner == principal.user
        ]
        return pb.GetGameRecordResponse(record_json=json.dumps(record), stderr=private)

    # ----------------------------------------------------------- tournaments

    def CreateUserToken(
        self, request: pb.CreateUserTokenRequest, context: grpc.ServicerContext
    ) -> pb.CreateUserTokenResponse:
        self._admin(context)
        try:
            token = create_token(self.store, request.user, "user")
        except StoreError as error:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        return pb.CreateUserTokenResponse(token=token)

    def CreateTournament(
        self, request: pb.CreateTournamentRequest, context: grpc.ServicerContext
    ) -> pb.CreateTournamentResponse:
        self._admin(context)
        if request.format not in FORMAT_NAMES:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "format must be ROUND_ROBIN or SWISS")
        config = TournamentConfig(
            games_per_match=request.games_per_match or 2, rounds=request.rounds or None,
            seed=request.seed, action_ms=request.action_ms or 2000,
            bank_ms=request.bank_ms or 30000,
        )  # fmt: skip
        try:
            tournament = create_tournament(
                self.store, request.name, FORMAT_NAMES[request.format], list(request.bots), config
            )
        except AlreadyExistsError as error:
            _abort(context, grpc.StatusCode.ALREADY_EXISTS, str(error))
        except NotFoundError as error:
            _abort(context, grpc.StatusCode.NOT_FOUND, str(error).strip("'\""))
        except StoreError as error:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        if request.start:
            self._start(context, tournament)
        return pb.CreateTournamentResponse(
            tournament=_tournament_pb(self._tournament(context, tournament.id))
        )

    def StartTournament(
        self, request: pb.StartTournamentRequest, context: grpc.ServicerContext
    ) -> pb.StartTournamentResponse:
        self._admin(context)
        tournament = self._tournament(context, request.name)
        if tournament.status != "finished":
            self._start(context, tournament)
        return pb.StartTournamentResponse(
            tournament=_tournament_pb(self._tournament(context, tournament.id))
        )

    def ListTournaments(
        self, request: pb.ListTournamentsRequest, context: grpc.ServicerContext
    ) -> pb.ListTournamentsResponse:
        self._principal(context)
        rows = sorted(list_tournaments(self.store), key=lambda row: row.id, reverse=True)
        return pb.ListTournamentsResponse(tournaments=[_tournament_pb(row) for row in rows])

    def _tournament(self, context: grpc.ServicerContext, ref: int | str) -> TournamentRow:
        if isinstance(ref, str) and not ref:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "name is empty")
        try:
            return get_tournament(self.store, ref)
        except NotFoundError as error:
            _abort(context, grpc.StatusCode.NOT_FOUND, str(error))

    def _start(self, context: grpc.ServicerContext, tournament: TournamentRow) -> None:
        """Run the tournament in a thread; already running here: nothing to do.

        The runner lease is taken here, before answering: a tournament another
        process runs (`arena tournament resume`, another server) is refused
        with FAILED_PRECONDITION naming that process.
        """
        with self.hub.lock:
            thread = self.hub.running.get(tournament.id)
            if thread is not None and thread.is_alive():
                return
            runner = TournamentRunner(
                self.store, tournament.id, concurrency=self.options.concurrency,
                unsafe=self.options.unsafe, on_progress=self.hub.publish,
                on_seat_offer=self.seats.publish, pin_cpus=self.options.pin_cpus,
                paired_remote=self.options.paired_remote,
            )  # fmt: skip
            try:
                lease = runner.take_lease()
            except LeaseHeldError as error:
                _abort(context, grpc.StatusCode.FAILED_PRECONDITION, str(error))
            thread = threading.Thread(
                target=self._run,
                args=(runner, lease),
                name=f"tournament-{tournament.id}",
                daemon=True,
            )
            self.hub.running[tournament.id] = thread
            thread.start()

    def _run(self, runner: TournamentRunner, lease: TournamentLease) -> None:
        try:
            runner.run(lease)
        except Exception:
            self.log.exception("tournament_crashed", tournament_id=runner.tournament_id)

    async def WatchTournament(
        self, request: pb.WatchTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.WatchTournamentResponse]:
        # a stream holds no thread: checks and store reads run off the event loop
        tournament = await blocking(context, self._watched_tournament, request)
        inbox = self.hub.subscribe(tournament.id, asyncio.get_running_loop())
        try:
            yield await off_loop(self._watch_status, tournament.id)
            while True:  # until the tournament ends; a watcher leaving cancels the stream
                event = await inbox.get(WATCH_POLL_S)
                if event is None:
                    if not self.hub.is_running(tournament.id):
                        yield await off_loop(self._watch_status, tournament.id)
                        return
                    continue
                yield await off_loop(
                    self._watch_message, tournament.id, event.message, event.game_id or 0
                )
                if event.message in ("finished", "stopped"):
                    return
        finally:
            self.hub.unsubscribe(tournament.id, inbox)

    def _watched_tournament(
        self, context: grpc.ServicerContext, request: pb.WatchTournamentRequest
    ) -> TournamentRow:
        self._principal(context)
        return self._tournament(context, request.name)

    def _watch_status(self, tournament_id: int) -> pb.WatchTournamentResponse:
        return self._watch_message(tournament_id, self._status_message(tournament_id))

    def _status_message(self, tournament_id: int) -> str:
        """Where a tournament stands, for people: who runs it, or how to resume it."""
        tournament = get_tournament(self.store, tournament_id)
        if tournament.status == INTERRUPTED:
            return (
                "tournament is interrupted: no process is running it; resume it with"
                f" StartTournament or `arena tournament resume {tournament.name}`"
            )
        if tournament.status == "running" and not self.hub.is_running(tournament_id):
            holder = lease_holder(self.store, tournament_id)
            pid = "unknown" if holder is None or holder.pid is None else holder.pid
            return (
                f"tournament is running in another process (pid {pid}):"
                " its progress is not streamed here"
            )
        return f"tournament is {tournament.status}"

    def _watch_message(
        self, tournament_id: int, message: str, game_id: int = 0
    ) -> pb.WatchTournamentResponse:
        tournament = get_tournament(self.store, tournament_id)
        standings = [
            pb.Standing(
                rank=s.rank,
                bot=s.bot,
                points=s.points,
                games=s.games,
                wins=s.wins,
                draws=s.draws,
                losses=s.losses,
                byes=s.byes,
                buchholz=s.buchholz,
                sonneborn_berger=s.sonneborn_berger,
            )
            for s in tournament_standings(self.store, tournament_id)
        ]
        return pb.WatchTournamentResponse(
            tournament=_tournament_pb(tournament), message=message, game_id=game_id,
            standings=standings,
        )  # fmt: skip

    # ----------------------------------------------------------- remote bots

    def RegisterRemoteBot(
        self, request: pb.RegisterRemoteBotRequest, context: grpc.ServicerContext
    ) -> pb.RegisterRemoteBotResponse:
        principal = self._principal(context)
        try:
            row, created = register_remote_bot(
                self.store, request.name, owner=principal.user, description=request.description
            )
        except StoreError as error:
            code = grpc.StatusCode.INVALID_ARGUMENT
            if "another user" in str(error):
                code = grpc.StatusCode.PERMISSION_DENIED
            _abort(context, code, f"remote bot refused: {error}")
        self.log.info("remote_bot_registered", bot=row.bot, version=row.version, user=row.owner)
        return pb.RegisterRemoteBotResponse(bot=_bot_pb(row), created=created)

    async def WaitForSeats(
        self, request: pb.WaitForSeatsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.WaitForSeatsResponse]:
        # a stream holds no thread: checks and store reads run off the event loop
        await blocking(context, self._check_seats_request, request)
        inbox = self.seats.subscribe(request.bot, asyncio.get_running_loop())
        try:
            for seat in await off_loop(self.seats.open_seats, request.bot):
                yield _seat_pb(seat)
            while True:  # a connector leaving cancels the stream
                offered = await inbox.get()
                if offered is not None:
                    yield _seat_pb(offered)
        finally:
            self.seats.unsubscribe(request.bot, inbox)

    def _check_seats_request(
        self, context: grpc.ServicerContext, request: pb.WaitForSeatsRequest
    ) -> None:
        principal = self._principal(context)
        if not request.bot:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "bot is empty")
        try:
            owner = get_bot(self.store, request.bot).owner
            runtime = bot_spec(self.store, request.bot).runtime
        except NotFoundError as error:
            _abort(context, grpc.StatusCode.NOT_FOUND, str(error))
        if not principal.is_admin and owner != principal.user:
            _abort(
                context, grpc.StatusCode.PERMISSION_DENIED,
                f"bot {request.bot!r} belongs to another user",
            )  # fmt: skip
        if runtime != REMOTE_RUNTIME:
            _abort(
                context, grpc.StatusCode.FAILED_PRECONDITION,
                f"bot {request.bot!r} is not a remote bot (RegisterRemoteBot makes one)",
            )  # fmt: skip

    # ------------------------------------------------------------ live games

    def ListLiveGames(
        self, request: pb.ListLiveGamesRequest, context: grpc.ServicerContext
    ) -> pb.ListLiveGamesResponse:
        self._admin(context)
        games = []
        for live in list_live_games(self.store):
            match = live.head.get("match")
            bots = match.get("bots", []) if isinstance(match, dict) else []
            names = [str(b.get("name", "")) for b in bots if isinstance(b, dict)]
            game = pb.LiveGame(
                match_id=live.match_id, game_index=live.game_index,
                tournament_id=live.tournament_id, bots=names, actions=live.actions,
            )  # fmt: skip
            games.append(game)
        return pb.ListLiveGamesResponse(games=games)

    async def WatchGame(
        self, request: pb.WatchGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.WatchGameResponse]:
        # a stream holds no thread: checks and store reads run off the event loop
        record = await blocking(context, self._game_to_watch, request)
        if record is not None:
            yield record
            return
        async for message in follow_live(self.store, request.match_id, request.game_index):
            yield message

    def _game_to_watch(
        self, context: grpc.ServicerContext, request: pb.WatchGameRequest
    ) -> pb.WatchGameResponse | None:
        """The record a user may watch; None for the admin, who follows the game live."""
        principal = self._principal(context)
        if request.match_id <= 0:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "match_id must be a positive id")
        refused = check_game(self.store, request.match_id, request.game_index)
        if refused is not None:
            _abort(context, grpc.StatusCode.NOT_FOUND, refused.message)
        if principal.is_admin:
            return None
        record = finished_record(self.store, request.match_id, request.game_index)
        if record is None:
            _abort(
                context, grpc.StatusCode.PERMISSION_DENIED,
                f"game {request.game_index} of match {request.match_id} is not over:"
                " only the admin may watch a game live",
            )  # fmt: skip
        return record


def _seat_pb(seat: PublishedSeat) -> pb.WaitForSeatsResponse:
    offer = seat.offer
    return pb.WaitForSeatsResponse(
        bot=offer.bot, version=offer.version, match_id=offer.referee_match,
        seat_token=seat.token, deadline_unix_ms=offer.expires_at_ms,
        tournament_match_id=offer.match_id or 0,
    )  # fmt: skip


def _bot_pb(row: BotVersionRow) -> pb.BotVersion:
    return pb.BotVersion(
        name=row.bot, version=row.version, owner=row.owner or "", mu=row.mu, sigma=row.sigma,
        conservative=row.conservative, games=row.games, wins=row.wins, draws=row.draws,
        losses=row.losses, timeout_rate=row.rate(row.timeouts), crash_rate=row.rate(row.crashes),
        illegal_action_rate=row.rate(row.illegal_actions),
    )  # fmt: skip


def _tournament_pb(row: TournamentRow) -> pb.Tournament:
    return pb.Tournament(
        id=row.id, name=row.name, format=FORMAT_VALUES[row.format], status=row.status,
        entrants=list(row.entrants), games_played=row.games_played,
        games_scheduled=row.games_scheduled,
    )  # fmt: skip


__all__ = ["ArenaService", "ServiceOptions"]


def _stored_version(store: Store, name: str, version: str) -> BotVersionRow | None:
    """The stored row of exactly this version of ``name``, if there is one."""
    try:
        row = get_version(store, name, version)
    except NotFoundError:
        return None
    return row if row.version == version else None
