"""/api/play: a person's seat of a referee match, over HTTP.

The view is the bot protocol's observation turned into the engine's JSON (held
to ``observe`` on random games); whole games are played through the API
against a sandboxed house bot, every response held to the seat's view, the
game stored unrated; every refusal names its problem and limit; a person who
does not move loses on the clock like a bot.
"""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from arena import store as st
from arena.kahuna import (
    Variant,
    observation_to_json,
    observe,
    parse_record,
    play_random_game,
    replay_steps,
)
from arena.protocol.convert import observation_to_pb
from arena.referee.botdir import load_bot
from arena.referee.types import TimeControl
from arena.resources import sample_bot
from arena.store.play import PlaySeat, insert_play_tournament
from arena.store.tokens import token_digest
from arena.testing.examples import examples
from arena.testing.seat_leaks import SeatLeak, SeatTruth, check_payload
from arena.testing.waiting import wait_until
from arena.tournament.policy.audit import audit_tournament
from arena.tournament.policy.play_pool import (
    DUPLICATE,
    OWN_BOT,
    SETTING_OFF,
    store_play_game,
)
from arena.web import create_web_server
from arena.web.app import WebApp
from arena.web.play import (
    MAX_POLL_MS,
    MIN_POLL_MS,
    TABLE_TOKEN_BOUND_S,
    PlayOptions,
    PlayTables,
    event_json,
    seat_view,
)
from arena.web.source import StoreSource

Json = dict[str, object]


@settings(max_examples=examples(25), deadline=None)
@given(hs.integers(0, 2**31), hs.booleans(), hs.booleans(), hs.integers(0, 1))
def test_the_seat_view_is_the_engine_observation(
    seed: int, strategic: bool, tactical: bool, seat: int
) -> None:
    record = play_random_game(seed, Variant(strategic, tactical))
    history: list[Json] = []
    sent = 0
    for step in replay_steps(record):
        state = step.state
        obs = observation_to_pb(state, seat, state.history[sent:], sent)
        sent = len(state.history)
        del history[obs.history_start:]
        history.extend(event_json(event) for event in obs.history)
        assert seat_view(obs, history) == observation_to_json(observe(state, seat))


class Client:
    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.token = token

    def call(
        self, method: str, path: str, body: object = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Json]:
        sent = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        sent.update(headers or {})
        data = None if body is None else body if isinstance(body, bytes) else json.dumps(body)
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", method=method,
            data=data.encode() if isinstance(data, str) else data,
            headers={k: v for k, v in sent.items() if v},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())


@pytest.fixture
def arena_site(tmp_path: Path) -> Iterator[tuple[st.Store, PlayTables, Client, Client]]:
    yield from _site(tmp_path, PlayOptions(time_control=TimeControl(action_ms=3000, bank_ms=0)))


def _site(
    tmp_path: Path, options: PlayOptions
) -> Iterator[tuple[st.Store, PlayTables, Client, Client]]:
    """A web server with play tables of ``options`` and two people, ann and bob."""
    store = st.Store.open(tmp_path / "data")
    tables = PlayTables(store, options)
    server, port = create_web_server(store, "127.0.0.1", 0, tables=tables)
    ann = Client(port, st.create_token(store, "ann"))
    bob = Client(port, st.create_token(store, "bob"))
    try:
        yield store, tables, ann, bob
    finally:
        server.stop()
        for table in list(tables._tables.values()):
            table.done.wait(60)
        store.close()


def _your_turn(client: Client, table_id: str) -> Json | None:
    """The table's state once it is the person's turn (None before)."""
    payload = client.call("GET", f"/api/play/{table_id}")[1]
    return payload if payload["status"] == "your_turn" else None


