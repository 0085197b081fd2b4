"""One spectator delay for every public path: a game's start, actions and end show only once
the delay has passed, on the live list, the live game, frames, records, the leaderboard,
tournament, ladder and bot pages, and the gRPC API's views for anyone but the admin.

Each path is probed during the delay (with the real clock and a delay of an hour) and
after it (the app's clock moved past it); the same probes with no delay are the control:
there the game shows at once.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from arena import store as st
from arena.kahuna import Record, play_random_game
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.referee.botdir import load_bot
from arena.server.app import create_server
from arena.server.arena_service import ServiceOptions
from arena.testing.demo_data import play_demo_tournament, report_for, write_bot_dir
from arena.testing.live_games import live_parts
from arena.testing.waiting import wait_until
from arena.tournament.policy.results import store_game
from arena.tournament.view.spectator_delay import MAX_VIEWS, DelayLine, stamp
from arena.web.app import WebApp
from arena.web.source import StoreSource

HOUR = 3600.0


@dataclass
class Played:
    store: st.Store
    match: st.MatchRow
    record: Record
    tournament_id: int
    game_id: int = 0


@pytest.fixture
def played(tmp_path: Path) -> Iterator[Played]:
    """A round robin of two bots whose first game is played live, then stored."""
    store = st.Store.open(tmp_path / "data")
    demo = play_demo_tournament(store, tmp_path / "bots", bots=("ann", "bob"), max_games=0)
    match = st.list_matches(store, demo.tournament_id)[0]
    record = play_random_game(match.seed)
    try:
        yield Played(store, match, record, demo.tournament_id)
    finally:
        assert demo.lease is not None
        demo.lease.release()
        store.close()


def play_live(game: Played, actions: int | None = None) -> None:
    head, entries = live_parts(game.record, (game.match.first, game.match.second))
    st.start_live_game(game.store, game.match.id, 0, head)
    st.add_live_actions(game.store, game.match.id, 0, entries[:actions])


def finish(game: Played) -> None:
    seats = (game.match.first, game.match.second)
    stored = store_game(game.store, game.match.id, report_for(0, seats, game.record))
    assert stored is not None
    game.game_id = stored


def next_millisecond() -> None:
    """Wait until the store's stamps (milliseconds) read later than now."""
    taken = stamp(time.time())
    wait_until(lambda: stamp(time.time()) > taken, "the next millisecond", 5, interval_s=0.001)


class Clock:
    """The real time, or the moment ``at`` when set, moved forward by ``offset`` seconds."""

    def __init__(self) -> None:
        self.offset = 0.0
        self.at: float | None = None

    def __call__(self) -> float:
        return (time.time() if self.at is None else self.at) + self.offset


def get(app: WebApp, path: str, query: dict[str, str] | None = None) -> tuple[int, str]:
    response = app.handle("GET", path, query or {})
    return response.status, response.body.decode()


def game_paths(game: Played) -> list[str]:
    g = game.game_id
    return [f"/games/{g}", f"/api/games/{g}", f"/api/games/{g}/record",
            f"/api/games/{g}/frames"]  # fmt: skip


