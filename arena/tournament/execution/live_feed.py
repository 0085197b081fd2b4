"""The tournament runner's live view: live events from workers into the store, in batches.

Workers gather ``(game_index, "start", head)`` when a game starts and
``(game_index, "entry", live_entry)`` for each action and reshuffle
(``arena.referee.live``) in a ``LiveSender``, which sends them in batches; the
runner hands each batch to a ``LiveFeed`` and calls ``flush`` when its queue
is momentarily empty, so entries are written a transaction per game per
flush (``arena.store.live``). Best effort: a store error drops
that game's live view with a warning and never stops a tournament.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from arena.logs import get_logger
from arena.referee.live import GameStarted, LiveEvent, live_entry
from arena.store import (
    Store,
    StoreError,
    add_live_actions,
    end_live_game,
    list_live_games,
    start_live_game,
)
from arena.tournament.execution.executor import LiveBatch, LivePayload


class LiveFeed:
    """Writes the live events workers send to the store, in batches (best effort)."""

    def __init__(self, store: Store, tournament_id: int) -> None:
        self.store = store
        self.tournament_id = tournament_id
        self.pending: dict[tuple[int, int], list[dict[str, object]]] = {}
        self.log = get_logger(tournament_id=tournament_id)

    def batch(self, match_id: int, payloads: Sequence[LivePayload]) -> None:
        for game_index, kind, data in payloads:
            key = (match_id, game_index)
            if kind == "start":
                self.flush()  # what came before, then the new game
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


SEND_EVERY_S = 0.2
"""How often a worker sends the live entries it has gathered (and at each game start)."""


class LiveSender:
    """Worker side: gathers a match's live events and sends them in batches.

    ``send`` (the worker's report queue ``put``) gets a ``LiveBatch`` at most
    every ``SEND_EVERY_S`` (a daemon thread sends what
    waits while a bot thinks), and at once when a game starts: one queue
    message per batch instead of one per action keeps both the worker and the
    parent cheap.
    """

    def __init__(self, match_id: int, send: Callable[[LiveBatch], None]) -> None:
        self.match_id = match_id
        self._send = send
        self._pending: list[LivePayload] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._every, name="live-sender", daemon=True)
        self._thread.start()

    def event(self, event: LiveEvent) -> None:
        with self._lock:
            if isinstance(event, GameStarted):
                self._pending.append((event.game_index, "start", event.head))
                self._flush_locked()
            else:
                self._pending.append((event.game_index, "entry", live_entry(event)))

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def close(self) -> None:
        self._stopped.set()
        self._thread.join(1.0)
        self.flush()

    def _flush_locked(self) -> None:
        if self._pending:
            batch, self._pending = self._pending, []
            self._send(LiveBatch(self.match_id, tuple(batch)))

    def _every(self) -> None:
        while not self._stopped.wait(SEND_EVERY_S):
            self.flush()
