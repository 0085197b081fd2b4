"""Every route over HTTP from a real server (port 0) on a real store."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest

from arena import store as st
from arena.kahuna import ISLANDS, LINES
from arena.tournament.policy.audit import audit_tournament
from arena.tournament.policy.results import (
    leaderboard_intervals,
    tournament_crosstable,
    tournament_intervals,
    tournament_standings,
    version_key,
)
from arena.web.app import WebApp
from arena.web.models import (
    BotDetail,
    GameDetail,
    GameSummary,
    HeadToHead,
    LeaderboardRow,
    TournamentDetail,
    TournamentSummary,
)
from tests.store.lease_holder import kill_9, lease_holding_process
from tests.web.conftest import LiveSite


def fetch(url: str, method: str = "GET") -> tuple[int, str, str]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read().decode()


def fetch_json(url: str) -> tuple[int, dict[str, object]]:
    status, content_type, body = fetch(url)
    assert content_type == "application/json"
    loaded = json.loads(body)
    assert isinstance(loaded, dict)
    return status, loaded


class Ids(HTMLParser):
    """Collects element ids and text of an HTML page (checks it parses, too)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: Sequence[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse_page(body: str) -> Ids:
    parser = Ids()
    parser.feed(body)
    return parser


@pytest.mark.slow
def test_leaderboard_page_and_json_agree(site: LiveSite) -> None:
    status, content_type, body = fetch(site.base_url + "/")
    assert status == 200 and content_type.startswith("text/html")
    status, data = fetch_json(site.base_url + "/api/leaderboard")
    assert status == 200
    rows = data["leaderboard"]
    assert isinstance(rows, list)
    assert [row["bot"] for row in rows] == [r.entry.bot for r in st.leaderboard(site.store)]
    conservative = [row["conservative"] for row in rows]
    assert conservative == sorted(conservative, reverse=True)
    text = " ".join(parse_page(body).text)
    for row in rows:
        assert row["bot"] in text
    assert "web-test-cup" in text


@pytest.mark.slow
def test_leaderboard_and_tournament_show_every_row_with_its_interval(site: LiveSite) -> None:
    """The web tables carry the same 95% intervals as the CLI and the API (one source:
    arena.tournament.policy.results), as text in the page and as numbers in the JSON."""
    rows = st.leaderboard(site.store)
    intervals = leaderboard_intervals(site.store, rows)
    _, data = fetch_json(site.base_url + "/api/leaderboard")
    _, _, body = fetch(site.base_url + "/")
    text = " ".join(parse_page(body).text)
    shown = data["leaderboard"]
    assert isinstance(shown, list) and len(shown) == len(rows) > 1
    for row, entry in zip(shown, rows, strict=True):
        expected = intervals.field[version_key(entry.entry.bot, entry.entry.version)]
        assert expected is not None  # every demo bot has played full deal pairs
        assert row["interval"] == expected.to_json()
        assert row["interval_text"]["score"] == expected.score_text()
        assert expected.score_text() in text
        assert expected.low <= row["interval"]["score"] <= expected.high
    tid = site.demo.tournament_id
    tournament = st.get_tournament(site.store, tid)
    field = tournament_intervals(site.store, tournament).field
    _, detail = fetch_json(f"{site.base_url}/api/tournaments/{tid}")
    _, _, page = fetch(f"{site.base_url}/tournaments/{tid}")
    page_text = " ".join(parse_page(page).text)
    assert "Score (95%)" in page_text
    for standing in detail["standings"]:
        expected = field[standing["bot"]]
        assert expected is not None and standing["interval"] == expected.to_json()
        assert expected.elo_text() in page_text
    assert isinstance(detail["separation_notes"], list)


@pytest.mark.slow
def test_tournament_page_has_standings_crosstable_and_games(site: LiveSite) -> None:
    tid = site.demo.tournament_id
    status, _, body = fetch(f"{site.base_url}/tournaments/{tid}")
    assert status == 200
    page = parse_page(body)
    assert {"standings", "crosstable"} <= page.ids
    status, data = fetch_json(f"{site.base_url}/api/tournaments/{tid}")
    assert status == 200
    standings = data["standings"]
    assert isinstance(standings, list)
    expected = tournament_standings(site.store, tid)
    assert [(r["bot"], r["score"]) for r in standings] == [(s.bot, s.points) for s in expected]
    crosstable = data["crosstable"]
    assert isinstance(crosstable, dict)
    bots = crosstable["bots"]
    cells = crosstable["cells"]
    scores = tournament_crosstable(site.store, tid)
    for i, a in enumerate(bots):
        for j, b in enumerate(bots):
            cell = cells[i][j]
            if a == b:
                assert cell is None
            else:
                assert cell == {"score": scores.get((a, b), 0.0), "games": 2}
    games = data["games"]
    assert isinstance(games, list)
    assert sorted(g["id"] for g in games) == sorted(site.demo.game_ids)


@pytest.mark.slow
def test_bot_page_shows_versions_history_and_recent_games(site: LiveSite) -> None:
    bot = site.demo.bots[0]
    status, _, body = fetch(f"{site.base_url}/bots/{bot}")
    assert status == 200
    assert "rating-history" in parse_page(body).ids
    assert 'class="plot-band"' in body and 'class="plot-mean"' in body
    assert "after each of its 6 games" in body  # every game, rated or not, has its point
    status, data = fetch_json(f"{site.base_url}/api/bots/{bot}")
    assert status == 200
    versions = data["versions"]
    assert isinstance(versions, list) and len(versions) == 1
    history = versions[0]["rating_history"]
    assert len(history) == len(st.get_bot(site.store, bot).history) == 6  # 3 opponents x 2
    games = data["recent_games"]
    assert isinstance(games, list) and len(games) == 6
    assert all(bot in g["bots"] for g in games)


@pytest.mark.slow
def test_game_page_json_and_record(site: LiveSite) -> None:
    game_id = site.demo.game_ids[0]
    status, _, body = fetch(f"{site.base_url}/games/{game_id}")
    assert status == 200
    ids = parse_page(body).ids
    assert {f"bridge-{line}" for line in LINES} <= ids
    assert {f"island-{island}" for island in ISLANDS} <= ids
    assert {f"token-{island}" for island in ISLANDS} <= ids
    assert {"faceup", "deck-size", "hand-0", "hand-1", "step", "action"} <= ids
    status, data = fetch_json(f"{site.base_url}/api/games/{game_id}")
    assert status == 200
    assert data["record"] == st.game_record(site.store, game_id)
    status, _, body = fetch(f"{site.base_url}/api/games/{game_id}/record")
    assert status == 200 and json.loads(body) == st.game_record(site.store, game_id)


@pytest.mark.slow
@pytest.mark.parametrize("perspective", ["all", "0", "1"])
def test_frames_endpoint(site: LiveSite, perspective: str) -> None:
    game_id = site.demo.game_ids[1]
    url = f"{site.base_url}/api/games/{game_id}/frames?perspective={perspective}"
    status, data = fetch_json(url)
    assert status == 200
    frames = data["frames"]
    assert isinstance(frames, list)
    assert len(frames) == st.get_game(site.store, game_id).actions + 1
    assert data["error"] is None
    if perspective != "all":
        seat = int(perspective)
        assert all(f["hands"][1 - seat] is None for f in frames)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/games/99999", 404, "no game with id 99999"),
        ("/api/games/99999/frames", 404, "no game with id 99999"),
        ("/api/games/1/frames?perspective=2", 400, "perspective must be one of all, 0, 1"),
        ("/bots/nobody", 404, "no bot named 'nobody'"),
        ("/api/bots/nobody", 404, "no bot named 'nobody'"),
        ("/tournaments/424242", 404, "no tournament with id 424242"),
        ("/games/abc", 404, "no page at /games/abc"),
        ("/games/" + "9" * 30, 404, "no page at /games/999"),
        ("/static/../app.py", 404, "no page at"),
        ("/static/nothing.css", 404, "no static file nothing.css"),
    ],
    ids=["game", "frames", "perspective", "bot", "bot-json", "tournament", "bad-id",
         "huge-id", "traversal", "static"],
)
def test_bad_requests_are_named(site: LiveSite, path: str, status: int, message: str) -> None:
    got_status, _, body = fetch(site.base_url + path)
    assert got_status == status
    assert message.replace("'", "&#39;") in body or message in body
    assert "Traceback" not in body