def test_no_path_shows_a_game_before_the_delay_has_passed(played: Played) -> None:
    clock = Clock()
    app = WebApp(StoreSource(played.store), spectator_delay_s=HOUR, clock=clock)
    control = WebApp(StoreSource(played.store))  # no delay: everything at once
    board_before = get(app, "/api/leaderboard")
    tournament_before = get(app, f"/api/tournaments/{played.tournament_id}")
    h2h = ("/api/h2h", {"a": played.match.first, "b": played.match.second})
    h2h_before = get(app, *h2h)
    # Stamps are milliseconds: an answer taken in the millisecond a game starts may hold
    # it, so the delay line (rightly) keeps none; the game starts in a later one.
    next_millisecond()
    play_live(played)
    # The start: not in the live list, the game "waiting", as it was an hour ago.
    assert json.loads(get(app, "/api/live")[1])["games"] == []
    assert json.loads(get(control, "/api/live")[1])["games"] != []
    live = json.loads(get(app, f"/api/live/{played.match.id}/0")[1])
    assert (live["status"], live["frames"]) == ("waiting", [])
    assert json.loads(get(control, f"/api/live/{played.match.id}/0")[1])["status"] == "live"
    finish(played)
    # The end: no record, frames or game page; the aggregates as they were before.
    for path in game_paths(played):
        status, body = get(app, path)
        assert status == 404 and f"no game with id {played.game_id}" in body, (path, body)
        assert get(control, path)[0] in (200, 403), path  # the control: it exists
    assert get(app, "/api/leaderboard") == board_before
    assert get(control, "/api/leaderboard") != board_before
    assert get(app, f"/api/tournaments/{played.tournament_id}") == tournament_before
    tournament_page = get(app, f"/tournaments/{played.tournament_id}")[1]
    assert f"/games/{played.game_id}" not in tournament_page
    assert f"/games/{played.game_id}" in get(control, f"/tournaments/{played.tournament_id}")[1]
    assert get(app, *h2h) == h2h_before  # head to head: as before the game
    assert get(control, *h2h) != h2h_before
    live_page = get(app, "/live")
    assert live_page[0] == 200 and f"/games/{played.game_id}" not in live_page[1]
    assert f"/games/{played.game_id}" in get(control, "/live")[1]  # recently finished
    assert json.loads(get(app, f"/api/live/{played.match.id}/0")[1])["status"] == "waiting"
    # Once the delay has passed, all of it shows.
    clock.offset = HOUR + 1
    assert json.loads(get(app, f"/api/live/{played.match.id}/0")[1])["status"] == "finished"
    for path in game_paths(played):
        assert get(app, path)[0] in (200, 403), path  # 403: a deal still withheld (R9)
    assert get(app, "/api/leaderboard") == get(control, "/api/leaderboard")


def test_a_game_ended_within_the_delay_plays_on_to_the_cut(played: Played) -> None:
    clock = Clock()
    app = WebApp(StoreSource(played.store), spectator_delay_s=HOUR, clock=clock)
    play_live(played, 30)
    next_millisecond()  # stamps are milliseconds: the 30th action's is before the middle
    timing_mid = time.time()
    next_millisecond()  # and the end's after it
    finish(played)
    timing = st.stored_timing(played.store, played.match.id, 0)
    assert timing is not None and timing.started_at is not None and timing.action_ms
    # An hour after the middle of the game, held there however slowly the requests run:
    # live, with the actions applied by then only.
    clock.at, clock.offset = timing_mid, HOUR
    live = json.loads(get(app, f"/api/live/{played.match.id}/0")[1])
    assert live["status"] == "live" and live["steps"] == 30 and live["game_id"] is None
    listed = json.loads(get(app, "/api/live")[1])["games"]
    assert [(g["match_id"], g["game_index"]) for g in listed] == [(played.match.id, 0)]
    assert get(app, f"/api/games/{played.game_id}")[0] == 404
    clock.at, clock.offset = None, HOUR + 1
    assert json.loads(get(app, "/api/live")[1])["games"] == []


def test_a_game_in_play_at_the_cut_and_stored_since_is_listed_with_its_bots(
    played: Played,
) -> None:
    clock = Clock()
    app = WebApp(StoreSource(played.store), spectator_delay_s=HOUR, clock=clock)
    play_live(played, 30)
    next_millisecond()
    clock.at, clock.offset = time.time(), HOUR  # an hour after the middle of the game
    next_millisecond()
    finish(played)  # no longer live: its row is gone
    bots = [played.match.first, played.match.second]
    [listed] = json.loads(get(app, "/api/live")[1])["games"]
    assert listed["bots"] == bots, listed
    status, page = get(app, "/live")
    assert status == 200, page
    assert all(f'href="/bots/{bot}"' in page for bot in bots)


def test_a_page_first_asked_for_while_games_end_waits_for_the_delay(played: Played) -> None:
    clock = Clock()
    app = WebApp(StoreSource(played.store), spectator_delay_s=HOUR, clock=clock)
    play_live(played)
    finish(played)
    status, body = get(app, f"/api/bots/{played.match.first}")
    assert status == 503 and "not public yet" in body
    clock.offset = HOUR + 1
    assert get(app, f"/api/bots/{played.match.first}")[0] == 200


