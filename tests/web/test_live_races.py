"""The live feed's shared state under concurrent polls (``SpectatorFeed``): each race forced.

Every poll of a live game reads the store and updates one ``_Followed`` per run of
a game under the feed's lock. The worst interleavings: two polls of one game
reading the same new entries (each entry must be kept once), and a poll that read
a game's row just before the game was played anew finishing after a poll of the
new run (the game must stay pointed at the new run: once it is stored, a delayed
page plays on from that run's entries, never the abandoned run's).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena import store as st
from arena.kahuna import Record, play_random_game
from arena.store.db import utc_now
from arena.testing.crowd import WatchedLock
from arena.testing.demo_data import play_demo_tournament, report_for
from arena.testing.live_games import live_parts
from arena.testing.waiting import wait_until
from arena.tournament.policy.results import store_game
from arena.web import live as live_module
from arena.web.live import SpectatorFeed, epoch_s, run_key
from arena.web.source import StoreSource

DELAY_S = 30.0


class HookedSource(StoreSource):
    """The store's source with a hook after each live read (the test's hold)."""

    def __init__(self, store: st.Store) -> None:
        super().__init__(store)
        self.after_row: Callable[[], None] = lambda: None
        self.after_entries: Callable[[], None] = lambda: None

    def live_game(self, match_id: int, game_index: int) -> st.LiveGameRow | None:
        row = super().live_game(match_id, game_index)
        self.after_row()
        return row

    def live_entries(self, live_id: int, after_seq: int) -> list[st.LiveEntry]:
        entries = super().live_entries(live_id, after_seq)
        self.after_entries()
        return entries


@dataclass
class Live:
    store: st.Store
    match: st.MatchRow
    record: Record
    head: dict[str, object]
    entries: list[dict[str, object]]
    source: HookedSource

    def replay_anew(self) -> st.LiveGameRow:
        """The game started again (a resumed match), in a later millisecond than before."""
        started = st.get_live_game(self.store, self.match.id, 0).started_at
        wait_until(lambda: utc_now() > started, "the next millisecond", 5, interval_s=0.001)
        st.start_live_game(self.store, self.match.id, 0, self.head)
        return st.get_live_game(self.store, self.match.id, 0)

    def store_the_game(self) -> float:
        """Store game 0; when it finished (seconds since the epoch)."""
        seats = (self.match.first, self.match.second)
        game_id = store_game(self.store, self.match.id, report_for(0, seats, self.record))
        assert game_id is not None
        return epoch_s(st.get_game(self.store, game_id).finished_at)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Live]:
    store = st.Store.open(tmp_path / "data")
    demo = play_demo_tournament(store, tmp_path / "bots", bots=("ann", "bob"), max_games=0)
    match = st.list_matches(store, demo.tournament_id)[0]
    record = play_random_game(match.seed)
    head, entries = live_parts(record, (match.first, match.second))
    try:
        yield Live(store, match, record, head, entries, HookedSource(store))
    finally:
        assert demo.lease is not None
        demo.lease.release()
        store.close()


def in_thread(name: str, call: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    """``call()`` in a started thread; its answer (or exception) lands in the list."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(call())
        except BaseException as error:  # the test re-raises it
            out.append(error)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread, out


def answer(out: list[Any]) -> dict[str, Any]:
    assert len(out) == 1, out
    if isinstance(out[0], BaseException):
        raise out[0]
    result: dict[str, Any] = out[0]
    return result