def play_out(client: Client, table_id: str, rng: random.Random) -> list[Json]:
    """Play random legal actions until the game is stored; every response seen."""
    seen: list[Json] = []

    def moved() -> Json | None:
        """The table once the person may act or the game is over (None before)."""
        status, payload = client.call("GET", f"/api/play/{table_id}")
        assert status == 200, payload
        seen.append(payload)
        return payload if payload["status"] in ("your_turn", "stored", "failed") else None

    while True:
        payload = wait_until(moved, "the person's turn or the game's end", 180,
                             state=lambda: seen[-1])  # fmt: skip
        if payload["status"] in ("stored", "failed"):
            return seen
        legal = payload["legal"]
        assert isinstance(legal, list) and legal
        move = {"action": rng.choice(legal)["text"], "request": payload["request"]}
        status, payload = client.call("POST", f"/api/play/{table_id}/action", move)
        assert status == 200, payload
        seen.append(payload)


@pytest.mark.slow
@pytest.mark.parametrize(("seat", "bot", "variant"), [
    (0, "python_random", {}), (1, "python_greedy", {"strategic": True, "tactical": True}),
])  # fmt: skip
def test_a_whole_game_is_played_stored_unrated_and_shows_only_the_seat(
    arena_site: tuple[st.Store, PlayTables, Client, Client], seat: int, bot: str,
    variant: dict[str, bool],
) -> None:  # fmt: skip
    store, _, ann, _ = arena_site
    assert bot in ann.call("GET", "/api/play/bots")[1]["bots"]  # type: ignore[operator]
    status, opened = ann.call("POST", "/api/play", {"bot": bot, "seat": seat, **variant})
    assert status == 201, opened
    seen = play_out(ann, str(opened["table"]), random.Random(seat))
    last = seen[-1]
    assert last["status"] == "stored", last
    game_id = last["game"]
    assert isinstance(game_id, int)
    record = st.game_record(store, game_id)
    parsed = parse_record(json.dumps(record))
    assert parsed.result is not None and parsed.variant == Variant(**variant)
    assert record["match"]["bots"][seat]["name"] == "human-ann"  # type: ignore[index]
    truth = SeatTruth(parsed)
    for payload in seen:
        check_payload(payload, truth)
    turns = [p for p in seen if p["status"] == "your_turn"]
    assert turns and all(p["view"]["seat"] == seat for p in turns)  # type: ignore[index]
    result = last["result"]
    assert isinstance(result, dict)
    winner = parsed.result.winner
    assert result["winner_seat"] == winner
    for version in (st.get_version(store, bot), st.get_version(store, "human-ann")):
        assert (version.mu, version.sigma, version.games) == (25.0, 25.0 / 3, 1), version
    assert st.list_tournaments(store) == []  # a person's game is kept out of the lists
    [tournament] = st.list_tournaments(store, with_play=True)
    assert tournament.name.startswith("play-ann-") and tournament.status == "finished"
    assert (last["rated"], last["unrated_reason"]) == (False, SETTING_OFF)
    assert audit_tournament(store, tournament.id).ok
    [listed] = _listed(ann, "/api/play/games", "games")
    assert (listed["game"], listed["rated"], listed["seat"]) == (game_id, False, seat)
    assert ann.call("GET", "/api/play/ratings")[1] == {"people": [], "bots": []}


@pytest.mark.slow
def test_duplicate_mode_plays_the_same_deal_from_the_persons_seat(
    arena_site: tuple[st.Store, PlayTables, Client, Client],
) -> None:
    store, tables, ann, _ = arena_site
    request = {"bot": "python_random", "seat": 1, "reference": "python_greedy"}
    status, opened = ann.call("POST", "/api/play", request)
    assert status == 201 and opened["reference"] == "python_greedy", opened
    seen = play_out(ann, str(opened["table"]), random.Random(5))
    last = seen[-1]
    assert last["status"] == "stored", last
    record = st.game_record(store, last["game"])  # type: ignore[arg-type]
    truth = SeatTruth(parse_record(json.dumps(record)))
    for payload in seen:
        check_payload(payload, truth)
    table = tables.table(st.Principal("ann", "user"), str(opened["table"]))
    duplicate = table.duplicate_record
    assert duplicate is not None and duplicate["deal"] == record["deal"]
    bots = duplicate["match"]["bots"]  # type: ignore[index]
    assert bots[1]["name"] == "python_greedy" and bots[0]["name"] == "python_random"
    replayed = parse_record(json.dumps(duplicate)).result
    assert replayed is not None
    compared = last["duplicate"]
    assert isinstance(compared, dict)
    assert compared["points"] == list(replayed.points)
    assert compared["winner_seat"] == replayed.winner
    assert compared["person_points"] == record["result"]["points"]  # type: ignore[index]
    assert len(st.list_games(store)) == 1  # the duplicate is compared, not stored