@pytest.mark.parametrize(("path", "query", "message"), [
    ("/api/bots/nobody", {}, "no bot named 'nobody'"),
    ("/bots/nobody", {}, "no bot named &#39;nobody&#39;"),
    ("/api/tournaments/999", {}, "no tournament with id 999"),
    ("/tournaments/999", {}, "no tournament with id 999"),
    ("/api/h2h", {"a": "nobody", "b": "noone"}, "no bot named 'nobody' or 'noone'"),
    ("/api/ladder/nowhere", {}, "no ladder named 'nowhere'"),
], ids=["bot json", "bot page", "tournament json", "tournament page", "h2h", "ladder"])  # fmt: skip
def test_a_name_nothing_answers_to_is_a_404_not_a_wait(
    played: Played, path: str, query: dict[str, str], message: str
) -> None:
    app = WebApp(StoreSource(played.store), spectator_delay_s=HOUR)
    status, body = get(app, path, query)  # quiet: nothing happened within the delay
    assert (status, message in body) == (404, True), body
    next_millisecond()
    play_live(played)
    finish(played)
    status, body = get(app, path, query)  # a game started and ended within the delay
    assert (status, message in body) == (404, True), body


def test_a_flood_of_names_that_do_not_exist_pushes_out_no_page(played: Played) -> None:
    app = WebApp(StoreSource(played.store), spectator_delay_s=HOUR)
    bot = f"/api/bots/{played.match.first}"
    before = get(app, bot)
    assert before[0] == 200
    next_millisecond()
    play_live(played)
    finish(played)  # from here on a page first asked for waits for the delay
    for number in range(MAX_VIEWS):
        assert get(app, f"/api/bots/nobody-{number}")[0] == 404
        assert get(app, f"/api/tournaments/{10**6 + number}")[0] == 404
    assert get(app, bot) == before  # still the answer kept from before the game


def test_the_delay_line_keeps_the_newest_answer_older_than_the_first_event() -> None:
    events: list[str] = []
    now = [1000.0]
    line: DelayLine[int] = DelayLine(
        10.0, lambda cut: min((e for e in events if e > cut), default=None),
        clock=lambda: now[0],
    )  # fmt: skip
    assert line.answer("v", lambda: 1) == 1  # nothing happened: the fresh answer
    now[0] = 1001.0
    events.append(stamp(1001.5))
    now[0] = 1002.0
    assert line.answer("v", lambda: 2) == 1  # a game ended at 1001.5: the answer before it
    now[0] = 1011.6
    assert line.answer("v", lambda: 3) == 3  # the cut has passed it
    assert line.answer("w", lambda: 9) == 9
    events.append(stamp(1012.0))
    now[0] = 1013.0
    assert line.answer("new", lambda: 4) is None  # first asked for after the event


# ------------------------------------------------------------------ the gRPC API


@contextlib.contextmanager
def _api(store: st.Store, delay_s: float) -> Iterator[pb_grpc.ArenaServiceStub]:
    """A stub of a real API server on ``store`` with spectator delay ``delay_s``."""
    server, port = create_server(
        "127.0.0.1:0", store=store, options=ServiceOptions(spectator_delay_s=delay_s)
    )
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield pb_grpc.ArenaServiceStub(channel)
    finally:
        server.stop(grace=None)


@pytest.mark.slow
def test_the_api_shows_spectators_the_arena_as_it_was(played: Played) -> None:
    admin = st.ensure_admin_token(played.store)
    user = st.create_token(played.store, "someone")
    with _api(played.store, HOUR) as stub:

        def auth(token: str) -> tuple[tuple[str, str], ...]:
            return (("authorization", f"Bearer {token}"),)

        board = stub.GetLeaderboard(pb.GetLeaderboardRequest(), metadata=auth(user))
        listed = stub.ListTournaments(pb.ListTournamentsRequest(), metadata=auth(user))
        name = listed.tournaments[0].name
        quiet = list(stub.WatchTournament(pb.WatchTournamentRequest(name=name),
                                          metadata=auth(user), timeout=20))  # fmt: skip
        assert len(quiet) == 2  # nothing happened within the delay: no wait for the end
        play_live(played)
        finish(played)
        request = pb.GetGameRecordRequest(game_id=played.game_id)
        with pytest.raises(grpc.RpcError) as refused:
            stub.GetGameRecord(request, metadata=auth(user))
        assert refused.value.code() == grpc.StatusCode.NOT_FOUND
        assert f"no finished game {played.game_id}" in str(refused.value.details())
        assert stub.GetGameRecord(request, metadata=auth(admin)).record_json  # the control
        watch = pb.WatchGameRequest(match_id=played.match.id, game_index=0)
        with pytest.raises(grpc.RpcError) as not_over:
            next(iter(stub.WatchGame(watch, metadata=auth(user))))
        assert not_over.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert stub.GetLeaderboard(pb.GetLeaderboardRequest(), metadata=auth(user)) == board
        admin_board = stub.GetLeaderboard(pb.GetLeaderboardRequest(), metadata=auth(admin))
        assert sum(e.bot.games for e in admin_board.entries) == 2  # the control
        again = stub.ListTournaments(pb.ListTournamentsRequest(), metadata=auth(user))
        assert again == listed and again.tournaments[0].games_played == 0
        events = stub.WatchTournament(
            pb.WatchTournamentRequest(name=name), metadata=auth(user),
            timeout=5,
        )  # fmt: skip
        first = next(iter(events))
        assert first.tournament.games_played == 0
        events.cancel()