def test_two_polls_reading_the_same_new_entries_keep_each_once(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both polls of a game ask for its entries after the last one kept: each entry is
    kept once and the frames are the game's.

    The race, forced: the first poll, its entries read, is held until the second waits
    for the feed's lock or has read the same entries itself."""
    st.start_live_game(live.store, live.match.id, 0, live.head)
    st.add_live_actions(live.store, live.match.id, 0, live.entries[:12])
    feed = SpectatorFeed(live.source)
    watched = WatchedLock(feed._lock)
    monkeypatch.setattr(feed, "_lock", watched)
    reads: list[str] = []
    first_read = threading.Event()
    second: threading.Thread | None = None

    def held() -> None:
        reads.append(threading.current_thread().name)
        if threading.current_thread().name == "first":
            first_read.set()
            wait_until(lambda: second is not None and (watched.waits(second) or len(reads) > 1),
                       "the second poll waiting for the lock, or past its read", 10)  # fmt: skip

    live.source.after_entries = held
    now = time.time() + 60
    first, first_out = in_thread("first", lambda: feed.poll(live.match.id, 0, -1, now))
    assert first_read.wait(10)
    second, second_out = in_thread("second", lambda: feed.poll(live.match.id, 0, -1, now))
    first.join(20)
    second.join(20)
    one, two = answer(first_out), answer(second_out)
    actions = sum(1 for entry in live.entries[:12] if "reshuffle" not in entry)
    for payload in (one, two):
        assert payload["error"] is None, payload["error"]
        assert payload["steps"] == actions and len(payload["frames"]) == actions + 1
    followed = feed._games[one["live_id"]]
    assert [entry for entry, _ in followed.entries] == live.entries[:12]


def test_a_poll_that_read_the_old_run_leaves_the_game_pointed_at_the_new_one(
    live: Live,
) -> None:
    """A poll reads the game's row, then the game is played anew and another poll follows
    the new run; the first poll then follows the run it read. Once the game is stored, a
    delayed page plays on from the new run, never from the abandoned one.

    The race, forced: the first poll is held between reading the row and following it
    until the new run has been followed."""
    st.start_live_game(live.store, live.match.id, 0, live.head)
    st.add_live_actions(live.store, live.match.id, 0, live.entries[:10])
    feed = SpectatorFeed(live.source, delay_s=DELAY_S)
    row_read, new_run_followed = threading.Event(), threading.Event()

    def held() -> None:
        if threading.current_thread().name == "stale":
            row_read.set()
            assert new_run_followed.wait(10), "the new run was never followed"

    live.source.after_row = held
    now = time.time() + DELAY_S
    stale, stale_out = in_thread("stale", lambda: feed.poll(live.match.id, 0, -1, now))
    assert row_read.wait(10)
    new_row = live.replay_anew()
    st.add_live_actions(live.store, live.match.id, 0, live.entries[:4])
    fresh = feed.poll(live.match.id, 0, -1, time.time() + DELAY_S)
    assert fresh["live_id"] == run_key(new_row)
    new_run_followed.set()
    stale.join(20)
    assert answer(stale_out)["live_id"] != run_key(new_row)  # it answers what it read
    finished = live.store_the_game()
    playing = feed.poll(live.match.id, 0, -1, finished + DELAY_S - 1)
    assert playing["status"] == "live"
    assert playing["live_id"] == run_key(new_row), "the abandoned run came back"


def test_dropping_an_old_run_keeps_the_new_run_of_its_game(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The feed keeps CACHE_SIZE runs; dropping a game's abandoned run for room leaves
    the game pointed at its new run."""
    monkeypatch.setattr(live_module, "CACHE_SIZE", 2)
    feed = SpectatorFeed(live.source, delay_s=DELAY_S)
    st.start_live_game(live.store, live.match.id, 0, live.head)
    feed.poll(live.match.id, 0, -1, time.time() + DELAY_S)
    new_row = live.replay_anew()
    feed.poll(live.match.id, 0, -1, time.time() + DELAY_S)
    st.start_live_game(live.store, live.match.id, 1, live.head)  # the third run: one goes
    feed.poll(live.match.id, 1, -1, time.time() + DELAY_S)
    assert len(feed._games) == 2 and len(feed._runs) <= 2
    finished = live.store_the_game()
    playing = feed.poll(live.match.id, 0, -1, finished + DELAY_S - 1)
    assert (playing["status"], playing["live_id"]) == ("live", run_key(new_row))


def test_many_games_keep_the_feed_bounded(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    """Polls of more runs than the feed keeps: it keeps CACHE_SIZE of them, the latest."""
    monkeypatch.setattr(live_module, "CACHE_SIZE", 3)
    feed = SpectatorFeed(live.source)
    st.start_live_game(live.store, live.match.id, 0, live.head)
    rows = [st.get_live_game(live.store, live.match.id, 0)]
    for _ in range(5):
        feed.poll(live.match.id, 0, -1, time.time() + 60)
        rows.append(live.replay_anew())
    feed.poll(live.match.id, 0, -1, time.time() + 60)
    assert list(feed._games) == [run_key(row) for row in rows[-3:]]
    assert feed._runs == {(live.match.id, 0): run_key(rows[-1])}