@pytest.mark.slow
def test_a_planted_field_fails_the_check(
    arena_site: tuple[st.Store, PlayTables, Client, Client],
) -> None:
    store, _, ann, _ = arena_site
    _, opened = ann.call("POST", "/api/play", {"bot": "python_random", "seat": 0})
    seen = play_out(ann, str(opened["table"]), random.Random(3))
    truth = SeatTruth(parse_record(json.dumps(st.game_record(store, seen[-1]["game"]))))  # type: ignore[arg-type]
    turn = next(p for p in seen if p["status"] == "your_turn")
    view = turn["view"]
    assert isinstance(view, dict)
    hidden = list(truth.state_at(len(view["history"])).hands[1])
    with pytest.raises(SeatLeak, match="keys beyond"):
        check_payload({**turn, "opponent_hand": hidden}, truth)
    with pytest.raises(SeatLeak, match="differs"):
        check_payload({**turn, "view": {**view, "opponent_hand": hidden}}, truth)
    with pytest.raises(SeatLeak, match="differs"):
        check_payload({**turn, "view": {**view, "hand": hidden}}, truth)


@pytest.mark.slow
def test_a_bot_whose_stored_copy_changed_is_not_played_and_its_path_is_not_told(
    arena_site: tuple[st.Store, PlayTables, Client, Client],
) -> None:
    store, _, ann, _ = arena_site
    st.add_bot_version(store, load_bot(sample_bot("python_random")))
    copy = st.bot_spec(store, "python_random").directory
    (copy / "bot.py").write_text("raise SystemExit(1)\n")  # changed on disk since it was stored
    status, payload = ann.call("POST", "/api/play", {"bot": "python_random", "seat": 0})
    assert status == 503, payload
    assert "'python_random' cannot be played now: its stored files are not the version" in str(
        payload["error"])  # fmt: skip
    assert str(store.data_dir) not in json.dumps(payload)
    assert st.list_tournaments(store) == [] and st.list_games(store) == []


@pytest.mark.slow
def test_refusals_name_the_problem(
    arena_site: tuple[st.Store, PlayTables, Client, Client],
) -> None:
    store, tables, ann, bob = arena_site
    st.register_remote_bot(store, "far", owner="bob")
    cases: list[tuple[Client, str, str, object, dict[str, str], int, str]] = [
        (ann, "POST", "/api/play", {"bot": "nobody"}, {}, 404, "no bot named 'nobody'"),
        (ann, "POST", "/api/play", {"bot": "far"}, {}, 422, "hosted by its owner"),
        (ann, "POST", "/api/play", {"bot": "python_random", "seat": 2}, {}, 400,
         "seat must be 0 or 1"),
        (ann, "POST", "/api/play", {"bot": "python_random", "tactical": "yes"}, {}, 400,
         "true or false"),
        (ann, "POST", "/api/play", b"x" * 5000, {}, 413, "the limit is 4096"),
        (ann, "POST", "/api/play", b"{", {}, 400, "not JSON"),
        (ann, "POST", "/api/play", {"bot": "python_random"}, {"Content-Type": "text/plain"},
         415, "application/json"),
        (ann, "POST", "/api/play", {"bot": "python_random"}, {"Authorization": ""}, 401,
         "no token"),
        (Client(ann.port, "wrong"), "POST", "/api/play", {"bot": "python_random"}, {}, 401,
         "unknown token"),
        (ann, "POST", "/api/play", {"bot": "python_random"},
         {"Origin": "http://evil.example"}, 403, "origin"),
        (ann, "GET", "/api/play/nosuchtable", None, {}, 404, "no such table of yours"),
        (ann, "POST", "/api/play/bots", {}, {}, 405, "not allowed"),
    ]  # fmt: skip
    for client, method, path, body, headers, status, message in cases:
        got, payload = client.call(method, path, body, headers)
        assert (got, message in str(payload["error"])) == (status, True), (path, payload)
    assert st.list_tournaments(store) == []

    status, opened = ann.call("POST", "/api/play", {"bot": "python_random", "seat": 1})
    assert status == 201, opened
    table_id = str(opened["table"])
    status, payload = ann.call("POST", "/api/play", {"bot": "python_random"})
    assert status == 429 and "max_tables_per_user" in str(payload["error"])
    status, payload = bob.call("GET", f"/api/play/{table_id}")
    assert status == 404, payload  # another user's table is not even named
    payload = wait_until(lambda: _your_turn(ann, table_id), "ann's turn", 60, interval_s=0.05,
                         state=lambda: ann.call("GET", f"/api/play/{table_id}")[1])  # fmt: skip
    move = {"action": "place NOWHERE", "request": payload["request"]}
    status, refused = ann.call("POST", f"/api/play/{table_id}/action", move)
    assert status == 422 and "not a legal action" in str(refused["error"])
    move = {"action": payload["legal"][0]["text"], "request": 999999}  # type: ignore[index]
    status, refused = ann.call("POST", f"/api/play/{table_id}/action", move)
    assert status == 409 and "not the open one" in str(refused["error"])
    status, refused = bob.call("POST", f"/api/play/{table_id}/action", move)
    assert status == 404
    # ann never moves: her 3 s clock runs out and she loses on time, as a bot would
    table = tables.table(st.Principal("ann", "user"), table_id)
    assert table.done.wait(60)
    final = ann.call("GET", f"/api/play/{table_id}")[1]
    assert final["status"] == "stored", final
    assert final["result"]["your_status"] == "BOT_STATUS_TIMEOUT"  # type: ignore[index]
    assert final["result"]["winner_seat"] == 0  # type: ignore[index]


