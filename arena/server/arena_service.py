"""``kahuna.v1.ArenaService``: a thin gRPC layer over arena.store and the runner.

Authentication: ``authorization: Bearer <token>`` metadata on every call
(UNAUTHENTICATED when missing or unknown). Roles: the admin may do
everything; a user submits bots (which they then own), downloads only their
own bots' files, and reads bots, leaderboards, tournaments and finished games.
Creating, starting and stopping tournaments and creating, listing and revoking
tokens are the admin's (never revoking the token of the call itself: that would lock
the caller out).
Remote bots: a user registers a bot they host (RegisterRemoteBot) and waits
for its seats (WaitForSeats, their own bots only); the bot then plays through
the referee gateway on the same port (arena.server.gateway). WatchGame shows
the admin a game live; anyone else gets a game's record once it is over and
every game of its deal is played (``arena.store.revealed_record``; until then
FAILED_PRECONDITION names the game it waits for, in WatchGame and GetGameRecord).
WatchTournament follows a tournament whoever plays it: this server's runner,
or another process through the games it stores (arena.server.follow).
ExportGames streams only such public games, by the same rules (arena.server.exports).
Every refusal is a gRPC status with a message naming the problem; nothing is
stored unless the whole request is valid. Submissions and registrations count
against each user's limits (arena.server.quotas: RESOURCE_EXHAUSTED naming the
limit, with when to retry); the admin reads and sets them (GetLimits, SetLimit).
"""

from __future__ import annotations

import asyncio
import collections
import functools
import io
import itertools
import json
import os
import tarfile
import time
from collections.abc import AsyncIterator, Callable, Hashable, Iterator
from concurrent import futures
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from arena.bots.archive import upload_directory
from arena.logs import get_logger
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.server.auth import (
    abort,
    authenticated,
    authorization_of,
    cut_details,
    principal_of,
)
from arena.server.convert import (
    ARCHIVE_NAMES,
    FORMAT_NAMES,
    audit_pb,
    bot_pb,
    conformance_to_pb,
    interval_pb,
    live_game_pb,
    seat_pb,
    standing_pb,
    token_pb,
    tournament_pb,
)
from arena.server.exports import export_page
from arena.server.follow import follow_stored, latest_game_id
from arena.server.ladder_service import LadderMethods
from arena.server.offloop import blocking, off_loop
from arena.server.quotas import (
    LimitExceeded,
    Quotas,
    UserLimits,
    abort_past_limit,
    refuse_past_limit,
)
from arena.server.seats import SeatHub
from arena.server.submissions import (
    REMOTE_TOML_BYTES,
    TAKEN_REMOTE_NAME,
    RefusalKind,
    SmokeCheck,
    SubmissionRefused,
    Submitted,
    name_refusal,
    submit_bot,
)
from arena.server.supervisor import TournamentSupervisor
from arena.server.uploads import UPLOAD_DEADLINE_S, UploadRefused, receive_upload
from arena.server.watch import check_game, finished_record, follow_live
from arena.store import (
    INTERRUPTED,
    AlreadyExistsError,
    LeaseHeldError,
    NotFoundError,
    NotOwnerError,
    Principal,
    RecordWithheldError,
    Store,
    StoreError,
    TournamentFormat,
    TournamentRow,
    TournamentStatus,
    bot_spec,
    create_token,
    find_game,
    game_stderr,
    get_bot,
    get_game,
    get_tournament,
    leaderboard,
    lease_holder,
    list_bots,
    list_live_games,
    list_tokens,
    list_tournaments,
    register_remote_bot,
    require_owner,
    revealed_record,
    revealed_secret,
    revoke_tokens,
)
from arena.store.kept import KeptAnswers
from arena.store.models import SprtConfig
from arena.store.play import PLAY_NOT_RESUMED, is_play_tournament, only_its_table
from arena.store.remote import REMOTE_RUNTIME
from arena.store.spectator import first_event_after, game_finished_at, tournament_last_finish
from arena.store.tokens import (
    MAX_LIFETIME,
    SparedTokenError,
    check_user_name,
    token_digest,
)
from arena.tournament.execution.executor import MatchExecutor
from arena.tournament.orchestration.runner import ProgressKind, TournamentRunner
from arena.tournament.policy.audit import AuditReport, audit_tournament
from arena.tournament.policy.audit_bundle import BundlePart, bundle_parts
from arena.tournament.policy.bundle_digest import FinishedDigests
from arena.tournament.policy.config import TournamentError, build_config, build_sprt
from arena.tournament.policy.results import leaderboard_intervals, version_key
from arena.tournament.policy.rounds import create_tournament
from arena.tournament.policy.sprt_format import sprt_progress
from arena.tournament.view.committed import shown_parameters
from arena.tournament.view.ladder_view import entrants_shown, public_leaderboard
from arena.tournament.view.spectator_delay import NOT_PUBLIC, DelayLine
from arena.tournament.view.table import tournament_table

WATCH_POLL_S = 0.5
STOP_WAIT_S = 30.0  # StopTournament waits this long for the runner's matches to end
AUDIT_KEEP_S = 30.0
"""An AuditTournament answer is kept this long for the tournament as it was (status and
games): the audit replays every game, so a flood of calls costs one audit, not one each."""

