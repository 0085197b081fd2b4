"""The tournament runner's live view: live events from workers into the store, in batches.

Workers send ``(game_index, "start", head)`` when a game starts and
``(game_index, "entry", live_entry)`` for each action and reshuffle
(``arena.referee.live``); the runner hands them to a ``LiveFeed`` and calls
``flush`` when its queue is momentarily empty, so entries are written a batch
per game per flush (``arena.store.live``). Best effort: a store error drops
that game's live view with a warning and never stops a tournament.
"""

from __future__ import annotations

from collections.abc import Callable

from arena.logs import get_logger
from arena.store import (
    Store,
    StoreError,
    add_live_actions,
    end_live_game,
    list_live_games,
    start_live_game,
)

LivePayload = tuple[int, str, dict[str, object]]
"""(game index, "start" | "entry", the head or the entry)."""


class LiveFeed:
    """Writes the live events workers send to the store, in batches (best effort)."""

    def __init__(self, store: Store, tournament_id: int) -> None:
        self.store = store
        self.tournament_id = tournament_id
        self.pending: dict[tuple[int, int], list[dict[str, object]]] = {}
        self.log = get_logger(tournament_id=tournament_id)

    def event(self, match_id: int, payload: LivePayload) -> None:
        game_index, kind, data = payload
        key = (match_id, game_index)
        if kind == "start":
            self.pending[key] = []
            self._safely(start_live_game, match_id, game_index, data)
        elif key in self.pending:
            self.pending[key].append(data)

    def flush(self) -> None:
        for (match_id, game_index), entries in self.pending.items():
            if entries:
                self._safely(add_live_actions, match_id, game_index, entries)
                entries.clear()

    def stored(self, match_id: int, game_index: int) -> None:
        self.pending.pop((match_id, game_index), None)

    def drop_match(self, match_id: int) -> None:
        for key in [key for key in self.pending if key[0] == match_id]:
            del self.pending[key]
        for live in list_live_games(self.store, tournament_id=self.tournament_id):
            if live.match_id == match_id:
                self._safely(end_live_game, live.match_id, live.game_index)

    def drop_all(self) -> None:
        self.pending.clear()
        for live in list_live_games(self.store, tournament_id=self.tournament_id):
            self._safely(end_live_game, live.match_id, live.game_index)

    def _safely(self, write: Callable[..., object], match_id: int, game_index: int,
                *args: object) -> None:  # fmt: skip
        try:
            write(self.store, match_id, game_index, *args)
        except StoreError as error:
            self.pending.pop((match_id, game_index), None)
            self.log.warning(
                "live_view_failed", match_id=match_id, game=game_index, error=str(error)
            )