@pytest.mark.slow
def test_a_game_in_play_reads_running_and_no_resume_can_play_it_beside_the_person(
    arena_site: tuple[st.Store, PlayTables, Client, Client],
) -> None:
    store, tables, ann, _ = arena_site
    status, opened = ann.call("POST", "/api/play", {"bot": "python_random", "seat": 0})
    assert status == 201, opened
    table_id = str(opened["table"])
    wait_until(lambda: _your_turn(ann, table_id), "ann's turn", 60, interval_s=0.05,
               state=lambda: ann.call("GET", f"/api/play/{table_id}")[1])  # fmt: skip
    [listed] = _listed(ann, "/api/play/games", "games")
    tournament_id = listed["tournament"]
    assert isinstance(tournament_id, int)
    status, shown = ann.call("GET", f"/api/tournaments/{tournament_id}")
    assert (status, shown["tournament"]["status"]) == (200, "running"), shown  # type: ignore[index]
    name = st.get_tournament(store, tournament_id).name
    with pytest.raises(st.LeaseHeldError):  # `arena tournament resume` would store a forfeit
        st.acquire_lease(store, tournament_id, name=name, wait_s=0)
    table = tables.table(st.Principal("ann", "user"), table_id)
    assert table.done.wait(60)  # ann never moves: she loses on time
    assert ann.call("GET", f"/api/play/{table_id}")[1]["status"] == "stored"
    assert st.get_tournament(store, tournament_id).status == "finished"
    st.acquire_lease(store, tournament_id, name=name, wait_s=0).release()


@pytest.mark.slow
def test_the_server_wide_table_limit(tmp_path: Path) -> None:
    store = st.Store.open(tmp_path / "data")
    options = PlayOptions(time_control=TimeControl(action_ms=1000, bank_ms=0), max_tables=1)
    tables = PlayTables(store, options)
    server, port = create_web_server(store, "127.0.0.1", 0, tables=tables)
    try:
        ann = Client(port, st.create_token(store, "ann"))
        bob = Client(port, st.create_token(store, "bob"))
        assert ann.call("POST", "/api/play", {"bot": "python_random"})[0] == 201
        status, payload = bob.call("POST", "/api/play", {"bot": "python_random"})
        assert status == 503 and "max_tables" in str(payload["error"]), payload
    finally:
        server.stop()
        for table in list(tables._tables.values()):
            table.done.wait(60)
        store.close()


