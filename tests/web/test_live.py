"""Public live games: /api/live frames are the spectator view of the game so far, delayed
on request, never the head's deal or a hidden card; the page becomes the replay at the end."""

from __future__ import annotations

import dataclasses
import json
import random
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena import store as st
from arena.kahuna import Record, State, observe, play_random_game, record_from_json, replay_steps
from arena.kahuna.spectate import spectate
from arena.referee.result_words import result_words
from arena.store.db import utc_now
from arena.testing.demo_data import play_demo_tournament, report_for
from arena.testing.live_games import live_parts
from arena.testing.waiting import wait_until
from arena.testing.worlds import other_worlds
from arena.tournament.policy.results import store_game
from arena.web import WebServer, create_web_server
from arena.web.frames import _observed_frame as observed_frame
from arena.web.frames import _true_frame as true_frame
from arena.web.frames import public_frame
from arena.web.live import SpectatorFeed, epoch_s
from arena.web.source import StoreSource

FRAME_ONLY = ("step", "action", "note", "at_ms")


@dataclass
class Live:
    store: st.Store
    match: st.MatchRow
    record: Record
    head: dict[str, object]
    entries: list[dict[str, object]]
    server: WebServer
    base_url: str


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Live]:
    store = st.Store.open(tmp_path / "data")
    demo = play_demo_tournament(store, tmp_path / "bots", bots=("ann", "bob"), max_games=0)
    match = st.list_matches(store, demo.tournament_id)[0]
    record = play_random_game(match.seed)
    head, entries = live_parts(record, (match.first, match.second))
    server, port = create_web_server(store, "127.0.0.1", 0)
    try:
        yield Live(store, match, record, head, entries, server, f"http://127.0.0.1:{port}")
    finally:
        server.stop()
        assert demo.lease is not None
        demo.lease.release()
        store.close()


