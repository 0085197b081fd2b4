"""A worker's live events (``LiveSender``): sent in batches, in the order they happened."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from arena.referee.live import GameStarted, RoundStarted
from arena.testing.crowd import WatchedLock
from arena.testing.waiting import wait_until
from arena.tournament.execution import live_feed
from arena.tournament.execution.executor import LiveBatch
from arena.tournament.execution.live_feed import LiveSender


def test_what_happens_while_a_batch_goes_out_is_sent_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sender's timer sends a game's first two entries while the game goes on (a
    third entry) and ends into the next game's start (sent at once): the batches go out
    in order, so the runner (which writes each game's entries as they come) never
    stores the third entry before the first two.

    The race, forced: the first batch's send is held until the worker's thread waits
    for the sender or has sent its own."""
    monkeypatch.setattr(live_feed, "SEND_EVERY_S", 3600.0)  # the test flushes for the timer
    sent: list[LiveBatch] = []

    def game_goes_on() -> None:
        sender.event(RoundStarted(0, 3, ("c",)))
        sender.event(GameStarted(1, {"game": 1}))

    worker = threading.Thread(target=game_goes_on, name="worker")
    watched: WatchedLock | None = None

    def send(batch: LiveBatch) -> None:
        if not sent and threading.current_thread() is not worker:  # the timer's send
            assert watched is not None
            worker.start()
            wait_until(lambda: watched.waits(worker) or sent,
                       "the worker waiting for the sender, or its batch sent", 10)  # fmt: skip
        sent.append(batch)

    sender = LiveSender(7, send)
    watched = WatchedLock(sender._lock)
    monkeypatch.setattr(sender, "_lock", watched)
    try:
        for round_number in (1, 2):
            sender.event(RoundStarted(0, round_number, ("a", "b")))
        sender.flush()  # the timer's send of the first two entries
        worker.join(10)
    finally:
        sender.close()
    shown: list[Any] = [
        [(game, kind, data.get("round")) for game, kind, data in batch.payloads] for batch in sent
    ]
    assert shown == [[(0, "entry", 1), (0, "entry", 2)], [(0, "entry", 3), (1, "start", None)]]