_REFUSAL_CODES = {
    RefusalKind.EMPTY: grpc.StatusCode.INVALID_ARGUMENT,
    RefusalKind.UNKNOWN_FORMAT: grpc.StatusCode.INVALID_ARGUMENT,
    RefusalKind.TOO_LARGE: grpc.StatusCode.RESOURCE_EXHAUSTED,
    RefusalKind.BAD_BOT: grpc.StatusCode.INVALID_ARGUMENT,
    RefusalKind.FAILED_CHECK: grpc.StatusCode.FAILED_PRECONDITION,
    RefusalKind.NOT_ALLOWED: grpc.StatusCode.PERMISSION_DENIED,
}


@dataclass
class ServiceOptions:
    """How the service runs tournaments and checks submitted bots."""

    concurrency: int | None = None
    # each concurrent match on its own CPUs (arena.tournament.execution.cpu_placement)
    pin_cpus: bool = True
    unsafe: bool = False
    smoke_check: SmokeCheck | None = None  # None: no smoke match (tests of refusals only)
    paired_remote: bool = False  # pair deals with remote bots too (`arena serve --paired-remote`)
    # A new executor for each tournament run (`arena serve --ray`: on a Ray cluster); None:
    # the runner's local one
    new_executor: Callable[[], MatchExecutor] | None = None
    limits: UserLimits = field(default_factory=UserLimits)  # each user's, by default
    # What anyone but the admin sees of games (records, leaderboard, tournaments, the ladder,
    # WatchTournament's events) is the arena as it was this long ago (`--spectator-delay-s`).
    spectator_delay_s: float = 0.0


M = TypeVar("M", bound=Message)


def _same(message: M) -> M:
    return message