@pytest.mark.slow
@pytest.mark.parametrize("delay_s", [HOUR, 0.0], ids=["delayed", "control: no delay"])
def test_list_bots_shows_others_bots_as_of_the_cut_and_the_callers_own_at_once(
    tmp_path: Path, delay_s: float
) -> None:
    """ListBots carries every bot's rating and games: a game's end shows in another user's
    bot only once the delay has passed, in the caller's own bot at once (as /api/me)."""
    store = st.Store.open(tmp_path / "data")
    st.add_bot_version(store, load_bot(write_bot_dir(tmp_path / "bots", "ann")), owner="ann")
    demo = play_demo_tournament(store, tmp_path / "bots", bots=("ann", "bob"), max_games=0)
    match = st.list_matches(store, demo.tournament_id)[0]
    game = Played(store, match, play_random_game(match.seed), demo.tournament_id)
    tokens = {user: st.create_token(store, user) for user in ("ann", "carol")}
    admin = st.ensure_admin_token(store)
    try:
        with _api(store, delay_s) as stub:

            def games(token: str) -> dict[str, int]:
                metadata = (("authorization", f"Bearer {token}"),)
                listed = stub.ListBots(pb.ListBotsRequest(), metadata=metadata, timeout=20)
                assert [b.name for b in listed.bots] == ["ann", "bob"]
                return {bot.name: bot.games for bot in listed.bots}

            assert games(tokens["carol"]) == games(tokens["ann"]) == {"ann": 0, "bob": 0}
            play_live(game)
            finish(game)
            assert games(admin) == {"ann": 1, "bob": 1}  # the admin: at once
            assert games(tokens["ann"]) == {"ann": 1, "bob": 1 if not delay_s else 0}
            assert games(tokens["carol"]) == ({"ann": 0, "bob": 0} if delay_s
                                              else {"ann": 1, "bob": 1})  # fmt: skip
    finally:
        assert demo.lease is not None
        demo.lease.release()
        store.close()


@pytest.mark.slow
@pytest.mark.parametrize("delay_s", [HOUR, 0.0], ids=["delayed", "control: no delay"])
def test_a_finished_tournaments_audit_bundle_and_audit_wait_for_the_delay(
    tmp_path: Path, delay_s: float
) -> None:
    """The bundle holds every record and the secret, and AuditTournament's answer is made
    from it (the secret, the games): for anyone but the admin they are public only once
    the tournament's last game is older than the delay."""
    store = st.Store.open(tmp_path / "data")
    demo = play_demo_tournament(store, tmp_path / "bots", bots=("ann", "bob"))
    admin = st.ensure_admin_token(store)
    user = st.create_token(store, "someone")
    try:
        with _api(store, delay_s) as stub:
            request = pb.GetAuditBundleRequest(name="demo-round-robin")

            def bundle(token: str) -> list[pb.GetAuditBundleResponse]:
                metadata = (("authorization", f"Bearer {token}"),)
                return list(stub.GetAuditBundle(request, metadata=metadata, timeout=20))

            def audit(token: str) -> pb.AuditTournamentResponse:
                metadata = (("authorization", f"Bearer {token}"),)
                named = pb.AuditTournamentRequest(name="demo-round-robin")
                return stub.AuditTournament(named, metadata=metadata, timeout=20)

            assert json.loads(bundle(admin)[0].head_json)["secret"]  # the admin: at once
            assert audit(admin).revealed_seed
            if delay_s:
                for call in (bundle, audit):
                    with pytest.raises(grpc.RpcError) as refused:
                        call(user)
                    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
                    assert "spectator delay" in str(refused.value.details())
            else:
                parts = bundle(user)
                assert json.loads(parts[0].head_json)["secret"] and len(parts) > 1
                assert audit(user).revealed_seed  # (the demo's games are made up: no pass)
    finally:
        if demo.lease is not None:
            demo.lease.release()
        store.close()
