"""Answers shared between concurrent requests (``LiveAnswers``: the live JSON per interval,
a stored game's frames per perspective), each race forced.

The worst interleavings: a crowd missing one key at once (one computation serves
them all), callers waiting through a computation slower than the interval (the
next computation serves them all, not one each), and a kept answer read while
another key pushes it out (the reader gets its answer, never an error).
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena import store as st
from arena.testing.crowd import WatchedLock
from arena.testing.demo_data import play_demo_tournament
from arena.testing.waiting import wait_until
from arena.web import app as app_module
from arena.web.app import WebApp
from arena.web.frames import Frames
from arena.web.live_answers import LiveAnswers
from arena.web.source import StoreSource

CROWD = 8


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def watch_stripes(answers: object, monkeypatch: pytest.MonkeyPatch) -> list[WatchedLock]:
    """The answers' computation locks, watched (none where the code has none)."""
    watched = [WatchedLock(lock) for lock in getattr(answers, "_computing", ())]
    if watched:
        monkeypatch.setattr(answers, "_computing", tuple(watched))
    return watched


def waiting(watched: list[WatchedLock], thread: threading.Thread) -> bool:
    return any(lock.waits(thread) for lock in watched)


def run_all(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not any(thread.is_alive() for thread in threads)


def test_callers_waiting_through_a_slow_computation_share_the_next_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each computation takes longer than the interval (a loaded store). Callers that
    asked while the first ran get the next one, computed once for them all: never a
    computation per waiting caller, each one older than the interval by the time it is
    kept.

    The race, forced: the first computation is held until every later caller waits for
    it."""
    clock = Clock()
    answers = LiveAnswers(0.25, clock)
    watched = watch_stripes(answers, monkeypatch)
    computed: list[float] = []
    waiters: list[threading.Thread] = []
    got: dict[str, float] = {}

    def slow(now: float) -> float:
        computed.append(now)
        if len(computed) == 1:
            wait_until(lambda: len(waiters) == CROWD
                       and all(waiting(watched, t) for t in waiters),
                       "every later caller waiting for the first computation", 10,
                       state=lambda: sum(waiting(watched, t) for t in waiters))  # fmt: skip
        clock.now += 1.0  # four intervals
        return now

    def ask() -> None:
        got[threading.current_thread().name] = answers.get("list", slow)

    first = threading.Thread(target=ask, name="first")
    first.start()
    wait_until(lambda: len(computed) == 1, "the first computation begun", 10)
    clock.now += 0.01  # the others ask after it began
    crowd = [threading.Thread(target=ask, name=f"waiter-{i}") for i in range(CROWD)]
    for thread in crowd:
        thread.start()
        waiters.append(thread)
    for thread in [first, *crowd]:
        thread.join(30)
    assert len(computed) == 2, f"{len(computed)} computations for {CROWD + 1} callers"
    assert got.pop("first") == computed[0]
    assert set(got.values()) == {computed[1]} and len(got) == CROWD


@pytest.fixture
def stored(tmp_path: Path) -> Iterator[tuple[WebApp, int]]:
    """An app over a store with one stored game: the app and the game's id."""
    store = st.Store.open(tmp_path / "data")
    demo = play_demo_tournament(store, tmp_path / "bots", bots=("ann", "bob"),
                                games_per_match=1)  # fmt: skip
    try:
        yield WebApp(StoreSource(store)), demo.game_ids[0]
    finally:
        store.close()


def test_a_crowd_asking_for_a_game_s_frames_at_once_builds_them_once(
    stored: tuple[WebApp, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every spectator of a game that just ended is sent to its replay at once: the
    frames are built once for them all.

    The race, forced: the first build is held until every other request waits for it
    (or builds too, where nothing stops it)."""
    app, game_id = stored
    watched = watch_stripes(app._frames, monkeypatch)
    builds: list[str] = []
    game_frames = app_module.game_frames

    def counted(*args: Any) -> Frames:
        builds.append(threading.current_thread().name)
        if len(builds) == 1:
            wait_until(lambda: len(builds) > 1 or all(waiting(watched, t) for t in others),
                       "every other request waiting for the build, or building", 10,
                       state=lambda: sum(waiting(watched, t) for t in others))  # fmt: skip
        return game_frames(*args)

    monkeypatch.setattr(app_module, "game_frames", counted)
    bodies: list[bytes] = []

    def ask() -> None:
        response = app.handle("GET", f"/api/games/{game_id}/frames", {"perspective": "public"})
        assert response.status == 200, response.body
        bodies.append(response.body)

    others = [threading.Thread(target=ask, name=f"spectator-{i}") for i in range(CROWD)]
    first = threading.Thread(target=ask, name="first")
    first.start()
    wait_until(lambda: builds, "the first build begun", 10)
    run_all(others)
    first.join(30)
    assert builds == ["first"]
    assert len(bodies) == CROWD + 1 and len(set(bodies)) == 1


class HeldOnRead(OrderedDict[Hashable, Any]):
    """The kept answers, holding the reader's lookup of a kept key (the test's hook)."""

    hold: Callable[[], None] = staticmethod(lambda: None)

    def get(self, key: Hashable, default: Any = None) -> Any:
        found = super().get(key, default)
        if threading.current_thread().name == "reader" and found is not None:
            self.hold()
        return found


def test_a_kept_answer_read_while_another_key_pushes_it_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One answer kept (the limit); a request reads it while another key's answer is
    stored, which drops the least recently asked for: the reader gets its answer and
    no error (a 500 for the page).

    The race, forced: the reader, having found its answer, is held until the other
    request waits for the answers' lock or has dropped the reader's key."""
    answers = LiveAnswers(math.inf, time.time, max_answers=1)
    answers.get("a", lambda now: "answer a")
    kept = HeldOnRead(answers._answers)
    monkeypatch.setattr(answers, "_answers", kept)
    watched = WatchedLock(answers._lock)
    monkeypatch.setattr(answers, "_lock", watched)
    writer = threading.Thread(target=answers.get, args=("b", lambda now: "answer b"),
                              name="writer")  # fmt: skip

    def hold() -> None:
        writer.start()
        wait_until(lambda: watched.waits(writer) or "a" not in kept,
                   "the other request waiting for the lock, or past it", 10)  # fmt: skip

    kept.hold = hold
    got: list[object] = []

    def read() -> None:
        try:
            got.append(answers.get("a", lambda now: "computed again"))
        except Exception as error:
            got.append(error)

    reader = threading.Thread(target=read, name="reader")
    run_all([reader])
    writer.join(30)
    assert got == ["answer a"]
    assert list(kept) == ["b"]


def test_keys_that_share_a_computation_lock_each_get_their_own_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two games whose keys share one of the computation locks: the second waits for the
    first's computation, then gets its own game's answer, never the first's.

    The race, forced: the first computation is held until the second request waits for
    the lock they share."""
    answers = LiveAnswers(60.0, Clock())
    watched = watch_stripes(answers, monkeypatch)
    first, second = (7, 0), next((7, g) for g in range(1, 10_000)
                                 if hash((7, g)) % len(watched) == hash((7, 0)) % len(watched))
    got: dict[str, object] = {}

    def ask_second() -> None:
        got["second"] = answers.get(second, lambda now: f"game {second}")

    other = threading.Thread(target=ask_second, name="second")

    def held(now: float) -> str:
        other.start()
        wait_until(lambda: waiting(watched, other), "the second request waiting", 10)
        return f"game {first}"

    got["first"] = answers.get(first, held)
    other.join(10)
    assert got == {"first": f"game {first}", "second": f"game {second}"}
