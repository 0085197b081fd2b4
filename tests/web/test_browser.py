"""The pages in a real browser: Debian's chromium, headless, driven by Playwright.

One browser per session; each test opens its own page. Skipped, with the
reason, only where /usr/bin/chromium is absent (CI installs it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import store as st
from arena.kahuna import ISLANDS, ActionType, Record, State, parse_record, replay
from arena.testing.browser import CHROMIUM
from arena.testing.demo_data import play_demo_tournament
from arena.web.server import create_web_server
from tests.web.conftest import POLL_MS, LiveSite

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"
)

if Path(CHROMIUM).exists():
    from playwright.sync_api import Browser, Page, expect
else:  # pragma: no cover - the module is skipped
    Browser = Page = object  # type: ignore[misc,assignment]



@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.on(  # what the Content-Security-Policy blocks, the browser reports here
        "console",
        lambda message: errors.append(message.text)
        if "Content Security Policy" in message.text
        else None,
    )
    yield opened
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def stored_record(site: LiveSite, game_id: int) -> Record:
    import json

    return parse_record(json.dumps(st.game_record(site.store, game_id)))


def state_after(record: Record, steps: int) -> State:
    result = replay(dataclasses.replace(record, actions=record.actions[:steps], result=None))
    assert result.error is None
    return result.state


def open_viewer(page: Page, site: LiveSite, game_id: int) -> None:
    page.goto(f"{site.base_url}/games/{game_id}")
    page.wait_for_selector('#viewer[data-ready="true"]')


def owned_lines(page: Page, seat: int) -> set[str]:
    lines = page.eval_on_selector_all(
        f'.bridge[data-owner="{seat}"]', "nodes => nodes.map(n => n.dataset.line)"
    )
    return set(lines)


@pytest.mark.slow
def test_pages_load_from_a_stored_tournament(page: Page, site: LiveSite) -> None:
    page.goto(site.base_url + "/")
    rows = page.locator("#leaderboard tbody tr")
    expect(rows).to_have_count(len(site.demo.bots))
    expect(page.locator("#tournaments")).to_contain_text("web-test-cup")
    page.locator("#tournaments a", has_text="web-test-cup").click()
    expect(page.locator("#crosstable tbody tr")).to_have_count(len(site.demo.bots))
    page.locator("#standings a.bot").first.click()
    expect(page.locator("#rating-history svg polygon.plot-band")).to_have_count(1)
    page.locator("table.games a", has_text="#").first.click()
    page.wait_for_selector('#viewer[data-ready="true"]')
    expect(page.locator("#step")).to_have_text("0 / " + str(page.locator("#history li").count()))


@pytest.mark.slow
def test_viewer_steps_to_a_placement_and_draws_the_right_bridges(
    page: Page, site: LiveSite
) -> None:
    game_id = site.demo.game_ids[0]
    record = stored_record(site, game_id)
    step = next(
        i for i, (_, a) in enumerate(record.actions, start=1) if a.type is ActionType.PLACE
    )
    seat, action = record.actions[step - 1]
    open_viewer(page, site, game_id)
    assert owned_lines(page, 0) == owned_lines(page, 1) == set()
    for _ in range(step):
        page.click("#next")
    expect(page.locator("#step")).to_contain_text(f"{step} / ")
    expect(page.locator("#action .notation")).to_have_text(action.text())
    assert action.line is not None
    expect(page.locator(f"#bridge-{action.line}")).to_have_attribute("data-owner", str(seat))
    expect(page.locator(f"#bridge-{action.line}")).to_have_class("bridge last")
    state = state_after(record, step)
    for each_seat in (0, 1):
        expected = {line for line, owner in state.bridges.items() if owner == each_seat}
        assert owned_lines(page, each_seat) == expected
    page.click("#prev")
    expect(page.locator(f"#bridge-{action.line}")).to_have_attribute("data-owner", "")


@pytest.mark.slow
def test_keyboard_steps_and_jumps(page: Page, site: LiveSite) -> None:
    game_id = site.demo.game_ids[1]
    record = stored_record(site, game_id)
    last = len(record.actions)
    open_viewer(page, site, game_id)
    viewer = page.locator("#viewer")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    expect(viewer).to_have_attribute("data-step", "3")
    page.keyboard.press("ArrowLeft")
    expect(viewer).to_have_attribute("data-step", "2")
    page.keyboard.press("End")
    expect(viewer).to_have_attribute("data-step", str(last))
    page.keyboard.press("ArrowRight")
    expect(viewer).to_have_attribute("data-step", str(last))
    final = state_after(record, last)
    for seat in (0, 1):
        expect(page.locator(f"#points-{seat}")).to_have_text(str(final.points[seat]))
        controlled = [i for i, owner in final.controlled.items() if owner == seat]
        for island in controlled:
            expect(page.locator(f"#token-{island}")).to_have_attribute("data-controller", str(seat))
    page.keyboard.press("Home")
    expect(viewer).to_have_attribute("data-step", "0")
    page.keyboard.press("ArrowLeft")
    expect(viewer).to_have_attribute("data-step", "0")


def hand_cards(page: Page, seat: int) -> list[str]:
    cards = page.eval_on_selector_all(
        f"#hand-{seat} .card", "nodes => nodes.map(n => n.dataset.card)"
    )
    return [str(card) for card in cards]


@pytest.mark.slow
def test_perspective_switch_hides_the_opponents_hand(page: Page, site: LiveSite) -> None:
    game_id = site.demo.game_ids[2]
    record = stored_record(site, game_id)
    step = next(  # a moment when both seats hold cards
        k for k in range(10, len(record.actions))
        if all(state_after(record, k).hands) and all(state_after(record, k + 1).hands)
    )
    state = state_after(record, step)
    page.goto(f"{site.base_url}/games/{game_id}#step={step}")
    page.wait_for_selector('#viewer[data-ready="true"]')
    expect(page.locator("#viewer")).to_have_attribute("data-step", str(step))
    assert hand_cards(page, 0) == list(state.hands[0])
    assert hand_cards(page, 1) == list(state.hands[1])
    for seat in (0, 1):
        other = 1 - seat
        page.check(f'input[name="perspective"][value="{seat}"]')
        expect(page.locator("#viewer")).to_have_attribute("data-perspective", str(seat))
        expect(page.locator("#viewer")).to_have_attribute("data-ready", "true")
        expect(page.locator("#viewer")).to_have_attribute("data-step", str(step))
        assert hand_cards(page, seat) == list(state.hands[seat])
        hidden = hand_cards(page, other)
        assert hidden == [""] * len(state.hands[other])  # card backs only
        text = page.locator(f"#hand-{other}").inner_text()
        assert not any(island in text for island in ISLANDS)
        expect(page.locator(f"#hand-{other}")).to_have_attribute("data-hidden", "true")
        expect(page.locator(f"#facedown-cards-{other}")).to_have_text("")
        # arrow keys still step the game after using the radio buttons
        page.keyboard.press("ArrowRight")
        expect(page.locator("#viewer")).to_have_attribute("data-step", str(step + 1))
        page.keyboard.press("ArrowLeft")
    page.check('input[name="perspective"][value="all"]')
    expect(page.locator("#hand-1")).to_have_attribute("data-hidden", "false")
    assert hand_cards(page, 1) == list(state.hands[1])


@pytest.mark.slow
def test_leaderboard_updates_while_a_tournament_runs(
    page: Page, tmp_path_factory: pytest.TempPathFactory
) -> None:
    work_dir = tmp_path_factory.mktemp("live")
    store = st.Store.open(work_dir / "data")
    play_demo_tournament(store, work_dir / "bots", name="first", bots=("ann", "bob"))
    server, port = create_web_server(store, "127.0.0.1", 0, poll_ms=POLL_MS)
    try:
        page.goto(f"http://127.0.0.1:{port}/")
        expect(page.locator("#leaderboard tbody tr")).to_have_count(2)
        play_demo_tournament(store, work_dir / "bots", name="second", bots=("ann", "bob", "cy"))
        expect(page.locator('#leaderboard tr[data-bot="cy"]')).to_have_count(1)
        expect(page.locator("#tournaments tbody tr")).to_have_count(2)
    finally:
        server.stop()
        store.close()


@pytest.mark.slow
def test_forfeit_is_shown_on_the_last_frame(page: Page, site: LiveSite) -> None:
    games = st.list_games(site.store, tournament_id=site.demo.tournament_id)
    game = next(g for g in games if g.reason == "forfeit")
    open_viewer(page, site, game.id)
    page.keyboard.press("End")
    expect(page.locator("#note")).to_contain_text(f"game over: {game.winner} won: ")


@pytest.mark.slow
def test_an_uploaded_record_replays_in_the_viewer(page: Page, site: LiveSite) -> None:
    import json

    game_id = site.demo.game_ids[0]
    record = stored_record(site, game_id)
    page.goto(site.base_url + "/replay")
    page.fill("#record-text", json.dumps(st.game_record(site.store, game_id)))
    page.click("form.upload button[type=submit]")
    page.wait_for_selector('#viewer[data-ready="true"]')
    page.keyboard.press("End")
    final = state_after(record, len(record.actions))
    assert owned_lines(page, 0) == {line for line, s in final.bridges.items() if s == 0}
    page.check('input[name="perspective"][value="1"]')
    expect(page.locator("#hand-0")).to_have_attribute("data-hidden", "true")


@pytest.mark.slow
def test_a_running_tournament_page_follows_new_games(
    page: Page, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from arena.testing.demo_data import play_games

    work_dir = tmp_path_factory.mktemp("running")
    store = st.Store.open(work_dir / "data")
    bots = ("ann", "bob", "cy")
    demo = play_demo_tournament(store, work_dir / "bots", name="running", bots=bots, max_games=2)
    server, port = create_web_server(store, "127.0.0.1", 0, poll_ms=POLL_MS)
    try:
        page.goto(f"http://127.0.0.1:{port}/tournaments/{demo.tournament_id}")
        expect(page.locator("table.games tbody tr")).to_have_count(2)
        expect(page.locator("h1 .status")).to_have_text("running")
        play_games(store, demo.tournament_id)
        st.set_status(store, demo.tournament_id, st.TournamentStatus.FINISHED)
        expect(page.locator("table.games tbody tr")).to_have_count(6)
        expect(page.locator("h1 .status")).to_have_text("finished")
    finally:
        if demo.lease is not None:
            demo.lease.release()
        server.stop()
        store.close()


@pytest.mark.slow
def test_the_content_security_policy_is_enforced_and_the_pages_need_no_exception(
    browser: Browser, site: LiveSite
) -> None:
    """Every page runs under the CSP without a violation (the page fixture fails on
    one); an inline script injected into a served page is refused by the browser."""
    context = browser.new_context()
    page = context.new_page()
    violations: list[str] = []
    page.on("console", lambda message: violations.append(message.text))
    page.goto(f"{site.base_url}/games/{site.demo.game_ids[0]}")
    expect(page.locator("#viewer")).to_be_visible()
    assert violations == []
    page.evaluate(
        """() => { const s = document.createElement("script");
                   s.textContent = "window.inlineRan = true"; document.body.append(s); }"""
    )
    assert page.evaluate("() => window.inlineRan === true") is False
    context.close()
    assert any("Content Security Policy" in text for text in violations), violations


@pytest.mark.slow
def test_an_sprt_test_page_draws_its_llr_chart_under_the_csp(page: Page, tmp_path: Path) -> None:
    """The chart is inline SVG styled by the page's stylesheet: drawn, with both bounds
    in their colour, and nothing the Content-Security-Policy blocks (the fixture checks)."""
    from arena.testing.demo_data import add_demo_bots, play_games
    from arena.tournament.policy.config import build_sprt
    from arena.tournament.policy.rounds import create_tournament, next_rounds

    store = st.Store.open(tmp_path / "data")
    add_demo_bots(store, tmp_path / "bots", ["cand", "base"])
    config = st.TournamentConfig(sprt=build_sprt(elo0=0.0, elo1=300.0, model="logistic",
                                                 max_pairs=6))  # fmt: skip
    test = create_tournament(store, "llr", st.TournamentFormat.SPRT, ["cand", "base"], config)
    while planned := next_rounds(store, test.id, batch=2):
        st.add_rounds(store, test.id, planned)
        play_games(store, test.id)
    st.set_status(store, test.id, st.TournamentStatus.FINISHED)
    server, port = create_web_server(store, "127.0.0.1", 0)
    try:
        page.goto(f"http://127.0.0.1:{port}/tournaments/{test.id}")
        chart = page.locator("#llr-plot svg")
        expect(chart).to_be_visible()
        box = chart.bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 50
        assert page.locator("#llr-plot .plot-bound").count() == 2
        stroke = page.eval_on_selector("#llr-plot .plot-bound", "n => getComputedStyle(n).stroke")
        assert stroke == "rgb(192, 57, 43)"  # the stylesheet's colour: it loaded and applied
        expect(page.locator("#sprt-result")).to_contain_text("pairs")
    finally:
        server.stop()
        store.close()