def test_a_stopped_play_game_s_page_says_it_cannot_be_resumed(tmp_path: Path) -> None:
    store = st.Store.open(tmp_path / "data")
    try:
        st.add_bot_version(store, load_bot(sample_bot("python_random")))
        st.register_remote_bot(store, "human-ann", owner="ann")
        entrants = st.latest_version_ids(store, ["human-ann", "python_random"])
        row = insert_play_tournament(
            store, "play-ann-0123abcd", entrants, st.TournamentConfig(games_per_match=1),
            [st.PlannedRound(1, (st.PlannedMatch("human-ann", "python_random", 1, 0),))],
            PlaySeat("ann", entrants["python_random"], 0, SETTING_OFF),
        )  # fmt: skip
        st.set_status(store, row.id, st.TournamentStatus.RUNNING)  # no table holds its lease
        page = WebApp(StoreSource(store)).handle("GET", f"/tournaments/{row.id}", {})
        body = page.body.decode()
        assert page.status == 200 and "interrupted" in body
        assert "person's game at /play" in body and "tournament resume" not in body
    finally:
        store.close()


def test_a_server_without_tables_says_so(tmp_path: Path) -> None:
    store = st.Store.open(tmp_path / "data")
    try:
        app = WebApp(StoreSource(store))
        for method, path in (("GET", "/api/play/bots"), ("POST", "/api/play")):
            response = app.handle(method, path, {})
            assert response.status == 404 and b"seats no people" in response.body
        assert b'id="disabled"' in app.handle("GET", "/play", {}).body
    finally:
        store.close()


@pytest.mark.parametrize("poll_ms", [MIN_POLL_MS, MAX_POLL_MS])
def test_the_page_polls_as_often_as_the_options_say(tmp_path: Path, poll_ms: int) -> None:
    store = st.Store.open(tmp_path / "data")
    try:
        app = WebApp(StoreSource(store), tables=PlayTables(store, PlayOptions(poll_ms=poll_ms)))
        assert f'src="/static/play.js" data-poll-ms="{poll_ms}"'.encode() in app.handle(
            "GET", "/play", {}
        ).body
    finally:
        store.close()


@pytest.mark.parametrize("poll_ms", [MIN_POLL_MS - 1, MAX_POLL_MS + 1, 0, -400])
def test_a_poll_interval_out_of_range_is_refused_naming_it(poll_ms: int) -> None:
    with pytest.raises(ValueError, match=f"poll_ms must be from 20 to 10000 ms, got {poll_ms}"):
        PlayOptions(poll_ms=poll_ms)


@pytest.mark.parametrize("owner", ["bob", None])
def test_nobody_else_can_take_a_persons_seat_name(tmp_path: Path, owner: str | None) -> None:
    """A bot stored first as human-ann would keep ann from ever sitting at a table."""
    store = st.Store.open(tmp_path / "data")
    try:
        with pytest.raises(st.StoreError, match="only user 'ann' sits as 'human-ann'"):
            st.register_remote_bot(store, "human-ann", owner=owner)
        assert st.register_remote_bot(store, "human-ann", owner="ann")[1]
    finally:
        store.close()


# --- the people's pool -----------------------------------------------------------------


@pytest.fixture
def rated_site(tmp_path: Path) -> Iterator[tuple[st.Store, PlayTables, Client, Client]]:
    """A server whose admin rates everyone's games but bob's (the setting, per user)."""
    options = PlayOptions(time_control=TimeControl(action_ms=1500, bank_ms=0),
                          rated_play=lambda user: user != "bob")  # fmt: skip
    yield from _site(tmp_path, options)


def _listed(client: Client, path: str, key: str) -> list[dict[str, Any]]:
    listed = client.call("GET", path)[1][key]
    assert isinstance(listed, list)
    return listed


def _finished(client: Client, tables: PlayTables, user: str, table_id: str) -> Json:
    assert tables.table(st.Principal(user, "user"), table_id).done.wait(90)
    return client.call("GET", f"/api/play/{table_id}")[1]