@pytest.mark.slow
def test_post_is_refused_with_405(site: LiveSite) -> None:
    status, _, body = fetch(site.base_url + "/api/leaderboard", method="POST")
    assert status == 405
    assert "use GET" in body


@pytest.mark.slow
def test_static_assets_are_served_with_types(site: LiveSite) -> None:
    for name, expected in [("viewer.js", "text/javascript"), ("style.css", "text/css")]:
        status, content_type, _ = fetch(f"{site.base_url}/static/{name}")
        assert status == 200 and content_type.startswith(expected)


def test_names_are_escaped_not_rendered_as_markup() -> None:
    # the store refuses such names; the pages must not trust that
    response = WebApp(UnfinishedGameSource()).handle("GET", "/bots/x", {})
    assert response.status == 200
    body = response.body.decode()
    assert "<b>x</b>" not in body
    assert "&lt;b&gt;x&lt;/b&gt;" in body


class UnfinishedGameSource:
    """A source whose one game is still being played (never stored by the arena)."""

    def leaderboard(self) -> list[LeaderboardRow]:
        return []

    def tournaments(self) -> list[TournamentSummary]:
        return []

    def tournament(self, tournament_id: int) -> TournamentDetail | None:
        return None

    def bot(self, name: str) -> BotDetail | None:
        return BotDetail("<b>x</b>", None, "", (), ())

    def game(self, game_id: int) -> GameDetail | None:
        summary = GameSummary(1, ("<b>a</b>", "b"), False, None, None, None)
        return GameDetail(summary, '{"format": "kahuna-record/1"}')

    def recent_games(self, limit: int) -> list[GameSummary]:
        return []

    def bot_names(self) -> list[str]:
        return ["<b>x</b>", "<i>y</i>"]

    def head_to_head(self, bot: str, opponent: str, limit: int) -> HeadToHead | None:
        return None


