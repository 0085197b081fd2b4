"""/play in Chromium: a person plays whole games against a sandboxed bot by clicking the
board's highlighted lines, the cards and the action buttons, until the game is stored;
every JSON response the page received is held to the seat's view (the engine's
observation of the stored game), and the page's cards to that view at every turn. The
control plants the opponent's real hand into the JSON the page fetches and shows the
check catches it."""

from __future__ import annotations

import contextlib
import json
import random
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena import store as st
from arena.kahuna import State, apply, new_game, parse_record, record_from_json, start_round
from arena.referee import TimeControl
from arena.referee.live import ActionApplied, GameStarted, LiveEvent, RoundStarted
from arena.testing.browser import CHROMIUM, pumping
from arena.testing.seat_leaks import SeatLeak, SeatTruth, check_dom, check_payload
from arena.testing.waiting import wait_until
from arena.web import create_web_server
from arena.web import play as play_module
from arena.web.play import PlayOptions, PlayTables

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed"),
]

if Path(CHROMIUM).exists():
    from playwright.sync_api import Browser, Page, Response, expect
else:  # pragma: no cover - the module is skipped
    Browser = Page = Response = object  # type: ignore[misc,assignment]

Json = dict[str, Any]
CARDS_BY_CONTAINER = """() => {
  const found = {};
  for (const node of document.querySelectorAll("[data-card]")) {
    const where = node.parentElement.id || node.parentElement.className;
    (found[where] = found[where] || []).push(node.dataset.card);
  }
  return found;
}"""


def target(action: Json) -> tuple[str, Callable[[Json], bool]] | None:
    """The board element that stands for ``action``, and which actions clicking it picks
    (the page's own rule, ``matches`` in play.js); None: only the action's button."""
    if action.get("line"):
        line = action["line"]
        return f"#bridge-{line}", lambda a: a.get("line") == line
    if action["type"] == "draw" and action.get("card"):
        card = action["card"]
        return (f'#faceup .card[data-card="{card}"] >> nth=0',
                lambda a: a["type"] == "draw" and a.get("card") == card)  # fmt: skip
    if action["type"] == "discard":
        card = action["card"]
        return (f'#hand .card[data-card="{card}"] >> nth=0',
                lambda a: a["type"] != "draw" and (a.get("card") == card
                                                   or card in (a.get("cards") or [])))  # fmt: skip
    return None


@pytest.fixture
def site(
    tmp_path: Path, browser: Browser, request: pytest.FixtureRequest
) -> Iterator[tuple[Page, st.Store, list[Json]]]:
    """The /play page of a fresh store, logged in as ann; ``request.param``: PlayOptions
    fields of the test's own (a test that leaves its game open gives a short clock)."""
    store = st.Store.open(tmp_path / "data")
    token = st.create_token(store, "ann")
    # every 50 ms: at the default 400 ms most of a game goes by in the page's polls
    options = PlayOptions(rated_play=lambda user: True, poll_ms=50,
                          **getattr(request, "param", {}))  # fmt: skip
    tables = PlayTables(store, options)
    server, port = create_web_server(store, "127.0.0.1", 0, tables=tables)
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    bodies: list[Json] = []

    def seen(response: Response) -> None:
        if "/api/play/" in response.url and not response.url.endswith(
            ("/bots", "/games", "/ratings")
        ):  # a table's JSON (the person's list of games is checked on its own)
            bodies.append(json.loads(response.text()))

    page.on("response", seen)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if "Security Policy" in m.text else None)
    page.goto(f"http://127.0.0.1:{port}/play")
    page.fill("#token", token)
    try:
        yield page, store, bodies
        assert context.cookies() == []
        stored = page.evaluate("() => JSON.stringify([{...localStorage}, {...sessionStorage}])")
        assert token not in stored
        assert errors == []
    finally:
        context.close()
        server.stop()
        for table in list(tables._tables.values()):
            if table.link is not None and not table.done.is_set():  # a game left open: the
                with contextlib.suppress(OSError):  # arena ends it, as for a revoked token
                    table.link.cut("the test ended", "the test ended")
            table.done.wait(150)
        store.close()


def open_table(page: Page, bot: str, seat: int, reference: str = "") -> None:
    """Start a game against ``bot`` from ``seat`` (against ``reference`` too: duplicate)."""
    page.select_option("#bot", bot)
    page.select_option("#reference", reference)
    page.select_option("#seat", str(seat))
    page.click("#start")


def wait_for_the_person(page: Page) -> str:
    """Wait until the page asks the person to move or the game is over; its status."""
    page.wait_for_function(
        "() => ['your_turn', 'stored', 'failed'].includes("
        "document.getElementById('table').dataset.status)", timeout=150_000,
    )  # fmt: skip
    return page.locator("#table").get_attribute("data-status") or ""