@pytest.mark.slow
def test_a_person_who_leaves_a_rated_game_loses_it_in_the_peoples_pool_only(
    rated_site: tuple[st.Store, PlayTables, Client, Client],
) -> None:
    """ann opens a rated table and never moves (she left): her clock runs out, the bot
    wins, and the people's pool says so; the bots' ratings have not moved."""
    store, tables, ann, _ = rated_site
    status, opened = ann.call("POST", "/api/play", {"bot": "python_random", "seat": 0})
    assert status == 201 and (opened["rated"], opened["unrated_reason"]) == (True, None)
    final = _finished(ann, tables, "ann", str(opened["table"]))
    assert final["status"] == "stored" and final["rated"] is True, final
    assert final["result"]["your_status"] == "BOT_STATUS_TIMEOUT"  # type: ignore[index]
    [person] = _listed(ann, "/api/play/ratings", "people")
    [bot] = _listed(ann, "/api/play/ratings", "bots")
    assert (person["name"], person["games"], person["losses"]) == ("ann", 1, 1)
    assert person["mu"] < 25 < bot["mu"] and bot["name"] == "python_random"
    assert bot["version"] == st.get_version(store, "python_random").version
    for name in ("python_random", "human-ann"):
        version = st.get_version(store, name)
        assert (version.mu, version.sigma) == (25.0, 25 / 3)
    [game] = _listed(ann, "/api/play/games", "games")
    assert (game["result"], game["rated"], game["game"]) == ("loss", True, final["game"])
    assert game["rating_after"]["mu"] == person["mu"]
    report = audit_tournament(store, game["tournament"])
    assert report.ok, report.problem  # stored and audited like any tournament
    assert "every version's rating is left as it was" in report.text()
    with store.transaction() as db:  # the control: a bot's rating moved by a play game
        db.execute("UPDATE rating_history SET mu = mu + 1 WHERE game_id = ?", (game["game"],))
    report = audit_tournament(store, game["tournament"])
    assert not report.ok and "moves no bot's rating" in str(report.problem)


@pytest.mark.slow
def test_duplicate_own_bot_and_an_unrated_person_are_never_rated(
    rated_site: tuple[st.Store, PlayTables, Client, Client],
) -> None:
    store, tables, ann, bob = rated_site
    status, dup = ann.call("POST", "/api/play",
                           {"bot": "python_random", "reference": "python_greedy"})  # fmt: skip
    assert status == 201 and (dup["rated"], dup["unrated_reason"]) == (False, DUPLICATE)
    status, off = bob.call("POST", "/api/play", {"bot": "python_random"})
    assert status == 201 and (off["rated"], off["unrated_reason"]) == (False, SETTING_OFF)
    for client, user, table in ((ann, "ann", dup), (bob, "bob", off)):
        final = _finished(client, tables, user, str(table["table"]))
        assert final["status"] == "stored" and final["rated"] is False, final
    assert ann.call("GET", "/api/play/ratings")[1] == {"people": [], "bots": []}
    st.add_bot_version(store, load_bot(_own_copy(store, "ann")), owner="ann")
    status, own = ann.call("POST", "/api/play", {"bot": "anns_bot"})
    assert status == 201 and (own["rated"], own["unrated_reason"]) == (False, OWN_BOT)
    assert _finished(ann, tables, "ann", str(own["table"]))["rated"] is False
    assert ann.call("GET", "/api/play/ratings")[1] == {"people": [], "bots": []}
    reasons = [g["unrated_reason"] for g in _listed(ann, "/api/play/games", "games")]
    assert reasons == [OWN_BOT, DUPLICATE]


def _own_copy(store: st.Store, user: str) -> Path:
    """The house random bot, copied as ``anns_bot`` (a bot ``user`` owns)."""
    import shutil

    source = sample_bot("python_random")
    target = store.data_dir.parent / "anns_bot"
    shutil.copytree(source, target)
    toml = (target / "bot.toml").read_text().replace('"python_random"', '"anns_bot"')
    (target / "bot.toml").write_text(toml)
    return target


