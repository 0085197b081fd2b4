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
from typing import Any

import pytest

from arena.server.limits import CallCounter, StreamCounter, StreamLimits
from arena.server.supervisor import TournamentSupervisor
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
        assert loop.run_until_complete(staying.get(1.0)) == event
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