@pytest.mark.parametrize("path", ["/games/1", "/api/games/1", "/api/games/1/frames",
                                  "/api/games/1/record"])
def test_a_game_in_progress_is_never_revealed(path: str) -> None:
    response = WebApp(UnfinishedGameSource()).handle("GET", path, {})
    assert response.status == 403
    assert b"kahuna-record" not in response.body
    assert b"revealed only after the game" in response.body


def forfeited_game(site: LiveSite) -> st.GameRow:
    games = st.list_games(site.store, tournament_id=site.demo.tournament_id)
    return next(g for g in games if g.reason == "forfeit")


@pytest.mark.slow
def test_a_forfeited_game_shows_its_failure(site: LiveSite) -> None:
    game = forfeited_game(site)
    status, _, body = fetch(f"{site.base_url}/games/{game.id}")
    assert status == 200
    loser = game.bots[game.statuses.index("timeout")]
    assert f"<strong>{loser}</strong>: timeout" in body
    loser = game.bots[1 - game.bots.index(game.winner)]
    assert f'data-over="{game.winner} won: {loser} ran out of time"' in body
    status, data = fetch_json(f"{site.base_url}/api/games/{game.id}/frames")
    frames = data["frames"]
    assert isinstance(frames, list) and len(frames) == game.actions + 1
    assert frames[-1]["finished"] is False  # the rules did not finish it; the clock did


def post(url: str, body: bytes, content_type: str) -> tuple[int, str]:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": content_type}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.mark.slow
def test_a_posted_record_is_replayed_without_storing_it(site: LiveSite) -> None:
    record = json.dumps(st.game_record(site.store, site.demo.game_ids[0]))
    before = len(st.list_games(site.store, limit=1000))
    for body, content_type in [
        (record.encode(), "application/json"),
        (urllib.parse.urlencode({"record": record}).encode(), "application/x-www-form-urlencoded"),
    ]:
        status, page = post(site.base_url + "/replay", body, content_type)
        assert status == 200
        assert 'id="frames-data"' in page and 'id="viewer"' in page
    assert len(st.list_games(site.store, limit=1000)) == before


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"", 400, "no record"),
        (b"{not json", 400, "not a valid kahuna-record/1"),
        (b'{"format": "kahuna-record/2"}', 400, "not a valid kahuna-record/1"),
        (b"\xff\xfe", 400, "not UTF-8"),
        (b" " * (2 * 1024 * 1024 + 1), 413, "the limit is 2097152"),
    ],
    ids=["empty", "not-json", "wrong-format", "not-utf8", "too-large"],
)
def test_bad_posted_records_are_named(
    site: LiveSite, body: bytes, status: int, message: str
) -> None:
    got_status, page = post(site.base_url + "/replay", body, "application/json")
    assert got_status == status
    assert message in page
    assert "Traceback" not in page