def _stored_pool(store: st.Store) -> None:
    """Two people's rated games and bob's third, stored as /play stores them."""
    from arena.referee.types import GameReport
    from arena.store.play import PlaySeat, insert_play_tournament

    st.add_bot_version(store, load_bot(sample_bot("python_random")))
    for number, (user, won) in enumerate((("ann", True), ("bob", False), ("bob", True))):
        human = f"human-{user}"
        st.register_remote_bot(store, human, owner=user)
        entrants = st.latest_version_ids(store, [human, "python_random"])
        row = insert_play_tournament(
            store, f"play-{user}-{number}", entrants, st.TournamentConfig(games_per_match=1),
            [st.PlannedRound(1, (st.PlannedMatch(human, "python_random", 1, 0),))],
            PlaySeat(user, entrants["python_random"], 0, None),
        )  # fmt: skip
        match = st.list_matches(store, row.id)[0]
        report = GameReport(
            index=0, bots_by_seat=(human, "python_random"),
            winner=human if won else "python_random", reason="points", statuses={},
            actions=10, time_ms={}, record={"format": "kahuna-record/1"},
        )  # fmt: skip
        store_play_game(store, match.id, report, human, rated_play=True)


def test_the_pool_page_and_json_and_each_persons_own_games(tmp_path: Path) -> None:
    store = st.Store.open(tmp_path / "data")
    try:
        _stored_pool(store)
        ann = {"authorization": f"Bearer {st.create_token(store, 'ann')}"}
        app = WebApp(StoreSource(store), tables=PlayTables(store))
        response = app.handle("GET", "/api/play/ratings", {})
        assert response.status == 200
        pool = json.loads(response.body)
        assert [(p["name"], p["games"], p["wins"], p["losses"]) for p in pool["people"]] == [
            ("ann", 1, 1, 0), ("bob", 2, 1, 1)]
        [bot] = pool["bots"]
        assert (bot["name"], bot["games"], bot["wins"], bot["losses"]) == ("python_random", 3, 1, 2)
        best = pool["people"][0]
        assert best["rating"] == pytest.approx(best["mu"] - 3 * best["sigma"], abs=0.002)
        page = app.handle("GET", "/play/ratings", {}).body.decode()
        assert 'id="pool-people"' in page and "bob" in page and "python_random" in page
        assert 'href="/play/ratings"' in app.handle("GET", "/play", {}).body.decode()
        games = json.loads(app.handle("GET", "/api/play/games", {}, headers=ann).body)
        assert [(g["name"], g["result"], g["rated"]) for g in games["games"]] == [
            ("play-ann-0", "win", True)]  # ann's alone: bob's games are not hers to list
        assert app.handle("GET", "/api/play/games", {}).status == 401
        refused = app.handle("POST", "/api/play/games", {}, b"{}", "application/json",
                             {**ann, "content-type": "application/json"})  # fmt: skip
        assert refused.status == 405
        assert app.handle("POST", "/api/play/ratings", {}, headers=ann).status == 405
        assert json.loads(app.handle("GET", "/api/tournaments", {}).body) == {"tournaments": []}
    finally:
        store.close()


def test_a_server_without_tables_has_no_pool_page(tmp_path: Path) -> None:
    store = st.Store.open(tmp_path / "data")
    try:
        app = WebApp(StoreSource(store))
        for path in ("/play/ratings", "/api/play/ratings"):
            assert app.handle("GET", path, {}).status == 404
    finally:
        store.close()


@pytest.mark.parametrize("delay_s", [3600.0, 0.0], ids=["delayed", "control: no delay"])
def test_the_pool_shows_the_games_ended_within_the_spectator_delay_only_once_it_passed(
    tmp_path: Path, delay_s: float
) -> None:
    """The pool's ratings and W-D-L are game results: as every public page, they show a
    game's end only once the spectator delay has passed (the game's own page waits)."""
    store = st.Store.open(tmp_path / "data")
    later = [0.0]  # how far the app's clock is ahead of the real one
    try:
        app = WebApp(StoreSource(store), tables=PlayTables(store), spectator_delay_s=delay_s,
                     clock=lambda: time.time() + later[0])  # fmt: skip

        def people() -> list[str]:
            response = app.handle("GET", "/api/play/ratings", {})
            assert response.status == 200, response.body
            return [entry["name"] for entry in json.loads(response.body)["people"]]

        assert people() == []  # the view taken while no game is stored
        assert "bob" not in app.handle("GET", "/play/ratings", {}).body.decode()
        taken = time.time()
        wait_until(lambda: time.time() > taken + 0.002, "a later millisecond", 5,
                   interval_s=0.001)  # fmt: skip
        _stored_pool(store)
        page = app.handle("GET", "/play/ratings", {}).body.decode()
        if delay_s:
            assert people() == [] and "bob" not in page
            assert app.handle("GET", "/games/1", {}).status == 404  # as the game's own page
            later[0] = delay_s + 1
        assert people() == ["ann", "bob"]
        assert "bob" in app.handle("GET", "/play/ratings", {}).body.decode()
    finally:
        store.close()


