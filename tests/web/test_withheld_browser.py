"""A game whose deal is still to be played, in Chromium: the spectator's view only.

Game 0 of a paired match is stored, game 1 not: its page offers only the "both
seats" perspective (even when the link asks for another), shows both hands as
card backs and says why, and never asks the server for another perspective.
Once game 1 is stored the same page is the full replay.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arena import store as st
from arena.testing.browser import CHROMIUM
from arena.testing.demo_data import play_demo_tournament, play_games
from arena.web.server import create_web_server

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"
)

if Path(CHROMIUM).exists():
    from playwright.sync_api import Browser, expect
else:  # pragma: no cover - the module is skipped
    Browser = object  # type: ignore[misc,assignment]


@pytest.mark.slow
def test_a_half_played_deal_shows_only_what_a_spectator_sees(
    browser: Browser, tmp_path: Path
) -> None:
    store = st.Store.open(tmp_path / "data")
    demo = play_demo_tournament(
        store, tmp_path / "bots", name="half-played", bots=("greedy_gecko", "random_reef"),
        games_per_match=2, max_games=1,
    )  # fmt: skip
    [game_id] = demo.game_ids
    server, port = create_web_server(store, "127.0.0.1", 0)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    asked: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("request", lambda request: asked.append(request.url))
    try:
        page.goto(f"http://127.0.0.1:{port}/games/{game_id}#step=5&perspective=all")
        page.wait_for_selector('#viewer[data-ready="true"]')
        expect(page.locator("#withheld")).to_contain_text("withheld until game 1 of match")
        radios = page.locator('input[name="perspective"]')
        expect(radios).to_have_count(1)
        expect(radios.first).to_have_value("public")
        expect(radios.first).to_be_checked()
        expect(page.locator("#hand-0 .card.back").first).to_be_visible()
        expect(page.locator("#hand-1 .card.back").first).to_be_visible()
        expect(page.locator("#facedown-cards-0")).to_have_text("")
        frames = [url for url in asked if "/frames" in url]
        assert frames and all(url.endswith("perspective=public") for url in frames), frames
        assert not any(url.endswith("/record") for url in asked)

        play_games(store, demo.tournament_id)  # game 1: the deal is played out
        page.goto("about:blank")  # (the same URL again would only change the hash)
        page.goto(f"http://127.0.0.1:{port}/games/{game_id}#step=5&perspective=all")
        page.wait_for_selector('#viewer[data-ready="true"]')
        expect(page.locator("#withheld")).to_have_count(0)
        expect(page.locator('input[name="perspective"]')).to_have_count(4)
        expect(page.locator('input[value="all"]')).to_be_checked()
        expect(page.locator("#hand-0 .card:not(.back)").first).to_be_visible()
        assert errors == [], f"JavaScript errors on the page: {errors}"
    finally:
        context.close()
        server.stop()
        if demo.lease is not None:
            demo.lease.release()
        store.close()