@pytest.mark.slow
def test_tournament_pages_follow_newly_stored_games(tmp_path: Path) -> None:
    from arena.testing.demo_data import play_demo_tournament, play_games
    from arena.web.server import create_web_server

    store = st.Store.open(tmp_path / "data")
    demo = play_demo_tournament(
        store, tmp_path / "bots", name="growing", bots=("ann", "bob", "cy"), max_games=2
    )
    server, port = create_web_server(store, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{port}/api/tournaments/{demo.tournament_id}"
    try:
        _, first = fetch_json(url)
        assert len(first["games"]) == 2  # type: ignore[arg-type]
        play_games(store, demo.tournament_id)
        _, second = fetch_json(url)
        assert len(second["games"]) == 6  # type: ignore[arg-type]
        standings = second["standings"]
        assert isinstance(standings, list)
        assert sum(row["played"] for row in standings) == 12  # two seats per game
    finally:
        if demo.lease is not None:
            demo.lease.release()
        server.stop()
        store.close()


@pytest.mark.slow
def test_a_tournament_whose_runner_died_shows_interrupted_with_the_resume_hint(
    tmp_path: Path,
) -> None:
    from arena.testing.demo_data import play_demo_tournament
    from arena.web.server import create_web_server

    store = st.Store.open(tmp_path / "data")
    demo = play_demo_tournament(store, tmp_path / "bots", name="halted", max_games=2)
    assert demo.lease is not None
    demo.lease.release()  # the process below is the runner from here on
    server, port = create_web_server(store, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{port}"

    def shown() -> tuple[str, str, list[str], str]:
        _, detail = fetch_json(f"{base}/api/tournaments/{demo.tournament_id}")
        _, board = fetch_json(f"{base}/api/leaderboard")
        _, _, page = fetch(f"{base}/tournaments/{demo.tournament_id}")
        _, _, front = fetch(f"{base}/")
        summary = detail["tournament"]
        assert isinstance(summary, dict) and isinstance(board["tournaments"], list)
        return summary["status"], page, [t["status"] for t in board["tournaments"]], front

    try:
        with lease_holding_process(store.data_dir, demo.tournament_id) as runner:
            status, page, listed, _ = shown()
            assert (status, listed) == ("running", ["running"])
            assert "interrupted" not in parse_page(page).ids
            kill_9(runner)
            status, page, listed, front = shown()
        assert (status, listed) == ("interrupted", ["interrupted"])
        notice = parse_page(page)
        assert "interrupted" in notice.ids
        assert "arena tournament resume halted" in " ".join(notice.text)
        assert 'title="no process is running it: arena tournament resume halted"' in front
    finally:
        server.stop()
        store.close()


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"variant": {"strategic": False, "tactical": False}}, ""),
        ({}, ""),
        ({"variant": {"tactical": True}}, "tactical variant"),
        (
            {"variant": {"strategic": True}, "handicap": [{"seat": 1, "line": "ALOA-BARI"}]},
            "strategic variant · handicap: seat 1 ALOA-BARI",
        ),
        ([], ""),
    ],
    ids=["plain", "omitted", "tactical", "strategic-handicap", "not-an-object"],
)
def test_rules_note(record: object, expected: str) -> None:
    from arena.web.app import rules_note

    assert rules_note(record) == expected


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"match": {"paired": True, "deal_index": 3}}, "paired deal 3 (games 6, 7)"),
        ({"match": {"paired": False, "deal_index": 7}}, "unpaired: a fresh deal"),
        ({"match": {"match_seed": 1, "deal_index": 0, "deal_seed": 5}}, ""),  # before paired
        ({"match": "x"}, ""),
        ([], ""),
    ],
    ids=["paired", "unpaired", "old-record", "bad-match", "not-an-object"],
)
def test_deal_note(record: object, expected: str) -> None:
    from arena.web.app import deal_note

    assert deal_note(record) == expected