def get(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def api(live: Live, after: int = -1, game: int = 0) -> dict[str, Any]:
    status, payload = get(f"{live.base_url}/api/live/{live.match.id}/{game}?after={after}")
    assert status == 200, payload
    return payload


def states_of(record: Record) -> list[State]:
    return [step.state for step in replay_steps(record)]


@pytest.mark.slow
def test_frames_follow_the_game_as_entries_arrive(live: Live) -> None:
    assert api(live)["status"] == "waiting"
    st.start_live_game(live.store, live.match.id, 0, live.head)
    first = api(live)
    assert first["status"] == "live" and first["bots"] == [live.match.first, live.match.second]
    assert [f["step"] for f in first["frames"]] == [0]
    shown = 0
    for start in range(0, len(live.entries), 17):
        st.add_live_actions(live.store, live.match.id, 0, live.entries[start : start + 17])
        payload = api(live, after=shown)
        frames = payload["frames"]
        assert isinstance(frames, list) and payload["error"] is None
        assert [f["step"] for f in frames] == list(range(shown + 1, payload["steps"] + 1))
        shown = int(payload["steps"])
        if shown < len(live.record.actions):
            assert payload["over"] is None, payload["over"]  # the game goes on
    assert shown == len(live.record.actions)
    outcome = states_of(live.record)[-1].outcome
    assert outcome is not None
    seats = (live.match.first, live.match.second)  # the result in words, never a bare code
    assert api(live)["over"] == result_words(seats, outcome.winner, str(outcome.termination))
    everything = api(live)["frames"]
    assert isinstance(everything, list)
    for frame, state in zip(everything, states_of(live.record), strict=True):
        assert {k: v for k, v in frame.items() if k not in FRAME_ONLY} == public_frame(
            spectate(state)
        )


@pytest.mark.slow
def test_no_frame_differs_between_worlds_either_seat_cannot_rule_out(live: Live) -> None:
    """The leak test of tests/kahuna/test_spectate.py, on what /api/live sends."""
    st.start_live_game(live.store, live.match.id, 0, live.head)
    st.add_live_actions(live.store, live.match.id, 0, live.entries)
    frames = api(live)["frames"]
    assert isinstance(frames, list)
    rng = random.Random(7)
    checked = 0
    for frame, state in zip(frames, states_of(live.record), strict=True):
        sent = {k: v for k, v in frame.items() if k not in FRAME_ONLY}
        for seat in (0, 1):
            for world in other_worlds(state, seat, rng, 2):
                assert json.dumps(public_frame(spectate(world))) == json.dumps(sent)
                checked += 1
    assert checked > 100
    text = json.dumps(api(live))
    assert '"deal"' not in text and "reshuffle" not in text and '"drawn": "' not in text


@pytest.mark.slow
def test_control_the_referee_s_frames_fail_the_same_check(live: Live) -> None:
    """The check above can fail: the "all" perspective's frame (true_frame) and a seat's
    (observed_frame of seat 0) differ between worlds a seat cannot tell apart."""
    rng = random.Random(7)
    differs = {"all": 0, "seat 0": 0}
    for state in states_of(live.record)[:40]:
        for seat in (0, 1):
            for world in other_worlds(state, seat, rng, 1):
                differs["all"] += true_frame(world) != true_frame(state)
                seen = observed_frame(observe(world, 0)) != observed_frame(observe(state, 0))
                differs["seat 0"] += seen
    assert differs["all"] > 0 and differs["seat 0"] > 0, differs


@pytest.mark.slow
def test_a_delayed_page_shows_only_what_the_store_had_that_long_ago(live: Live) -> None:
    feed = SpectatorFeed(StoreSource(live.store), delay_s=30)
    st.start_live_game(live.store, live.match.id, 0, live.head)
    st.add_live_actions(live.store, live.match.id, 0, live.entries[:10])
    started = epoch_s(st.get_live_game(live.store, live.match.id, 0).started_at)
    early = feed.poll(live.match.id, 0, -1, started + 29.9)
    assert (early["status"], early["frames"], early["delay_s"]) == ("waiting", [], 30)
    live_id = st.get_live_game(live.store, live.match.id, 0).id
    newest = max(e.added_at for e in st.live_entries(live.store, live_id))
    first = epoch_s(newest)
    # stamps are milliseconds: the next actions' must read later
    wait_until(lambda: utc_now() > newest, "the next millisecond", 5, interval_s=0.001)
    st.add_live_actions(live.store, live.match.id, 0, live.entries[10:20])
    assert feed.poll(live.match.id, 0, -1, first + 30)["steps"] == 10
    assert feed.poll(live.match.id, 0, 10, first + 30)["frames"] == [], "not yet"
    assert feed.poll(live.match.id, 0, 10, time.time() + 30)["steps"] == 20


@pytest.mark.slow
def test_a_round_s_last_action_waits_for_the_next_round_s_order(live: Live) -> None:
    at = next(i for i, e in enumerate(live.entries) if "reshuffle" in e)
    st.start_live_game(live.store, live.match.id, 0, live.head)
    st.add_live_actions(live.store, live.match.id, 0, live.entries[:at])
    before = api(live)
    assert before["error"] is None and before["steps"] == at - 1
    st.add_live_actions(live.store, live.match.id, 0, [live.entries[at]])
    after = api(live, after=at - 1)
    assert after["steps"] == at and [f["step"] for f in after["frames"]] == [at]
    assert "round 2 began" in after["frames"][0]["note"]


@pytest.mark.slow
def test_a_game_played_anew_gets_a_new_live_id(live: Live) -> None:
    st.start_live_game(live.store, live.match.id, 0, live.head)
    st.add_live_actions(live.store, live.match.id, 0, live.entries[:5])
    first = api(live)
    # a replay in the same millisecond, of a row id SQLite reuses, would be the same run
    started = st.get_live_game(live.store, live.match.id, 0).started_at
    wait_until(lambda: utc_now() > started, "the next millisecond", 5, interval_s=0.001)
    st.start_live_game(live.store, live.match.id, 0, live.head)
    again = api(live, after=5)
    assert again["live_id"] != first["live_id"] and again["steps"] == 0


@pytest.mark.slow
def test_the_stored_game_turns_the_page_into_its_replay(live: Live) -> None:
    st.start_live_game(live.store, live.match.id, 0, live.head)
    st.add_live_actions(live.store, live.match.id, 0, live.entries)
    seats = (live.match.first, live.match.second)
    game_id = store_game(live.store, live.match.id, report_for(0, seats, live.record))
    payload = api(live)
    assert (payload["status"], payload["game_id"], payload["frames"]) == ("finished", game_id, [])
    request = urllib.request.Request(f"{live.base_url}/live/{live.match.id}/0")
    opener = urllib.request.build_opener(NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as raised:
        opener.open(request, timeout=10)
    assert raised.value.code == 303
    assert raised.value.headers["Location"] == f"/games/{game_id}"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/api/live/999999/0", 404, "no match 999999"),
        ("/api/live/{m}/7", 404, "has no game 7"),
        ("/api/live/{m}/0?after=x", 400, "after must be a step number"),
    ],
)
def test_refusals_name_the_problem(live: Live, path: str, status: int, message: str) -> None:
    code, payload = get(live.base_url + path.format(m=live.match.id))
    assert code == status and message in str(payload["error"])


