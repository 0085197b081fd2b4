"""ExportGames' pages: the public stored games as messages, one bounded read at a time.

A game is sent only when ``arena.store.record_withheld`` says its record is
public now (for everyone, the admin too: an export is public data, as the local
``arena export`` is) and, when ``public_before`` is given (the spectator
delay's cut, for anyone but the admin), it ended by then. A page reads at most
``page_size`` games, so a stream holds one page whatever the store's size.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.store import Store, record_withheld
from arena.store.export import StoredGame, stored_games

EXPORT_PAGE = 100
"""Games read per page of an ExportGames stream."""


@dataclass(frozen=True, slots=True)
class ExportPage:
    games: list[pb.ExportGamesResponse]
    last_id: int  # the last game id read, sent or not: the next page starts after it
    done: bool  # nothing stored after last_id


def export_page(
    store: Store, tournament_id: int | None, after: int, public_before: str | None,
    page_size: int = EXPORT_PAGE,
) -> ExportPage:  # fmt: skip
    """The public games among the next ``page_size`` stored ones after game id ``after``."""
    read = list(
        itertools.islice(stored_games(store, tournament_id, page_size=page_size, after=after),
                         page_size)
    )  # fmt: skip
    games = [
        game_message(game)
        for game in read
        if (public_before is None or game.finished_at <= public_before)
        and record_withheld(store, game.game_id) is None
    ]
    last_id = read[-1].game_id if read else after
    return ExportPage(games, last_id, len(read) < page_size)


def game_message(game: StoredGame) -> pb.ExportGamesResponse:
    return pb.ExportGamesResponse(
        game_id=game.game_id,
        tournament=game.tournament,
        tournament_format=game.tournament_format,
        match_id=game.match_id,
        round=game.round,
        game_index=game.game_index,
        bots=game.bots,
        versions=game.versions,
        rating_before=[pb.ExportedRating(mu=mu, sigma=sigma) for mu, sigma in game.rating_before],
        rating_after=[pb.ExportedRating(mu=mu, sigma=sigma) for mu, sigma in game.rating_after],
        winner_seat=game.winner_seat,
        reason=game.reason,
        statuses=game.statuses,
        actions=game.actions,
        time_ms=game.time_ms,
        startup_ms=game.startup_ms,
        finished_at=game.finished_at,
        record_json=game.record_json,
    )


def stored_game(message: pb.ExportGamesResponse) -> StoredGame:
    """The game an ExportGames message describes (ValueError when it is not two seats');
    no start-up times (an arena that does not send them) read as 0, as a game stored
    before the arena kept them."""
    seated = (message.bots, message.versions, message.rating_before, message.rating_after,
              message.statuses, message.time_ms)  # fmt: skip
    if any(len(field) != 2 for field in seated) or len(message.startup_ms) not in (0, 2):
        raise ValueError(f"game {message.game_id}: the arena sent a seat list not of two seats")
    startup = (message.startup_ms[0], message.startup_ms[1]) if message.startup_ms else (0.0, 0.0)
    before, after = message.rating_before, message.rating_after
    return StoredGame(
        game_id=message.game_id,
        tournament=message.tournament,
        tournament_format=message.tournament_format,
        match_id=message.match_id,
        round=message.round,
        game_index=message.game_index,
        bots=(message.bots[0], message.bots[1]),
        versions=(message.versions[0], message.versions[1]),
        rating_before=((before[0].mu, before[0].sigma), (before[1].mu, before[1].sigma)),
        rating_after=((after[0].mu, after[0].sigma), (after[1].mu, after[1].sigma)),
        winner_seat=message.winner_seat if message.HasField("winner_seat") else None,
        reason=message.reason,
        statuses=(message.statuses[0], message.statuses[1]),
        actions=message.actions,
        time_ms=(message.time_ms[0], message.time_ms[1]),
        startup_ms=startup,
        finished_at=message.finished_at,
        record_json=message.record_json,
    )