@pytest.mark.slow
def test_an_sprt_test_page_charts_its_llr_between_the_bounds(tmp_path: Path) -> None:
    """A stored SPRT test (pairs planned by the format, games stored as the runner would):
    its page has the decision and the inline SVG chart, its JSON the same figures."""
    from arena.testing.demo_data import add_demo_bots, play_games
    from arena.tournament.policy.config import build_sprt
    from arena.tournament.policy.rounds import create_tournament, next_rounds
    from arena.tournament.policy.sprt_format import sprt_progress
    from arena.web.server import create_web_server

    store = st.Store.open(tmp_path / "data")
    add_demo_bots(store, tmp_path / "bots", ["cand", "base"])
    sprt = build_sprt(elo0=0.0, elo1=300.0, model="logistic", max_pairs=8)
    config = st.TournamentConfig(sprt=sprt)
    test = create_tournament(store, "llr", st.TournamentFormat.SPRT, ["cand", "base"], config)
    while planned := next_rounds(store, test.id, batch=3):
        st.add_rounds(store, test.id, planned)
        play_games(store, test.id)
    st.set_status(store, test.id, st.TournamentStatus.FINISHED)
    progress = sprt_progress(store, st.get_tournament(store, test.id))
    server, port = create_web_server(store, "127.0.0.1", 0)
    try:
        status, _, body = fetch(f"http://127.0.0.1:{port}/tournaments/{test.id}")
        assert status == 200
        page = parse_page(body)
        assert {"sprt", "sprt-result", "llr-plot"} <= page.ids
        assert progress.sentence() in " ".join(page.text)
        chart = body.split('id="llr-plot">')[1].split("</figure>")[0]
        assert chart.startswith("<svg") and chart.count('class="plot-bound"') == 2
        if len(progress.history) > 1:
            points = chart.split('class="plot-mean plot-llr" points="')[1].split('"')[0]
            assert len(points.split()) == len(progress.history)
        _, data = fetch_json(f"http://127.0.0.1:{port}/api/tournaments/{test.id}")
        assert data["sprt"] == json.loads(json.dumps(progress.to_json()))
        assert progress.verdict in ("H0 accepted", "H1 accepted", "inconclusive")
    finally:
        server.stop()
        store.close()


@pytest.mark.parametrize(
    ("name", "format_", "command"),
    [
        ("halted", "round_robin", "arena tournament resume halted"),
        ("halted", "swiss", "arena tournament resume halted"),
        ("main", "ladder", "arena serve --ladder --ladder-name main"),
        ("club-2", "ladder", "arena serve --ladder --ladder-name club-2"),
    ],
)
def test_an_interrupted_ladder_says_to_start_it_with_serve_not_tournament_resume(
    name: str, format_: str, command: str
) -> None:
    # `arena tournament resume` refuses a ladder: the pages give the CLI's resume_hint
    templates = WebApp(UnfinishedGameSource()).templates
    macros = templates.get_template("_macros.html").module
    assert str(macros.restart_command(name, format_)) == command  # type: ignore[attr-defined]
    if format_ == "ladder":  # the ladder's own page (a ladder's tournament page redirects)
        view = SimpleNamespace(
            ladder=SimpleNamespace(name=name, status="interrupted", games_played=0),
            settings=SimpleNamespace(placement_matches=4), standings=[], queue=[],
            recent_games=[],
        )
        page = WebApp(UnfinishedGameSource()).page(
            "ladder.html", title=name, view=view, recent_games=[], live_games=[]
        )
        assert f"<code>{command}</code>" in page.body.decode()


@pytest.mark.slow
def test_the_tournament_page_publishes_its_commitment_and_once_finished_its_secret(
    site: LiveSite,
) -> None:
    """What a participant needs for `arena remote audit`, on the page anyone can open."""
    tid = site.demo.tournament_id
    row = st.get_tournament(site.store, tid)
    secret = st.revealed_secret(site.store, tid)
    assert row.commitment is not None and secret is not None
    _, _, body = fetch(f"{site.base_url}/tournaments/{tid}")
    page = parse_page(body)
    assert {"commitment", "revealed-secret", "audit-digest"} <= page.ids
    digest = audit_tournament(site.store, tid).digest  # what each participant's audit prints
    assert digest is not None
    assert row.commitment in body and secret.hex() in body and digest in body
    _, data = fetch_json(f"{site.base_url}/api/tournaments/{tid}")
    summary = data["tournament"]
    assert isinstance(summary, dict)
    assert (summary["commitment"], summary["revealed_secret"]) == (row.commitment, secret.hex())
    assert summary["audit_digest"] == digest