@pytest.mark.slow
def test_the_live_list_and_page_render(live: Live) -> None:
    st.start_live_game(live.store, live.match.id, 0, live.head)
    status, payload = get(f"{live.base_url}/api/live")
    assert status == 200
    tournament = st.get_tournament(live.store, live.match.tournament_id).name
    assert payload["games"] == [
        {"match_id": live.match.id, "game_index": 0, "tournament_id": live.match.tournament_id,
         "started_at": payload["games"][0]["started_at"], "tournament": tournament,
         "bots": payload["games"][0]["bots"], "actions": 0,
         "url": f"/live/{live.match.id}/0"}
    ]  # fmt: skip
    assert sorted(payload["games"][0]["bots"]) == sorted([live.match.first, live.match.second])
    with urllib.request.urlopen(f"{live.base_url}/live/{live.match.id}/0", timeout=10) as page:
        html = page.read().decode()
    assert f'data-live="{live.match.id}/0"' in html and live.match.first in html
    assert 'name="perspective"' not in html  # no way to ask for more than the public view
    record_from_json({**live.head})  # the head is a record: what the feed replays


@pytest.mark.slow
def test_a_stored_game_s_public_perspective_is_what_a_spectator_saw(live: Live) -> None:
    seats = (live.match.first, live.match.second)
    game_id = store_game(live.store, live.match.id, report_for(0, seats, live.record))
    status, payload = get(f"{live.base_url}/api/games/{game_id}/frames?perspective=public")
    assert status == 200 and payload["perspective"] == "public"
    for frame, state in zip(payload["frames"], states_of(live.record), strict=True):
        assert {k: v for k, v in frame.items() if k not in FRAME_ONLY} == public_frame(
            spectate(state)
        )
        assert frame["hands"] == [None, None] and frame["facedown_discards"] == [None, None]
    texts = {f["action"]["text"] for f in payload["frames"][1:]}
    assert "draw deck" in texts and not any(
        t.startswith("discard ") and "(" not in t for t in texts
    )


def test_a_view_without_its_history_differs_only_there() -> None:
    for step in replay_steps(play_random_game(9)):
        full, short = spectate(step.state), spectate(step.state, history=False)
        assert short.history == () and dataclasses.replace(full, history=()) == short


@pytest.mark.slow
def test_a_delayed_page_plays_on_after_the_game_is_stored_until_the_delay(live: Live) -> None:
    feed = SpectatorFeed(StoreSource(live.store), delay_s=30)
    st.start_live_game(live.store, live.match.id, 0, live.head)
    st.add_live_actions(live.store, live.match.id, 0, live.entries[:-3])
    now = time.time()
    shown = [e for e in live.entries[:-3] if "reshuffle" not in e]
    assert feed.poll(live.match.id, 0, -1, now + 30)["steps"] == len(shown)
    seats = (live.match.first, live.match.second)
    game_id = store_game(live.store, live.match.id, report_for(0, seats, live.record))
    assert game_id is not None
    stored = st.get_game(live.store, game_id)
    finished = epoch_s(stored.finished_at)
    playing = feed.poll(live.match.id, 0, -1, finished + 29)
    assert playing["status"] == "live" and playing["game_id"] is None
    over = feed.poll(live.match.id, 0, -1, finished + 30)
    assert (over["status"], over["game_id"]) == ("finished", game_id)
    fresh = SpectatorFeed(StoreSource(live.store), delay_s=30)  # never followed it: not over
    assert fresh.poll(live.match.id, 0, -1, finished + 1)["status"] != "finished"  # till 30 s
    assert fresh.poll(live.match.id, 0, -1, finished + 30)["status"] == "finished"


@pytest.mark.slow
def test_the_tournament_page_links_its_games_in_play(live: Live) -> None:
    page_url = f"{live.base_url}/tournaments/{live.match.tournament_id}"
    with urllib.request.urlopen(page_url, timeout=10) as page:
        assert 'id="live-now"' not in page.read().decode()
    st.start_live_game(live.store, live.match.id, 0, live.head)
    with urllib.request.urlopen(page_url, timeout=10) as page:
        assert f'href="/live/{live.match.id}/0"' in page.read().decode()
