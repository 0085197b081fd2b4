"""``WatchGame``: a game of a tournament match, live for the admin, as a record for others.

The admin's view follows the store's live tables (``arena.store.live``): the
head when the game starts (again, if a resumed match plays it anew), each
entry as the runner writes it, and the stored record once the game is over
(``record_game`` replaces the live game with the stored one in one
transaction, so nothing falls between the two). Anyone else may only have the
record of a finished game whose deal is played out (``arena.store.revealed_record``):
``Refused`` says why not.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.server.offloop import off_loop
from arena.store import (
    NotFoundError,
    Principal,
    Store,
    find_game,
    get_live_game,
    live_entries,
    revealed_record,
)

LIVE_POLL_S = 0.1
ADMIN = Principal("admin", "admin")  # the live view is the admin's alone (ArenaService)


@dataclass(frozen=True, slots=True)
class Refused:
    """Why a watch cannot be served: ``not_found`` (no such match/game) or not allowed."""

    not_found: bool
    message: str


def check_game(store: Store, match_id: int, game_index: int) -> Refused | None:
    """Refused when the match does not exist or has no game ``game_index``."""
    with store.reading() as db:
        match = db.execute("SELECT games FROM matches WHERE id = ?", (match_id,)).fetchone()
    if match is None:
        return Refused(True, f"no match {match_id}")
    if not 0 <= game_index < match["games"]:
        return Refused(True, f"match {match_id} has no game {game_index}")
    return None


def finished_record(
    store: Store, match_id: int, game_index: int, principal: Principal | None
) -> pb.WatchGameResponse | None:
    """The record message of a stored game, or None while it is not over.

    RecordWithheldError for anyone but the admin while a game of its deal is
    still to be played (``arena.store.revealed_record``).
    """
    game = find_game(store, match_id, game_index)
    if game is None:
        return None
    record = json.dumps(revealed_record(store, game.id, principal))
    return pb.WatchGameResponse(record_json=record, game_id=game.id)


async def follow_live(
    store: Store, match_id: int, game_index: int
) -> AsyncIterator[pb.WatchGameResponse]:
    """The admin's live view until the game is stored (the watcher leaving cancels it).

    Every store read runs off the event loop (arena.server.offloop).
    """
    live_id: int | None = None
    seq = -1
    while True:
        done = await off_loop(finished_record, store, match_id, game_index, ADMIN)
        if done is not None:
            yield done
            return
        try:
            live = await off_loop(get_live_game, store, match_id, game_index)
        except NotFoundError:
            await asyncio.sleep(LIVE_POLL_S)  # not started yet (or between a drop and a replay)
            continue
        if live.id != live_id:
            live_id, seq = live.id, -1
            yield pb.WatchGameResponse(head_json=json.dumps(dict(live.head)))
        for entry in await off_loop(functools.partial(live_entries, after_seq=seq), store, live.id):
            seq = entry.seq
            yield pb.WatchGameResponse(entry_json=json.dumps(dict(entry.entry)), seq=entry.seq)
        await asyncio.sleep(LIVE_POLL_S)