def test_the_tournament_page_shows_its_committed_parameters_before_play(tmp_path: Path) -> None:
    """Before any game: every field in words (the time control, the remote bot dealt
    afresh) and the exact text, in the page and its JSON; no secret, no owner, no
    remote bot's description."""
    from arena.web.source import StoreSource
    from tests.tournament.test_committed import PRIVATE, committed_cup

    with st.Store.open(tmp_path / "data") as store:
        cup = committed_cup(store, tmp_path / "bots")
        text = st.tournament_parameters(store, cup.id).decode()
        secret = st.tournament_secret(store, cup.id).hex()
        app = WebApp(StoreSource(store))
        page = app.handle("GET", f"/tournaments/{cup.id}", {})
        data = json.loads(app.handle("GET", f"/api/tournaments/{cup.id}", {}).body)
    body = page.body.decode()
    assert page.status == 200 and cup.status == "created"
    assert {"parameters", "parameter-fields", "parameters-text"} <= parse_page(body).ids
    assert "audit-digest" not in parse_page(body).ids  # its bundle still grows
    assert data["tournament"]["audit_digest"] is None
    words = " ".join(parse_page(body).text)
    assert "750 ms per action, 9000 ms bank" in words
    assert "eve: their matches deal afresh every game" in words
    assert ("Note the commitment before the first game: arena remote tournament list keeps it"
            " on your computer, and arena remote audit holds the tournament to it.") in " ".join(
        words.split())
    shown = body.split('<pre id="parameters-text">')[1].split("</pre>")[0]
    assert json.loads(shown.replace("&#34;", '"').replace("&quot;", '"')) == json.loads(text)
    assert data["tournament"]["parameters"] == text
    for private in (secret, *PRIVATE):
        assert private not in body and private not in json.dumps(data)


def test_the_tournament_list_reveals_the_secret_as_the_detail_does(tmp_path: Path) -> None:
    """/api/tournaments and /api/tournaments/ID agree on a tournament's summary: its secret
    withheld while it is played, revealed in both once finished."""
    from arena.web.source import StoreSource
    from tests.tournament.test_committed import committed_cup

    def summaries(app: WebApp, tid: int) -> tuple[object, object]:
        listed = json.loads(app.handle("GET", "/api/tournaments", {}).body)["tournaments"]
        detail = json.loads(app.handle("GET", f"/api/tournaments/{tid}", {}).body)["tournament"]
        detail.pop("parameters")
        return listed, [detail]

    with st.Store.open(tmp_path / "data") as store:
        cup = committed_cup(store, tmp_path / "bots")
        app = WebApp(StoreSource(store))
        listed, detailed = summaries(app, cup.id)
        assert listed == detailed and listed[0]["revealed_secret"] is None  # type: ignore[index]
        st.set_status(store, cup.id, st.TournamentStatus.FINISHED)
        secret = st.revealed_secret(store, cup.id)
        listed, detailed = summaries(app, cup.id)
    assert secret is not None
    assert listed == detailed and listed[0]["revealed_secret"] == secret.hex()  # type: ignore[index]


def test_a_digest_computed_after_the_first_view_shows_on_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tournament's detail is kept by its games played; its digest is not kept with it,
    so one still being computed at the first view (a long bundle) shows once it is done."""
    from arena.web.source import StoreSource
    from tests.tournament.test_committed import committed_cup

    with st.Store.open(tmp_path / "data") as store:
        cup = committed_cup(store, tmp_path / "bots")
        st.set_status(store, cup.id, st.TournamentStatus.FINISHED)
        source = StoreSource(store)
        computed = source.digests.of
        monkeypatch.setattr(source.digests, "of", lambda *args, **kwargs: None)  # not yet
        first = source.tournament(cup.id)
        monkeypatch.setattr(source.digests, "of", computed)
        second = source.tournament(cup.id)
        expected = computed(store, cup.id)
    assert first is not None and first.summary.audit_digest is None
    assert second is not None and expected is not None
    assert second.summary.audit_digest == expected