class ArenaService(LadderMethods, pb_grpc.ArenaServiceServicer):
    """Each method: parse the request, call one function, map its refusal to a status."""

    def __init__(self, store: Store, options: ServiceOptions | None = None) -> None:
        self.store = store
        self.options = options or ServiceOptions()
        self.tournaments = TournamentSupervisor()
        self.seats = SeatHub(store)
        self.quotas = Quotas(store, self.options.limits)
        self.audits = futures.ThreadPoolExecutor(1, thread_name_prefix="arena-audit")
        """Audits run here one at a time (CPU-bound: the API's threads and the admin's calls
        never wait behind a crowd of them); a call waiting for one holds no API thread."""
        self.digests = FinishedDigests()
        self._audit_reports: KeptAnswers[tuple[int, str, int], AuditReport] = KeptAnswers(
            AUDIT_KEEP_S, max_kept=256
        )
        self.log = get_logger(service="arena")
        self.delay: DelayLine[Message] = DelayLine(
            self.options.spectator_delay_s, functools.partial(first_event_after, store)
        )

    def public(self, context: grpc.ServicerContext, principal: Principal, view: Hashable,
               compute: Callable[[], M]) -> M:  # fmt: skip
        """``compute()``'s answer, for anyone but the admin as of the spectator delay's cut
        (UNAVAILABLE, saying when to come back, while no answer that old is kept)."""
        if principal.is_admin or self.delay.delay_s == 0:
            return compute()
        found = self.delay.answer(view, compute)
        if found is None:
            abort(
                context, grpc.StatusCode.UNAVAILABLE,
                f"{NOT_PUBLIC}: you see the arena as it was {self.delay.delay_s:g} s ago, and"
                " games have started or ended since this was first asked for; retry later",
            )  # fmt: skip
        return found  # type: ignore[return-value]

    def ended_after_cut(self, principal: Principal, game_id: int) -> bool:
        """Whether game ``game_id`` ended too recently for ``principal`` to see it."""
        if principal.is_admin or self.delay.delay_s == 0:
            return False
        ended = game_finished_at(self.store, game_id)
        return ended is not None and ended > self.delay.cut()

    # ------------------------------------------------------------------ bots

    async def SubmitBot(
        self, request: pb.SubmitBotRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.SubmitBotResponse:
        principal = await blocking(context, self._submitter, request)
        return await self._submitted(
            context, principal, lambda: request.archive, ARCHIVE_NAMES.get(request.format)
        )

    async def UploadBot(
        self, requests: AsyncIterator[pb.UploadBotRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> pb.UploadBotResponse:  # fmt: skip
        """SubmitBot with the archive in chunks (arena.server.uploads): the token and the
        user's limits are checked before any message is read."""
        principal = await blocking(context, lambda checked: principal_of(self.store, checked))
        try:
            room = await off_loop(self.quotas.upload_room, principal)
            self.quotas.begin_upload(principal)  # no await before the try: counted, released
        except LimitExceeded as exceeded:
            await abort_past_limit(context, exceeded, f"user:{principal.user}")
        try:  # the user's upload counted until its check is over (checks_per_user)
            with upload_directory() as work:
                spool = Path(work) / "archive.upload"
                try:
                    async with asyncio.timeout(UPLOAD_DEADLINE_S):
                        archive_format = await receive_upload(requests, spool, room)
                except TimeoutError:
                    await context.abort(
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        f"the upload took more than {UPLOAD_DEADLINE_S:g} s, the limit for"
                        " sending an archive (UPLOAD_DEADLINE_S)",
                    )
                except UploadRefused as refused:
                    await context.abort(refused.code, refused.message)
                except LimitExceeded as exceeded:
                    await abort_past_limit(context, exceeded, f"user:{principal.user}")
                done = await self._submitted(
                    context, principal, spool.read_bytes, ARCHIVE_NAMES.get(archive_format)
                )
        finally:
            self.quotas.end_upload(principal)
        return pb.UploadBotResponse.FromString(done.SerializeToString())  # the same fields

    async def _submitted(
        self, context: grpc.aio.ServicerContext[Any, Any], principal: Principal,
        archive: Callable[[], bytes], archive_format: str | None,
    ) -> pb.SubmitBotResponse:  # fmt: skip
        """Check and store ``archive()`` (read on the check pool, never on the API's
        threads) as ``principal``'s; the one path of SubmitBot and UploadBot."""

        def submit() -> Submitted:
            return submit_bot(
                self.store, principal, archive(), archive_format,
                self.options.smoke_check, self.quotas,
            )  # fmt: skip

        try:
            done = await self.quotas.run_async(principal, submit)
        except LimitExceeded as exceeded:
            await abort_past_limit(context, exceeded, f"user:{principal.user}")
        except SubmissionRefused as refused:
            await context.abort(_REFUSAL_CODES[refused.kind], cut_details(refused.message))
        response = pb.SubmitBotResponse(bot=bot_pb(done.row), created=done.created)
        if done.checked.conformance is not None:
            response.conformance.CopyFrom(conformance_to_pb(done.checked.conformance))
        return response

    def _submitter(self, context: grpc.ServicerContext, request: pb.SubmitBotRequest) -> Principal:
        principal = principal_of(self.store, context)
        known = (pb.ARCHIVE_FORMAT_UNSPECIFIED, *ARCHIVE_NAMES)
        if request.archive and request.format not in known:  # (an empty one: "is empty")
            message = f"unknown archive format {request.format}"
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, message)
        return principal

    @authenticated()
    def ListBots(
        self, request: pb.ListBotsRequest, context: grpc.ServicerContext, principal: Principal
    ) -> pb.ListBotsResponse:
        # Ratings and game counts hold game results: other users' bots as of the spectator
        # delay's cut, the caller's own at once (as the web's /api/me shows them).
        if principal.is_admin or self.delay.delay_s == 0:
            return self._list_bots()
        shown = self.public(context, principal, "bots", self._list_bots)
        own = [bot_pb(b.latest) for b in list_bots(self.store) if b.owner == principal.user]
        bots = [bot for bot in shown.bots if bot.owner != principal.user] + own
        return pb.ListBotsResponse(bots=sorted(bots, key=lambda bot: bot.name))

    def _list_bots(self) -> pb.ListBotsResponse:
        return pb.ListBotsResponse(bots=[bot_pb(b.latest) for b in list_bots(self.store)])

    @authenticated()
    def GetBotFiles(
        self, request: pb.GetBotFilesRequest, context: grpc.ServicerContext, principal: Principal
    ) -> pb.GetBotFilesResponse:
        try:
            require_owner(self.store, principal, request.name)
            spec = bot_spec(self.store, request.name, request.version or None)
        except NotFoundError as error:
            abort(context, grpc.StatusCode.NOT_FOUND, str(error))
        except NotOwnerError as error:
            abort(context, grpc.StatusCode.PERMISSION_DENIED, str(error))
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            archive.add(spec.directory, arcname=spec.name)
        return pb.GetBotFilesResponse(version=spec.version, archive=buffer.getvalue())

    @authenticated()
    def GetLeaderboard(
        self, request: pb.GetLeaderboardRequest, context: grpc.ServicerContext, principal: Principal
    ) -> pb.GetLeaderboardResponse:
        # The public board holds each bot's latest version, the bots that play no more
        # (withdrawn, or waiting behind their owner's newer bots) left out; the admin may
        # ask for every version of every bot.
        latest_only = request.latest_only or not principal.is_admin
        return self.public(context, principal, ("leaderboard", latest_only),
                           lambda: self._leaderboard(latest_only))  # fmt: skip

    def _leaderboard(self, latest_only: bool) -> pb.GetLeaderboardResponse:
        rows = public_leaderboard(self.store) if latest_only else leaderboard(self.store)
        intervals = leaderboard_intervals(self.store, rows)
        keys = [version_key(r.entry.bot, r.entry.version) for r in rows]
        return pb.GetLeaderboardResponse(
            entries=[
                pb.LeaderboardEntry(
                    rank=r.rank,
                    bot=bot_pb(r.entry),
                    interval=interval_pb(intervals.field[key]),
                    separated_from_next=apart,
                )
                for r, key, apart in zip(
                    rows, keys, intervals.separated_from_next(keys), strict=True
                )
            ]
        )

    @authenticated()
    def GetGameRecord(
        self, request: pb.GetGameRecordRequest, context: grpc.ServicerContext, principal: Principal
    ) -> pb.GetGameRecordResponse:
        if request.game_id <= 0:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, "game_id must be a positive game id")
        if self.ended_after_cut(principal, request.game_id):  # as if it were not stored yet
            abort(context, grpc.StatusCode.NOT_FOUND, f"no finished game {request.game_id}")
        try:  # a game of a deal still to be played: the admin's only (its stderr too)
            record = revealed_record(self.store, request.game_id, principal)
            game = get_game(self.store, request.game_id)
            tails = game_stderr(self.store, request.game_id)
        except NotFoundError:
            abort(context, grpc.StatusCode.NOT_FOUND, f"no finished game {request.game_id}")
        except RecordWithheldError as withheld:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, str(withheld))
        private = [  # a bot's stderr is its owner's (and the admin's), never the opponent's
            pb.BotStderr(seat=seat, bot=game.bots[seat], text=text)
            for seat, text in sorted(tails.items())
            if principal.may_act_for(get_bot(self.store, game.bots[seat]).owner)
        ]
        return pb.GetGameRecordResponse(record_json=json.dumps(record), stderr=private)

    # ----------------------------------------------------------------- limits

    @authenticated(admin=True)
    def GetLimits(
        self, request: pb.GetLimitsRequest, context: grpc.ServicerContext, principal: Principal
    ) -> pb.GetLimitsResponse:
        return pb.GetLimitsResponse(limits=self._limits_pb(context, request.user or None))

    @authenticated(admin=True)
    def SetLimit(
        self, request: pb.SetLimitRequest, context: grpc.ServicerContext, principal: Principal
    ) -> pb.SetLimitResponse:
        user = request.user or None
        try:
            self.quotas.set(request.name, None if request.clear else request.value, user)
        except (ValueError, StoreError) as error:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        self.log.info(
            "limit_set", limit=request.name, user=user or "everyone",
            value=None if request.clear else request.value,
        )  # fmt: skip
        return pb.SetLimitResponse(limits=self._limits_pb(context, user))

    def _limits_pb(self, context: grpc.ServicerContext, user: str | None) -> list[pb.Limit]:
        if user is not None:
            try:
                check_user_name(user)
            except StoreError as error:
                abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        return [
            pb.Limit(name=limit.name, value=limit.value, default_value=limit.default,
                     set_for=limit.set_for, description=limit.description)
            for limit in self.quotas.in_force(user)
        ]  # fmt: skip

    # ----------------------------------------------------------- tournaments

    @authenticated(admin=True)
    def CreateUserToken(
        self, request: pb.CreateUserTokenRequest, context: grpc.ServicerContext,
        principal: Principal,
    ) -> pb.CreateUserTokenResponse:  # fmt: skip
        if request.expires_in_s < 0:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, "expires_in_s must be 0 or more")
        most = int(MAX_LIFETIME.total_seconds())  # (a larger int64 is past any timedelta)
        if request.expires_in_s > most:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                  f"expires_in_s must be at most {most} ({MAX_LIFETIME.days} days),"
                  f" got {request.expires_in_s}")  # fmt: skip
        lifetime = timedelta(seconds=request.expires_in_s) if request.expires_in_s else None
        try:
            token = create_token(self.store, request.user, "user", lifetime=lifetime)
        except StoreError as error:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        return pb.CreateUserTokenResponse(token=token)

    @authenticated(admin=True)
    def ListUserTokens(
        self, request: pb.ListUserTokensRequest, context: grpc.ServicerContext,
        principal: Principal,
    ) -> pb.ListUserTokensResponse:  # fmt: skip
        user = request.user or None
        if user is not None:
            try:
                check_user_name(user)
            except StoreError as error:
                abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        return pb.ListUserTokensResponse(
            tokens=[token_pb(row) for row in list_tokens(self.store, user)]
        )

    @authenticated(admin=True)
    def RevokeUserToken(
        self, request: pb.RevokeUserTokenRequest, context: grpc.ServicerContext,
        principal: Principal,
    ) -> pb.RevokeUserTokenResponse:  # fmt: skip
        which = request.WhichOneof("which")
        if which is None:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                  "name the token to revoke: its id (ListUserTokens) or a user")  # fmt: skip
        if which == "id" and request.id <= 0:
            abort(context, grpc.StatusCode.NOT_FOUND, f"no token {request.id}")
        try:
            if which == "user":
                check_user_name(request.user)
            revoked = revoke_tokens(
                self.store, token_id=request.id if which == "id" else None,
                user=request.user if which == "user" else None,
                spare=_caller_digest(context),
            )  # fmt: skip
        except NotFoundError as error:
            abort(context, grpc.StatusCode.NOT_FOUND, str(error))
        except SparedTokenError as error:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, str(error))
        except StoreError as error:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        self.log.info("tokens_revoked", ids=[row.id for row in revoked], by=principal.user)
        return pb.RevokeUserTokenResponse(revoked=[token_pb(row) for row in revoked])

    @authenticated(admin=True)
    def CreateTournament(
        self, request: pb.CreateTournamentRequest, context: grpc.ServicerContext,
        principal: Principal,
    ) -> pb.CreateTournamentResponse:  # fmt: skip
        if request.format not in FORMAT_NAMES:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                  "format must be ROUND_ROBIN, SWISS, SPRT or GAUNTLET")  # fmt: skip
        try:  # proto3: 0 means "not set", the default (a bank of 0 is one: bank_ms is optional)
            config = build_config(
                games_per_match=request.games_per_match or None, rounds=request.rounds or None,
                seed=request.seed, action_ms=request.action_ms or None,
                bank_ms=request.bank_ms if request.HasField("bank_ms") else None,
                sprt=_sprt_settings(request),
            )  # fmt: skip
            tournament = create_tournament(
                self.store, request.name, FORMAT_NAMES[request.format], list(request.bots), config,
                paired_remote=self.options.paired_remote,
            )
        except AlreadyExistsError as error:
            abort(context, grpc.StatusCode.ALREADY_EXISTS, str(error))
        except NotFoundError as error:
            abort(context, grpc.StatusCode.NOT_FOUND, str(error).strip("'\""))
        except (StoreError, TournamentError) as error:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        if request.start:
            self._start(context, tournament)
        return pb.CreateTournamentResponse(tournament=self._started_pb(context, tournament.id))

    @authenticated(admin=True)
    def StartTournament(
        self, request: pb.StartTournamentRequest, context: grpc.ServicerContext,
        principal: Principal,
    ) -> pb.StartTournamentResponse:  # fmt: skip
        tournament = self._tournament(context, request.name)
        if tournament.format is TournamentFormat.LADDER:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION,
                  f"{tournament.name!r} is a ladder: arena serve --ladder runs it")  # fmt: skip
        if tournament.status is not TournamentStatus.FINISHED and is_play_tournament(
            self.store, tournament.id
        ):  # its runner refuses it too: said here, not in a thread's log
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, only_its_table(tournament.name))
        if tournament.status is not TournamentStatus.FINISHED:
            self._start(context, tournament)
        return pb.StartTournamentResponse(tournament=self._started_pb(context, tournament.id))

    def _started_pb(self, context: grpc.ServicerContext, tournament_id: int) -> pb.Tournament:
        """The tournament as this server now runs it: running once its thread started,
        though the runner has not stored so yet (the reply read 'created' after a start)."""
        row = self._tournament(context, tournament_id)
        if row.status is TournamentStatus.CREATED and self.tournaments.is_running(tournament_id):
            row = replace(row, status=TournamentStatus.RUNNING)
        return self._tournament_pb(row)

    @authenticated(admin=True)
    def StopTournament(
        self, request: pb.StopTournamentRequest, context: grpc.ServicerContext,
        principal: Principal,
    ) -> pb.StopTournamentResponse:  # fmt: skip
        tournament = self._tournament(context, request.name)
        ended = self.tournaments.stop(
            tournament.id, f"stopped by the admin ({principal.user}) through StopTournament",
            STOP_WAIT_S,
        )  # fmt: skip
        if ended is None:
            where = self._status_message(tournament.id)
            abort(context, grpc.StatusCode.FAILED_PRECONDITION,
                  f"{tournament.name!r} is not running in this server: {where}")  # fmt: skip
        if not ended:
            abort(context, grpc.StatusCode.DEADLINE_EXCEEDED,
                  f"{tournament.name!r} is still stopping after {STOP_WAIT_S:g} s")  # fmt: skip
        self.log.info("tournament_stopped", tournament_id=tournament.id, user=principal.user)
        return pb.StopTournamentResponse(
            tournament=self._tournament_pb(self._tournament(context, tournament.id))
        )

    @authenticated()
    def ListTournaments(
        self, request: pb.ListTournamentsRequest, context: grpc.ServicerContext,
        principal: Principal,
    ) -> pb.ListTournamentsResponse:  # fmt: skip
        return self.public(context, principal, "tournaments", self._list_tournaments)

    def _list_tournaments(self) -> pb.ListTournamentsResponse:
        rows = sorted(list_tournaments(self.store), key=lambda row: row.id, reverse=True)
        digests = self.digests.of_many(self.store, [row.id for row in rows])
        return pb.ListTournamentsResponse(
            tournaments=[self._tournament_pb(row, digests.get(row.id)) for row in rows]
        )

    def _tournament_pb(self, row: TournamentRow, digest: str | None = None) -> pb.Tournament:
        """The message of ``row``: its deal seed only once it is finished (never before),
        and then its audit bundle's ``digest`` when given; an SPRT test's LLR, bounds and
        decision; the parameters its commitment binds; a ladder's entrants as its standings
        name them (``entrants_shown``)."""
        sprt = sprt_progress(self.store, row) if row.format is TournamentFormat.SPRT else None
        row = replace(row, entrants=entrants_shown(self.store, row))
        return tournament_pb(row, revealed_secret(self.store, row.id), sprt,
                             shown_parameters(self.store, row), digest)  # fmt: skip

    async def AuditTournament(
        self, request: pb.AuditTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.AuditTournamentResponse:
        tournament = await blocking(context, self._audit_request, request)
        key = (tournament.id, str(tournament.status), tournament.games_played)
        audit = functools.partial(audit_tournament, self.store, tournament.id)
        try:
            report = self.audits.submit(self._audit_reports.get, key, audit)
        except RuntimeError:  # the pool is shut down: the server is stopping
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the server is stopping")
        return audit_pb(await asyncio.wrap_future(report))

    def _audit_request(
        self, context: grpc.ServicerContext, request: pb.AuditTournamentRequest
    ) -> TournamentRow:
        return self._audited_tournament(context, principal_of(self.store, context), request.name)

    def _audited_tournament(
        self, context: grpc.ServicerContext, principal: Principal, name: str
    ) -> TournamentRow:
        """The tournament to audit or bundle: for anyone but the admin, UNAVAILABLE while its
        last game ended within the spectator delay (the audit and the bundle hold its secret
        and its games)."""
        tournament = self._tournament(context, name)
        if not principal.is_admin and self.delay.delay_s > 0:
            last = tournament_last_finish(self.store, tournament.id)
            if last is not None and last > self.delay.cut():
                abort(
                    context, grpc.StatusCode.UNAVAILABLE,
                    f"{NOT_PUBLIC}: {tournament.name}'s last game ended less than"
                    f" {self.delay.delay_s:g} s ago (the spectator delay); retry later",
                )  # fmt: skip
        return tournament

    def _tournament(self, context: grpc.ServicerContext, ref: int | str) -> TournamentRow:
        if isinstance(ref, str) and not ref:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, "name is empty")
        try:
            return get_tournament(self.store, ref)
        except NotFoundError as error:
            abort(context, grpc.StatusCode.NOT_FOUND, str(error))

    def _start(self, context: grpc.ServicerContext, tournament: TournamentRow) -> None:
        """Run the tournament in a thread; already running here: nothing to do.

        The runner lease is taken here, before answering: a tournament another
        process runs (`arena tournament resume`, another server) is refused
        with FAILED_PRECONDITION naming that process.
        """

        def new_runner() -> TournamentRunner:
            return TournamentRunner(
                self.store, tournament.id, concurrency=self.options.concurrency,
                unsafe=self.options.unsafe, on_progress=self.tournaments.publish,
                on_seat_offer=self.seats.publish, pin_cpus=self.options.pin_cpus,
                paired_remote=self.options.paired_remote,
                executor=None if self.options.new_executor is None else self.options.new_executor(),
            )  # fmt: skip

        try:
            self.tournaments.start(tournament.id, new_runner, TournamentRunner.take_lease)
        except LeaseHeldError as error:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, str(error))

    def stop_tournaments(self, reason: str, timeout_s: float = 30.0) -> None:
        """Stop the tournaments this server runs and wait for them (before the store is
        closed under them): each reads interrupted saying ``reason``, its unstored games
        left to a resume."""
        self.tournaments.stop_all(reason, timeout_s)

    async def WatchTournament(
        self, request: pb.WatchTournamentRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.WatchTournamentResponse]:
        # a stream holds no thread: checks and store reads run off the event loop
        tournament, principal = await blocking(context, self._watched_tournament, request)
        if not principal.is_admin and self.delay.delay_s > 0:
            async for message in self._watch_delayed(tournament):
                yield message
            return
        inbox = self.tournaments.subscribe(tournament.id, asyncio.get_running_loop())
        try:
            elsewhere = not self.tournaments.is_running(tournament.id)  # another process plays it
            # its stored games read before the status: none can fall between the two reads
            seen = await off_loop(latest_game_id, self.store, tournament.id) if elsewhere else 0
            first = await off_loop(self._watch_status, tournament.id)
            yield first
            if elsewhere:
                async for stored in follow_stored(
                    self.store, tournament.id, self._watch_message, seen
                ):
                    yield stored
                last = await off_loop(self._watch_status, tournament.id)
                if last != first:  # a finished tournament's status once, not twice
                    yield last
                return
            while True:  # until the tournament ends; a watcher leaving cancels the stream
                event = await inbox.get(WATCH_POLL_S)
                if event is None:
                    if not self.tournaments.is_running(tournament.id):
                        yield await off_loop(self._watch_status, tournament.id)
                        return
                    continue
                yield await off_loop(
                    self._watch_message, tournament.id, event.message, event.game_id or 0
                )
                if event.kind is ProgressKind.ENDED:
                    return
        finally:
            self.tournaments.unsubscribe(tournament.id, inbox)

    async def GetAuditBundle(
        self, request: pb.GetAuditBundleRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.GetAuditBundleResponse]:
        # a match's games read at a time (bundle_parts), off the loop: never the bundle whole
        parts = await blocking(context, self._audit_bundle, request)
        while batch := await off_loop(_next_parts, parts):
            for kind, part in batch:
                text = json.dumps(part)
                yield (pb.GetAuditBundleResponse(head_json=text) if kind == "head"
                       else pb.GetAuditBundleResponse(match_json=text) if kind == "match"
                       else pb.GetAuditBundleResponse(game_json=text))  # fmt: skip

    async def ExportGames(
        self, request: pb.ExportGamesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.ExportGamesResponse]:
        # one page of games read at a time, off the event loop; the cut is the stream's start's
        principal, tournament_id = await blocking(context, self._export_scope, request)
        cut = None if principal.is_admin or self.delay.delay_s == 0 else self.delay.cut()
        after = request.after_game_id
        while True:
            page = await off_loop(export_page, self.store, tournament_id, after, cut)
            for message in page.games:
                yield message
            if page.done:
                return
            after = page.last_id

    def _export_scope(
        self, context: grpc.ServicerContext, request: pb.ExportGamesRequest
    ) -> tuple[Principal, int | None]:
        principal = principal_of(self.store, context)
        if request.after_game_id < 0:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                  f"after_game_id must be 0 or a game id, not {request.after_game_id}")  # fmt: skip
        if not request.tournament:
            return principal, None
        return principal, self._tournament(context, request.tournament).id

    def _audit_bundle(
        self, context: grpc.ServicerContext, request: pb.GetAuditBundleRequest
    ) -> Iterator[BundlePart]:
        principal = principal_of(self.store, context)
        tournament = self._audited_tournament(context, principal, request.name)
        return bundle_parts(self.store, tournament.id)

    async def _watch_delayed(
        self, tournament: TournamentRow
    ) -> AsyncIterator[pb.WatchTournamentResponse]:
        """WatchTournament for spectators: each event computed as it happens and sent once
        the delay has passed; the first, the newest kept that holds nothing newer than the
        cut (or a note saying progress comes late)."""
        delay_s = self.delay.delay_s
        inbox = self.tournaments.subscribe(tournament.id, asyncio.get_running_loop())
        pending: collections.deque[tuple[float, pb.WatchTournamentResponse]] = collections.deque()
        ended = False
        try:
            first = await off_loop(
                self.delay.answer, ("watch", tournament.id),
                functools.partial(self._watch_status, tournament.id),
            )  # fmt: skip
            yield first if isinstance(first, pb.WatchTournamentResponse) else (
                pb.WatchTournamentResponse(
                    tournament=pb.Tournament(id=tournament.id, name=tournament.name),
                    message=f"progress is shown {delay_s:g} s late: the first update comes then",
                )
            )  # fmt: skip
            while not (ended and not pending):
                now = time.monotonic()
                while pending and pending[0][0] <= now:
                    yield pending.popleft()[1]
                if ended and not pending:
                    return
                wait = WATCH_POLL_S if not pending else max(0.0, pending[0][0] - now)
                event = None if ended else await inbox.get(min(WATCH_POLL_S, wait))
                if ended:
                    await asyncio.sleep(wait)
                    continue
                if event is None:
                    if not self.tournaments.is_running(tournament.id):
                        final = await off_loop(self._watch_status, tournament.id)
                        # nothing started or ended since the cut: the end is public already
                        quiet = await off_loop(first_event_after, self.store, self.delay.cut())
                        due = time.monotonic() + (0.0 if quiet is None else delay_s)
                        pending.append((due, final))
                        ended = True
                    continue
                message = await off_loop(
                    self._watch_message, tournament.id, event.message, event.game_id or 0
                )
                # kept, so that a later watcher's first message may be this one
                await off_loop(self.delay.answer, ("watch", tournament.id),
                               functools.partial(_same, message))  # fmt: skip
                pending.append((time.monotonic() + delay_s, message))
                ended = event.kind is ProgressKind.ENDED
        finally:
            self.tournaments.unsubscribe(tournament.id, inbox)

    def _watched_tournament(
        self, context: grpc.ServicerContext, request: pb.WatchTournamentRequest
    ) -> tuple[TournamentRow, Principal]:
        principal = principal_of(self.store, context)
        return self._tournament(context, request.name), principal

    def _watch_status(self, tournament_id: int) -> pb.WatchTournamentResponse:
        return self._watch_message(tournament_id, self._status_message(tournament_id))

    def _status_message(self, tournament_id: int) -> str:
        """Where a tournament stands, for people: who runs it, or how to resume it."""
        tournament = get_tournament(self.store, tournament_id)
        if tournament.status is INTERRUPTED and tournament.format is TournamentFormat.LADDER:
            return (  # `arena tournament resume` and StartTournament refuse a ladder
                "ladder is interrupted: no process is running it; start it again with"
                f" `arena serve --ladder --ladder-name {tournament.name}`"
            )
        if tournament.status is INTERRUPTED and is_play_tournament(self.store, tournament.id):
            return f"tournament is interrupted: no process is running it; {PLAY_NOT_RESUMED}"
        if tournament.status is INTERRUPTED:
            return (
                "tournament is interrupted: no process is running it; resume it with"
                f" StartTournament or `arena tournament resume {tournament.name}`"
            )
        running_here = self.tournaments.is_running(tournament_id)
        if tournament.status is TournamentStatus.RUNNING and not running_here:
            holder = lease_holder(self.store, tournament_id)
            pid = "unknown" if holder is None or holder.pid is None else holder.pid
            if pid != os.getpid():  # this process: `arena serve --ladder`'s own ladder
                return f"tournament is running in another process (pid {pid})"
        return f"tournament is {tournament.status}"

    def _watch_message(
        self, tournament_id: int, message: str, game_id: int = 0
    ) -> pb.WatchTournamentResponse:
        tournament = get_tournament(self.store, tournament_id)
        standings, intervals = tournament_table(self.store, tournament)  # a ladder's: no game read
        order = [s.bot for s in standings]
        return pb.WatchTournamentResponse(
            tournament=self._tournament_pb(tournament),
            message=message, game_id=game_id,
            standings=[
                standing_pb(s, intervals.field.get(s.bot), apart)
                for s, apart in zip(standings, intervals.separated_from_next(order), strict=True)
            ],
        )  # fmt: skip

    # ----------------------------------------------------------- remote bots

    @authenticated()
    def RegisterRemoteBot(
        self, request: pb.RegisterRemoteBotRequest, context: grpc.ServicerContext,
        principal: Principal,
    ) -> pb.RegisterRemoteBotResponse:  # fmt: skip
        try:  # another user's name is refused as such, before any limit of this user's
            require_owner(self.store, principal, request.name, missing_ok=True)
        except NotOwnerError as error:
            abort(context, grpc.StatusCode.PERMISSION_DENIED,
                  f"remote bot refused: {error}: {TAKEN_REMOTE_NAME}")  # fmt: skip
        refused_name = name_refusal(self.store, principal, request.name)
        if refused_name is not None:
            abort(context, grpc.StatusCode.PERMISSION_DENIED, f"remote bot refused: {refused_name}")
        try:  # every attempt at a name it may take counts against the hourly limit
            self.quotas.count_submission(principal)
            with self.quotas.holding(principal, request.name, remote=True,
                                     new_bytes=REMOTE_TOML_BYTES):  # fmt: skip
                row, created = register_remote_bot(
                    self.store, request.name, owner=principal.user,
                    description=request.description,
                )  # fmt: skip
        except LimitExceeded as exceeded:
            refuse_past_limit(context, exceeded, f"user:{principal.user}")
        except NotOwnerError as error:  # taken by another user meanwhile
            abort(context, grpc.StatusCode.PERMISSION_DENIED,
                  f"remote bot refused: {error}: {TAKEN_REMOTE_NAME}")  # fmt: skip
        except StoreError as error:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"remote bot refused: {error}")
        self.log.info("remote_bot_registered", bot=row.bot, version=row.version, user=row.owner)
        return pb.RegisterRemoteBotResponse(bot=bot_pb(row), created=created)

    async def WaitForSeats(
        self, request: pb.WaitForSeatsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.WaitForSeatsResponse]:
        # a stream holds no thread: checks and store reads run off the event loop
        await blocking(context, self._check_seats_request, request)
        inbox = self.seats.subscribe(request.bot, asyncio.get_running_loop())
        try:
            authorization = authorization_of(context)
            for seat in await off_loop(self.seats.open_seats, request.bot):
                self.seats.hand(seat, authorization)
                yield seat_pb(seat)
            while True:  # a connector leaving cancels the stream
                # (its token is checked every few seconds: arena.server.rechecks)
                offered = await inbox.get()
                # and before each seat: a seat token is handed only to a live token
                await blocking(context, lambda ctx: principal_of(self.store, ctx))
                assert offered is not None  # no timeout: get returns an item
                self.seats.hand(offered, authorization)
                yield seat_pb(offered)
        finally:
            self.seats.unsubscribe(request.bot, inbox)

    def _check_seats_request(
        self, context: grpc.ServicerContext, request: pb.WaitForSeatsRequest
    ) -> None:
        principal = principal_of(self.store, context)
        if not request.bot:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, "bot is empty")
        try:
            require_owner(self.store, principal, request.bot)
            runtime = bot_spec(self.store, request.bot).runtime
        except NotFoundError as error:
            abort(context, grpc.StatusCode.NOT_FOUND, str(error))
        except NotOwnerError as error:
            abort(context, grpc.StatusCode.PERMISSION_DENIED, str(error))
        if runtime != REMOTE_RUNTIME:
            abort(
                context, grpc.StatusCode.FAILED_PRECONDITION,
                f"bot {request.bot!r} is not a remote bot: the arena runs it; register a"
                " remote bot under a name of its own (`arena remote submit DIR` of a bot.toml"
                " with runtime = \"remote\" and no command, or RegisterRemoteBot)",
            )  # fmt: skip

    # ------------------------------------------------------------ live games

    @authenticated(admin=True)
    def ListLiveGames(
        self, request: pb.ListLiveGamesRequest, context: grpc.ServicerContext,
        principal: Principal,
    ) -> pb.ListLiveGamesResponse:  # fmt: skip
        return pb.ListLiveGamesResponse(
            games=[live_game_pb(live) for live in list_live_games(self.store)]
        )

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
        principal = principal_of(self.store, context)
        if request.match_id <= 0:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, "match_id must be a positive id")
        refused = check_game(self.store, request.match_id, request.game_index)
        if refused is not None:
            abort(context, grpc.StatusCode.NOT_FOUND, refused.message)
        if principal.is_admin:
            return None
        stored = find_game(self.store, request.match_id, request.game_index)
        try:  # a game that ended within the spectator delay is not over yet for spectators
            record = (None if stored is None or self.ended_after_cut(principal, stored.id)
                      else finished_record(self.store, request.match_id, request.game_index,
                                           principal))  # fmt: skip
        except RecordWithheldError as withheld:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, str(withheld))
        if record is None:
            abort(
                context, grpc.StatusCode.PERMISSION_DENIED,
                f"game {request.game_index} of match {request.match_id} is not over:"
                " only the admin may watch a game live",
            )  # fmt: skip
        return record


