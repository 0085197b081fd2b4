"""The API server's shared counts and watchers under concurrent callers, each race forced.

A tournament's runner publishes its progress from its own thread while watchers
come and go on the server's loop; streams and unary calls are counted against
their limits from every thread of the pool. The worst interleavings: a watcher
leaving while the runner hands out an event (the other watchers still get it),
and callers arriving at once at a limit (one more is let in, never two).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.server.limits import CallCounter, StreamCounter, StreamLimits
from arena.server.offloop import LoopInbox
from arena.server.seats import PublishedSeat, SeatHub
from arena.server.supervisor import TournamentSupervisor
from arena.store import Store, add_seat_offer, register_remote_bot
from arena.store.remote import now_ms
from arena.testing.aio import complete_apart
from arena.testing.crowd import WatchedLock
from arena.testing.waiting import wait_until
from arena.tournament.orchestration.runner import ProgressEvent, ProgressKind


def test_a_watcher_leaving_while_the_runner_publishes_leaves_the_others_their_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two watchers of a tournament; the first leaves just as the runner hands it an event:
    the second still gets the event, and the runner's publish raises nothing.

    The race, forced: the runner, at its hand-over to the first watcher, is held until
    that watcher has left (or waits for the supervisor's lock to leave)."""
    supervisor = TournamentSupervisor()
    watched = WatchedLock(supervisor.lock)
    monkeypatch.setattr(supervisor, "lock", watched)
    loop = asyncio.new_event_loop()
    try:
        leaving, staying = supervisor.subscribe(1, loop), supervisor.subscribe(1, loop)
        put = leaving.put
        leaver = threading.Thread(target=supervisor.unsubscribe, args=(1, leaving))

        def left_meanwhile(event: ProgressEvent) -> None:
            leaver.start()
            wait_until(lambda: not leaver.is_alive() or watched.waits(leaver),
                       "the watcher gone, or waiting for the lock to go", 10)  # fmt: skip
            put(event)

        monkeypatch.setattr(leaving, "put", left_meanwhile)
        event = ProgressEvent(1, 1, 2, "a vs b: draw", ProgressKind.GAME_STORED)
        supervisor.publish(event)
        leaver.join(10)
        assert supervisor.watchers[1] == [staying]
        assert complete_apart(loop, staying.get(1.0)) == event
    finally:
        loop.close()


class HeldOnCount(dict[Any, int]):
    """The counts by key, holding the first look at one (the test's hook)."""

    hold: Callable[[], None] = staticmethod(lambda: None)
    looks: int = 0

    def get(self, key: Any, default: Any = None) -> Any:
        found = super().get(key, default)
        self.looks += 1
        if self.looks == 1:
            self.hold()
        return found


@pytest.mark.parametrize(
    ("new_counter", "keys", "refusal"),
    [
        (lambda: StreamCounter(StreamLimits(per_token=1)), ("t", "t"),
         "the limit is 1 streams per token"),
        (lambda: StreamCounter(StreamLimits(total=1)), ("t", "u"),
         "the server's limit is 1 streams"),
        (lambda: CallCounter(StreamLimits(calls_per_token=1)), ("t", "t"),
         "the limit is 1 calls per token in flight"),
    ],
    ids=["streams per token", "streams of the server", "calls per token"],
)  # fmt: skip
def test_callers_at_once_at_a_limit_let_one_in(
    monkeypatch: pytest.MonkeyPatch,
    new_counter: Callable[[], StreamCounter | CallCounter],
    keys: tuple[str, str],
    refusal: str,
) -> None:
    """Two streams (or calls) counted at once where the limit leaves room for one: one is
    let in, the other refused naming the limit.

    The race, forced: the first, having read its count, is held until the second waits
    for the counter's lock or has read its count too."""
    counter = new_counter()
    watched = WatchedLock(counter.lock)
    monkeypatch.setattr(counter, "lock", watched)
    counts = HeldOnCount()
    monkeypatch.setattr(counter, "open", counts)
    answers: dict[str, str | None] = {}
    second = threading.Thread(target=lambda: answers.update(second=counter.acquire(keys[1])))

    def hold() -> None:
        second.start()
        wait_until(lambda: watched.waits(second) or counts.looks > 1,
                   "the second caller waiting for the counter, or past its look", 10)  # fmt: skip

    counts.hold = hold
    answers["first"] = counter.acquire(keys[0])
    second.join(10)
    refused = [answer for answer in answers.values() if answer is not None]
    assert len(refused) == 1 and refusal in refused[0], answers
    assert sum(counts.values()) == 1


class HeldOnKeep(dict[int, PublishedSeat]):
    """The hub's open seats, holding the first keeping of one (the test's hook)."""

    hold: Callable[[], None] = staticmethod(lambda: None)

    def __setitem__(self, key: int, value: PublishedSeat) -> None:
        self.hold()
        super().__setitem__(key, value)


def test_an_offer_made_while_a_connector_subscribes_reaches_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connector subscribes to a remote bot's offers and then reads the open ones, as
    WaitForSeats does, while the runner publishes an offer: the connector gets it (once
    from its inbox or its read, or both: the SDK's connector skips a seat token it has
    seen), never neither.

    The race, forced: the runner's publish, about to keep the offer, is held until the
    connector has subscribed and read the open offers, or waits for the hub's lock."""
    store = Store.open(tmp_path / "data")
    loop = asyncio.new_event_loop()
    try:
        row, _ = register_remote_bot(store, "far", owner="alice")
        offer = add_seat_offer(
            store, bot="far", version=row.version, token="seat-token", match_id=None,
            referee_match="abc123", slot=0, socket_path="/tmp/x/b0.sock",
            expires_at_ms=now_ms() + 60_000,
        )  # fmt: skip
        hub = SeatHub(store)
        watched = WatchedLock(hub.lock)
        monkeypatch.setattr(hub, "lock", watched)
        kept = HeldOnKeep()
        monkeypatch.setattr(hub, "seats", kept)
        read: list[PublishedSeat] = []
        inboxes: list[LoopInbox[PublishedSeat]] = []

        def connect() -> None:
            inboxes.append(hub.subscribe("far", loop))
            read.extend(hub.open_seats("far"))

        connector = threading.Thread(target=connect, name="connector")

        def hold() -> None:
            connector.start()
            wait_until(lambda: not connector.is_alive() or watched.waits(connector),
                       "the connector subscribed and read, or waiting for the hub", 10)  # fmt: skip

        kept.hold = hold
        hub.publish(offer, "seat-token")
        connector.join(10)
        [inbox] = inboxes
        got = [seat.token for seat in read]
        while (seat := complete_apart(loop, inbox.get(0.05))) is not None:
            got.append(seat.token)
        assert got and set(got) == {"seat-token"}, got
    finally:
        loop.close()
        store.close()
