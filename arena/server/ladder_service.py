"""ArenaService's ladder calls (GetLadder, SetBotWithdrawn), mixed into ``ArenaService``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import grpc

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.server.auth import abort, authenticated
from arena.server.convert import bot_pb, tournament_pb
from arena.store import (
    AdminWithdrawnError,
    BotVersionRow,
    NotFoundError,
    NotOwnerError,
    Principal,
    Store,
    WithdrawnBy,
    get_version,
    require_owner,
    set_withdrawn,
)
from arena.tournament.policy.ladder_config import DEFAULT_NAME
from arena.tournament.view.ladder_view import QUEUE_LENGTH, RECENT_GAMES, LadderView, ladder_view

MAX_SHOWN = 500
"""At most this many recent games or queued pairings in one answer."""


def ladder_pb(view: LadderView, versions: dict[str, BotVersionRow]) -> pb.GetLadderResponse:
    return pb.GetLadderResponse(
        ladder=tournament_pb(view.ladder),
        standings=[
            pb.LadderStanding(
                rank=s.rank,
                bot=bot_pb(versions[s.entrant.bot]),
                ladder_games=s.entrant.ladder_games,
                matches=s.entrant.matches,
                in_play=s.entrant.in_play,
                placing=s.placing,
            )
            for s in view.standings
        ],
        recent_games=[
            pb.LadderGame(
                game_id=g.id,
                bots=list(g.bots),
                winner=g.winner or "",
                reason=g.reason,
                finished_at=g.finished_at,
            )
            for g in view.recent_games
        ],
        queue=[
            pb.LadderPairing(first=q.first, second=q.second, placement=q.placement)
            for q in view.queue
        ],
        placement_matches=view.settings.placement_matches,
        max_repeat=view.settings.max_repeat,
        concurrency=view.settings.concurrency or 0,
    )


class LadderMethods:
    """The ladder's calls; ``ArenaService`` gives them its store and its spectator delay
    (``public``: an answer as of the delay's cut for anyone but the admin)."""

    store: Store
    public: Callable[..., Any]

    @authenticated()
    def GetLadder(
        self, request: pb.GetLadderRequest, context: grpc.ServicerContext, principal: Principal
    ) -> pb.GetLadderResponse:
        if request.recent_games > MAX_SHOWN or request.queue > MAX_SHOWN:
            abort(
                context, grpc.StatusCode.INVALID_ARGUMENT,
                f"recent_games and queue may be at most {MAX_SHOWN}",
            )  # fmt: skip
        try:
            view = ladder_view(
                self.store, request.name or DEFAULT_NAME,
                recent_games=request.recent_games or RECENT_GAMES,
                queue=request.queue or QUEUE_LENGTH,
            )  # fmt: skip
        except NotFoundError as error:
            abort(context, grpc.StatusCode.NOT_FOUND, str(error))
        key = ("ladder", request.name or DEFAULT_NAME, request.recent_games, request.queue)
        return cast(pb.GetLadderResponse, self.public(context, principal, key,
                                                      lambda: self._ladder_pb(view)))  # fmt: skip

    def _ladder_pb(self, view: LadderView) -> pb.GetLadderResponse:
        versions = {
            s.entrant.bot: get_version(self.store, s.entrant.bot, s.entrant.version)
            for s in view.standings
        }
        return ladder_pb(view, versions)

    @authenticated()
    def SetBotWithdrawn(
        self, request: pb.SetBotWithdrawnRequest, context: grpc.ServicerContext,
        principal: Principal,
    ) -> pb.SetBotWithdrawnResponse:  # fmt: skip
        if not request.bot:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, "bot is empty")
        try:
            require_owner(self.store, principal, request.bot)
            by: WithdrawnBy = "admin" if principal.is_admin else "owner"
            set_withdrawn(self.store, request.bot, request.withdrawn, by=by)
        except NotFoundError as error:
            abort(context, grpc.StatusCode.NOT_FOUND, str(error))
        except AdminWithdrawnError as error:
            abort(context, grpc.StatusCode.PERMISSION_DENIED, str(error))
        except NotOwnerError as error:
            abort(context, grpc.StatusCode.PERMISSION_DENIED, str(error))
        return pb.SetBotWithdrawnResponse()
