"""The /live list in Chromium refreshes itself under the CSP: a game that starts after
the page loaded appears, a finished one goes, without a reload and without inline script.

The games are the store's live rows (``start_live_game`` / ``end_live_game``, as the
runner writes them while it plays) of a real stored match, served by a real web server
on port 0. Control: a page that does not poll ``/api/live`` (no script) keeps the rows it
was rendered with, and this test fails at the first new game.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import store as st
from arena.testing.browser import CHROMIUM
from arena.testing.demo_data import play_demo_tournament
from arena.web import create_web_server
from arena.web.live import LIVE_LIST_POLL_MS

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed")

if Path(CHROMIUM).exists():
    from playwright.sync_api import Browser, expect
else:  # pragma: no cover - the module is skipped
    Browser = object  # type: ignore[misc,assignment]

WAIT_MS = 4 * LIVE_LIST_POLL_MS + 2000  # a few polls, and a loaded machine


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[st.Store, st.MatchRow, str]]:
    """A store with one unplayed match of two games, and its web server's URL."""
    store = st.Store.open(tmp_path / "data")
    demo = play_demo_tournament(store, tmp_path / "bots", bots=("ann", "bob"), max_games=0)
    match = st.list_matches(store, demo.tournament_id)[0]
    server, port = create_web_server(store, "127.0.0.1", 0)
    try:
        yield store, match, f"http://127.0.0.1:{port}"
    finally:
        server.stop()
        assert demo.lease is not None
        demo.lease.release()
        store.close()


@pytest.mark.slow
def test_the_live_list_shows_games_that_start_and_drops_games_that_end_without_a_reload(
    browser: Browser, served: tuple[st.Store, st.MatchRow, str]
) -> None:
    store, match, base_url = served
    head = {"match": {"bots": [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}]}}
    st.start_live_game(store, match.id, 0, head)  # in play when the page loads
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if "Security Policy" in m.text else None)
    rows = page.locator("#live-games tbody tr")
    try:
        page.goto(f"{base_url}/live")
        expect(rows).to_have_count(1)
        expect(page.locator(f'tr[data-live="{match.id}/0"] a').first).to_have_attribute(
            "href", f"/live/{match.id}/0"
        )
        tournament = st.get_tournament(store, match.tournament_id).name
        for row in (page.locator(f'tr[data-live="{match.id}/0"]'),):  # the names, linked
            expect(row.locator("a.bot")).to_have_text(["ann", "bob"])
            expect(row.locator("a.bot").first).to_have_attribute("href", "/bots/ann")
            expect(row).to_contain_text(tournament)
        page.evaluate("window.loadedOnce = true")  # gone if the page reloads

        st.start_live_game(store, match.id, 1, head)  # starts after the page loaded
        started = page.locator(f'tr[data-live="{match.id}/1"]')
        expect(started).to_have_count(1, timeout=WAIT_MS)
        expect(started.locator("a").first).to_have_text(f"game 1 of match {match.id}")
        expect(started.locator("a").first).to_have_attribute("href", f"/live/{match.id}/1")
        expect(started.locator("a.bot")).to_have_text(["ann", "bob"])  # drawn by the script
        expect(started).to_contain_text(tournament)
        expect(rows).to_have_count(2)

        st.end_live_game(store, match.id, 0)  # over: its row goes
        expect(page.locator(f'tr[data-live="{match.id}/0"]')).to_have_count(0, timeout=WAIT_MS)
        expect(rows).to_have_count(1)

        st.end_live_game(store, match.id, 1)
        expect(rows).to_have_text(["No game is being played right now."], timeout=WAIT_MS)

        assert page.evaluate("window.loadedOnce === true"), "the page reloaded itself"
        assert page.locator("#live").get_attribute("data-updated"), "the badge never updated"
        assert errors == []
    finally:
        context.close()