def play_game(
    page: Page, bodies: list[Json], bot: str, seat: int, rng: random.Random, reference: str = ""
) -> Json:
    """Start a game and click random legal actions until it is stored; the last state."""
    open_table(page, bot, seat, reference)
    return play_out(page, bodies, rng)


def play_out(page: Page, bodies: list[Json], rng: random.Random) -> Json:
    """Click random legal actions until the open game is stored; its last state."""
    clicks = 0
    while True:
        status = wait_for_the_person(page)
        if status != "your_turn":
            break
        clicks += play_turn(page, bodies, rng)
    assert status == "stored", page.locator("#status").inner_text()
    assert clicks > 0  # the board and the cards were clicked, not only the buttons
    return next(b for b in reversed(bodies) if b["status"] == "stored")


def play_turn(page: Page, bodies: list[Json], rng: random.Random) -> int:
    """Check the page's cards and buttons against the open request's JSON, click a random
    legal action, and wait until the request is answered; how many board or card clicks."""
    request = page.locator("#table").get_attribute("data-request")
    shown = next(b for b in reversed(bodies) if str(b.get("request")) == request)
    check_dom(page.evaluate(CARDS_BY_CONTAINER), shown["view"])
    legal = shown["legal"]
    buttons = page.locator("#choices button.choice")
    assert sorted(buttons.all_inner_texts()) == sorted(a["text"] for a in legal)
    action = rng.choice(legal)
    where = target(action)
    clicks = 0
    if where is not None:
        selector, picks = where
        expect(page.locator(selector)).to_have_class(re.compile(r"\blegal\b"))
        picked = [a for a in legal if picks(a)]
        page.click(selector)
        clicks += 1
        if len(picked) > 1:  # the click narrowed the choice to what it picks
            expect(buttons).to_have_count(len(picked))
            page.click(f'#choices button[data-action="{action["text"]}"]')
    else:
        page.click(f'#choices button[data-action="{action["text"]}"]')
    page.wait_for_function(
        f"() => document.getElementById('table').dataset.request !== '{request}'"
    )
    return clicks


@pytest.mark.parametrize(("bot", "seat", "reference"), [
    ("python_random", 0, ""), ("python_greedy", 1, "python_random"),
])  # fmt: skip
def test_a_person_plays_whole_games_and_sees_only_the_seat(
    site: tuple[Page, st.Store, list[Json]], bot: str, seat: int, reference: str
) -> None:
    page, store, bodies = site
    final = play_game(page, bodies, bot, seat, random.Random(seat), reference)
    record = parse_record(json.dumps(st.game_record(store, final["game"])))
    assert record.result is not None
    truth = SeatTruth(record)
    assert len(bodies) > 10
    for body in bodies:
        check_payload(body, truth)
    if reference:  # duplicate mode: both results of the deal, side by side
        expect(page.locator("#duplicate")).to_contain_text(
            "Duplicate, the same deal from your seat: you ", timeout=60_000
        )
        expect(page.locator("#duplicate")).to_contain_text(f"; {reference} ")
    else:
        expect(page.locator("#duplicate")).to_be_hidden()
    rated = page.locator("#rated")
    expect(rated).to_have_attribute("data-rated", "false" if reference else "true")
    expect(rated).to_contain_text("unrated: duplicate mode" if reference else "is rated")
    games = page.locator("#games-table tbody tr")  # the person's games, listed once it ended
    expect(games).to_have_count(1)
    expect(games.locator("a")).to_have_attribute("href", f"/games/{final['game']}")
    expect(games).to_contain_text("unrated: duplicate" if reference else "rated")
    page.click("#game-link")
    # the replay viewer writes its step into the fragment, maybe before this wait starts
    page.wait_for_url(re.compile(rf"/games/{final['game']}(#.*)?$"))
    expect(page.locator("h1")).to_contain_text(bot)
    page.goto(page.url.split("/games/")[0] + "/play/ratings")
    people = page.locator("#pool-people tbody tr[data-name]")
    if reference:  # a duplicate-mode game is never rated
        expect(people).to_have_count(0)
    else:
        expect(people).to_have_count(1)
        expect(people.first).to_have_attribute("data-name", "ann")
        expect(page.locator(f'#pool-bots tr[data-name="{bot}"]')).to_have_count(1)


RECORD_SHOWN_REQUESTS = """() => {
  const table = document.getElementById("table");
  window.shownRequests = [];
  new MutationObserver(() => window.shownRequests.push(table.dataset.request))
    .observe(table, {attributes: true, attributeFilter: ["data-request"]});
}"""


