"""Live JSON answers shared per interval: one computation (one set of store reads) serves
every spectator polling within it, each poll gets exactly its own frames after ``after``,
and a kept answer is never newer than the store was when it was computed."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from arena import store as st
from arena.kahuna import play_random_game
from arena.testing.demo_data import play_demo_tournament
from arena.testing.live_games import live_parts
from arena.testing.waiting import wait_until
from arena.web.app import WebApp
from arena.web.live_answers import MAX_ANSWERS, GameAnswer, LiveAnswers
from arena.web.source import StoreSource


class Clock:
    def __init__(self) -> None:
        self.now = time.time() + 60  # after every entry a test adds

    def __call__(self) -> float:
        return self.now


class CountingSource(StoreSource):
    """The store's source, counting the live reads the web makes."""

    def __init__(self, store: st.Store) -> None:
        super().__init__(store)
        self.reads = 0

    def live_game(self, match_id: int, game_index: int) -> st.LiveGameRow | None:
        self.reads += 1
        return super().live_game(match_id, game_index)

    def live_games(self) -> list[st.LiveGameRow]:
        self.reads += 1
        return super().live_games()


@dataclass
class Live:
    store: st.Store
    match: st.MatchRow
    head: dict[str, object]
    entries: list[dict[str, object]]
    source: CountingSource
    clock: Clock
    app: WebApp


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Live]:
    store = st.Store.open(tmp_path / "data")
    demo = play_demo_tournament(store, tmp_path / "bots", bots=("ann", "bob"), max_games=0)
    match = st.list_matches(store, demo.tournament_id)[0]
    head, entries = live_parts(play_random_game(match.seed), (match.first, match.second))
    source, clock = CountingSource(store), Clock()
    app = WebApp(source, clock=clock, live_answer_s=0.25)
    try:
        yield Live(store, match, head, entries, source, clock, app)
    finally:
        assert demo.lease is not None
        demo.lease.release()
        store.close()


def get(app: WebApp, path: str, **query: str) -> Any:
    response = app.handle("GET", path, query)
    assert response.status == 200, response.body
    return json.loads(response.body)


def test_polls_within_the_interval_share_one_computation(live: Live) -> None:
    st.start_live_game(live.store, live.match.id, 0, live.head)
    st.add_live_actions(live.store, live.match.id, 0, live.entries[:5])
    game = f"/api/live/{live.match.id}/0"
    first, listed = get(live.app, game, after="-1"), get(live.app, "/api/live")
    assert first["status"] == "live" and first["steps"] == 5 and len(listed["games"]) == 1
    reads = live.source.reads
    for after in range(-1, 1000):  # a crowd within the interval: no store read at all
        assert get(live.app, game, after=str(after))["frames"] == first["frames"][after + 1:]
        assert get(live.app, "/api/live") == listed
    assert live.source.reads == reads
    st.add_live_actions(live.store, live.match.id, 0, live.entries[5:9])  # the store moves on
    assert get(live.app, game, after="-1")["steps"] == first["steps"]
    live.clock.now += 0.25  # the interval is over: the next poll sees the store as it is
    later = get(live.app, game, after="-1")
    assert later["steps"] > first["steps"] and later["frames"][: len(first["frames"])] == (
        first["frames"]
    )
    assert live.source.reads > reads


def test_an_unknown_game_is_still_refused_with_the_kept_answers(live: Live) -> None:
    response = live.app.handle("GET", f"/api/live/{live.match.id}/99", {"after": "-1"})
    assert response.status == 404 and b"has no game 99" in response.body
    response = live.app.handle("GET", f"/api/live/{live.match.id}/0", {"after": "x"})
    assert response.status == 400 and b"after must be a step number" in response.body


@given(
    frames=hs.lists(hs.dictionaries(hs.text(max_size=3), hs.integers() | hs.text(max_size=3),
                                    max_size=3), max_size=8),
    after=hs.integers(min_value=-(1 << 40), max_value=1 << 40),
)  # fmt: skip
def test_a_game_answer_is_the_payload_with_the_frames_after_the_step(
    frames: list[dict[str, object]], after: int
) -> None:
    payload: dict[str, object] = {"status": "live", "steps": len(frames), "frames": frames}
    body = json.loads(GameAnswer.of(payload).body(after))
    assert body == {**payload, "frames": frames[max(after + 1, 0):]}


@pytest.mark.parametrize(
    ("interval_s", "elapsed_s", "computations"),
    [(0.0, 0.0, 2), (0.25, 0.0, 1), (0.25, 0.2499, 1), (0.25, 0.25, 2), (0.25, -1.0, 2)],
)
def test_an_answer_is_kept_for_the_interval_only(
    interval_s: float, elapsed_s: float, computations: int
) -> None:
    clock, computed = Clock(), []
    answers = LiveAnswers(interval_s, clock)
    answers.get("k", computed.append)
    clock.now += elapsed_s  # a clock set back counts as over: never a future answer
    answers.get("k", computed.append)
    assert len(computed) == computations


@pytest.mark.parametrize("interval_s", [-0.1, float("nan")])
def test_a_bad_interval_is_refused(interval_s: float) -> None:
    with pytest.raises(ValueError, match="live answer interval must be 0 or more seconds"):
        LiveAnswers(interval_s, time.time)


@pytest.mark.parametrize("max_answers", [0, -1])
def test_keeping_no_answer_is_refused(max_answers: int) -> None:
    with pytest.raises(ValueError, match="at least one answer must be kept"):
        LiveAnswers(1.0, time.time, max_answers=max_answers)


def test_kept_answers_are_bounded() -> None:
    answers = LiveAnswers(60.0, Clock())
    for key in range(MAX_ANSWERS + 10):
        answers.get(key, lambda now, key=key: key)  # type: ignore[misc]
    computed: list[float] = []
    answers.get(0, computed.append)  # the oldest was dropped
    answers.get(MAX_ANSWERS + 9, computed.append)  # the newest is kept
    assert len(computed) == 1


def _inside(code: CodeType) -> int:
    """How many threads are running ``code`` now, at any depth of their stacks."""
    count = 0
    for frame in sys._current_frames().values():
        while frame is not None and frame.f_code is not code:
            frame = frame.f_back  # type: ignore[assignment]
        count += frame is not None
    return count


def test_a_crowd_arriving_at_once_computes_once() -> None:
    """The race, forced: the first computation is held until all 50 callers are inside
    ``get`` (the others waiting for it, or computing too if nothing stops them)."""
    answers, computed = LiveAnswers(60.0, time.time), []
    gate = threading.Barrier(50)

    def compute(now: float) -> int:
        computed.append(now)
        wait_until(lambda: _inside(LiveAnswers.get.__code__) == 50 or len(computed) > 1,
                   "all 50 callers inside get", 30, interval_s=0.005)  # fmt: skip
        return 7

    def poll() -> None:
        gate.wait()
        assert answers.get("list", compute) == 7

    threads = [threading.Thread(target=poll) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(computed) == 1


def test_a_slow_answer_holds_up_no_other_game() -> None:
    answers, release = LiveAnswers(60.0, time.time), threading.Event()
    slow = threading.Thread(target=answers.get, args=(0, lambda now: release.wait(30)))
    slow.start()
    other = threading.Thread(target=answers.get, args=(1, lambda now: 1))
    other.start()
    other.join(10)
    blocked = other.is_alive()
    release.set()
    slow.join()
    other.join()
    assert not blocked