__all__ = ["ArenaService", "ServiceOptions"]


def _caller_digest(context: grpc.ServicerContext) -> str | None:
    """The SHA-256 of the call's bearer token, read as ``principal_of`` reads it."""
    _, _, token = (authorization_of(context) or "").partition(" ")
    return token_digest(token.strip()) if token.strip() else None


def _sprt_settings(request: pb.CreateTournamentRequest) -> SprtConfig | None:
    """An SPRT test's hypotheses from the request (None unless it sets them or asks for
    the SPRT format); TournamentError naming the field."""
    if request.format != pb.TOURNAMENT_FORMAT_SPRT and not request.HasField("sprt"):
        return None
    s = request.sprt
    return build_sprt(
        preset=s.preset or None,
        elo0=s.elo0 if s.HasField("elo0") else None,
        elo1=s.elo1 if s.HasField("elo1") else None,
        alpha=s.alpha or None, beta=s.beta or None, model=s.model or None,
        max_pairs=s.max_pairs or None,
    )  # fmt: skip


BUNDLE_PARTS_AT_ONCE = 64
"""GetAuditBundle's parts taken from the store per trip off the event loop."""


def _next_parts(parts: Iterator[BundlePart]) -> list[BundlePart]:
    return list(itertools.islice(parts, BUNDLE_PARTS_AT_ONCE))