@pytest.mark.parametrize(
    "site", [{"time_control": TimeControl(action_ms=15_000, bank_ms=0)}], indirect=True,
    ids=["short-clock"],
)  # the game is left open after the race: the person's clock ends it
def test_the_games_list_takes_the_token_as_mended_after_a_refusal(
    site: tuple[Page, st.Store, list[Json]],
) -> None:
    """A mistyped token is refused; the person mends it in the field and asks again: the
    list is asked with the token the field holds now, not the refused one."""
    page, _, _ = site
    token = page.input_value("#token")
    page.fill("#token", token + "x")
    page.click("#show-games")
    expect(page.locator("#games-progress")).to_contain_text("unknown token")
    page.fill("#token", token)
    page.click("#show-games")
    expect(page.locator("#games-progress")).to_have_text(
        "no games yet; your new games are rated in the people's ratings"
    )
    expect(page.locator("#games-table")).to_be_visible()


def test_a_poll_answered_after_a_move_does_not_bring_its_request_back(
    site: tuple[Page, st.Store, list[Json]],
) -> None:
    """The race, forced: a poll sent while request R is open is held until the move's
    own answer has been shown, then delivered. The page must drop it (older version)
    rather than show R again, whose move the server then refuses as settled; the
    person's next move is taken."""
    page, _, bodies = site
    open_table(page, "python_random", 0)
    assert wait_for_the_person(page) == "your_turn"
    request = page.locator("#table").get_attribute("data-request")
    held: list[tuple[Any, Any]] = []

    def hold(route: Any) -> None:
        if route.request.method == "GET" and not held:
            held.append((route, route.fetch()))  # the table as it is now, with R open
        else:
            route.continue_()

    table_url = re.compile(r"/api/play/[^/]+$")
    page.route(table_url, hold)
    wait_until(lambda: held, "a poll to hold", 30, pause=pumping(page))
    stale = held[0][1].json()
    assert str(stale["request"]) == request
    page.evaluate(RECORD_SHOWN_REQUESTS)
    legal = next(b for b in reversed(bodies) if str(b.get("request")) == request)["legal"]
    page.click(f'#choices button[data-action="{legal[0]["text"]}"]')
    page.wait_for_function(
        f"() => document.getElementById('table').dataset.request !== '{request}'"
    )
    route, response = held[0]
    polls = sum(1 for b in bodies if "version" in b)
    route.fulfill(response=response)
    page.unroute(table_url, hold)
    # the held answer, then the poll the page sends once it has handled it
    wait_until(lambda: sum(1 for b in bodies if "version" in b) >= polls + 2,
               "the held poll and the next", 30, pause=pumping(page))  # fmt: skip
    shown = page.evaluate("() => window.shownRequests")
    assert request not in shown, (request, shown)
    assert page.locator("#status").inner_text().find("not the open one") == -1
    assert wait_for_the_person(page) == "your_turn"
    answered = len(bodies)
    play_turn(page, bodies, random.Random(3))
    assert all(b.get("error") is None for b in bodies[answered:])
    assert page.locator("#status").inner_text().find("not the open one") == -1


def test_a_planted_hand_in_the_json_is_caught(
    site: tuple[Page, st.Store, list[Json]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the server adds the opponent's real hand (followed from the
    referee's full-information events) to the view; the same check must fail."""
    page, store, bodies = site
    game: dict[str, State] = {}
    lock = threading.Lock()
    real_run_match = play_module.run_match

    def follow(event: LiveEvent) -> None:
        with lock:
            if isinstance(event, GameStarted):
                head = record_from_json({**event.head, "actions": []})
                game["state"] = new_game(head.deal, head.variant, head.handicap)
            elif isinstance(event, ActionApplied):
                game["state"] = apply(game["state"], event.action, event.seat)
            elif isinstance(event, RoundStarted):
                game["state"] = start_round(game["state"], event.order)

    def run_match(*args: Any, **kwargs: Any) -> Any:
        return real_run_match(*args, on_event=follow, **kwargs)

    real_view = play_module.seat_view

    def planted_view(obs: Any, history: list[Json]) -> Json:
        with lock:
            hidden = list(game["state"].hands[1 - obs.seat])
        return {**real_view(obs, history), "opponent_hand": hidden}

    monkeypatch.setattr(play_module, "run_match", run_match)
    monkeypatch.setattr(play_module, "seat_view", planted_view)
    final = play_game(page, bodies, "python_random", 0, random.Random(7))
    truth = SeatTruth(parse_record(json.dumps(st.game_record(store, final["game"]))))
    turn = next(b for b in bodies if b["status"] == "your_turn")
    events = len(turn["view"]["history"])
    assert turn["view"]["opponent_hand"] == list(truth.state_at(events).hands[1])
    with pytest.raises(SeatLeak, match="opponent_hand"):
        for body in bodies:
            check_payload(body, truth)