@pytest.fixture
def slow_clock_site(tmp_path: Path) -> Iterator[tuple[st.Store, PlayTables, Client, Client]]:
    yield from _site(tmp_path, PlayOptions(time_control=TimeControl(action_ms=120_000, bank_ms=0)))


@pytest.mark.slow
def test_revoking_the_token_that_opened_a_table_ends_its_game_at_once(
    slow_clock_site: tuple[st.Store, PlayTables, Client, Client],
) -> None:
    """ann's token is revoked on her turn: her seat is ended within the recheck period,
    not when her two-minute clock runs out; the bot wins by forfeit and the record says
    her token was revoked. bob (the control), whose token stays live, plays on."""
    store, tables, ann, bob = slow_clock_site
    opened: dict[str, str] = {}
    for name, client in (("ann", ann), ("bob", bob)):
        code, payload = client.call("POST", "/api/play", {"bot": "python_random", "seat": 0})
        assert code == 201, payload
        table_id = opened[name] = str(payload["table"])
        wait_until(partial(_your_turn, client, table_id), f"{name}'s turn", 60)
    (row,) = [r for r in st.list_tokens(store) if r.digest == token_digest(ann.token)]
    st.revoke_tokens(store, token_id=row.id)
    table = tables.table(st.Principal("ann", "user"), opened["ann"])
    assert table.done.wait(TABLE_TOKEN_BOUND_S + 10), "ann's game still in play"
    assert ann.call("GET", f"/api/play/{opened['ann']}")[0] == 401  # her token is dead
    assert table.game_id is not None, table.error
    game = st.get_game(store, table.game_id)
    ann_status = dict(zip(game.bots, game.statuses, strict=True))["human-ann"]
    assert (ann_status, game.winner, game.reason) == ("disconnect", "python_random", "forfeit")
    match = st.game_record(store, table.game_id)["match"]
    assert isinstance(match, dict)
    assert [f["detail"] for f in match["failures"]] == [
        "the arena ended the stream: the token the person played with was revoked"
    ]
    assert table.link is not None and "token revoked" in str(table.link.goodbye)
    assert bob.call("GET", f"/api/play/{opened['bob']}")[1]["status"] == "your_turn"
    st.revoke_tokens(store, user="bob")  # his game ends the same way (not on his clock)
    bobs = tables.table(st.Principal("bob", "user"), opened["bob"])
    assert bobs.done.wait(TABLE_TOKEN_BOUND_S + 10), "bob's game still in play"


@pytest.mark.parametrize("house", ["python_random", "python_greedy"])
def test_a_house_bot_stored_for_play_is_not_entered_into_the_ladder(
    tmp_path: Path, house: str
) -> None:
    """A person's first game against a house bot stores it, off the ladder: a signed-in
    person does not add entrants (each of the admin's bots its own share of the runner's
    time) to a ladder the admin runs; the admin's `arena ladder return` enters it."""
    with st.Store.open(tmp_path / "data") as store:
        tables = PlayTables(store)
        assert tables._bot(house).name == house  # stored on first use, and playable
        assert st.is_withdrawn(store, house)
        assert house not in {r.bot for r in st.ladder_entrants(store, 0)}
        st.set_withdrawn(store, house, False)  # the admin's return
        assert house in {r.bot for r in st.ladder_entrants(store, 0)}
        assert tables._bot(house).name == house  # stored already: left as the admin set it
        assert not st.is_withdrawn(store, house)
