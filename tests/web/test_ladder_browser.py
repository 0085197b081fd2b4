"""The ladder's page in Chromium: reached from the nav bar, standings with sigma, the queue,
a recent game that opens in the replay viewer; no script error, nothing the CSP blocks."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from arena.kahuna import play_random_game
from arena.referee import load_bot
from arena.store import (
    Store,
    TournamentConfig,
    add_bot_version,
    add_ladder_match,
    create_ladder,
    ladder_entrants,
)
from arena.testing.browser import CHROMIUM
from arena.testing.demo_data import report_for
from arena.tournament.policy.results import store_game
from arena.web import create_web_server

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed")

if Path(CHROMIUM).exists():
    from playwright.sync_api import Browser, expect
else:  # pragma: no cover - the module is skipped
    Browser = object  # type: ignore[misc,assignment]

REPO = Path(__file__).resolve().parents[2]
BOTS = ("alpha", "beta", "gamma")



@pytest.mark.slow
def test_the_ladder_page_from_the_nav_bar_to_a_replay(browser: Browser, tmp_path: Path) -> None:
    store = Store.open(tmp_path / "data")
    for name in BOTS:
        target = tmp_path / "bots" / name
        shutil.copytree(REPO / "sample_bots" / "python_random", target)
        toml = (target / "bot.toml").read_text()
        (target / "bot.toml").write_text(toml.replace('"python_random"', f'"{name}"'))
        add_bot_version(store, load_bot(target))
    ladder = create_ladder(store, "ladder", TournamentConfig(), {"placement_matches": 1})
    ids = [r.version_id for r in ladder_entrants(store, ladder)]
    match_id = add_ladder_match(store, ladder, ids[0], ids[1], games=2, seed=3)
    game_id = store_game(store, match_id, report_for(0, ("alpha", "beta"), play_random_game(3)))
    server, port = create_web_server(store, "127.0.0.1", 0)
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if "Security Policy" in m.text else None)
    try:
        page.goto(f"http://127.0.0.1:{port}/")
        page.locator("header nav a", has_text="Ladder").click()
        page.wait_for_url("**/ladder")
        expect(page.locator("h1")).to_contain_text("ladder")
        rows = page.locator("#ladder-standings tbody tr")
        expect(rows).to_have_count(len(BOTS))
        gamma = page.locator('#ladder-standings tr[data-bot="gamma"] td')
        expect(gamma.nth(5)).to_have_text("± 8.33")  # unrated yet: the prior sigma
        expect(page.locator('#ladder-standings tr[data-bot="alpha"] td').nth(6)).to_have_text("1")
        expect(page.locator("#ladder-queue li").first).to_contain_text("vs")
        page.locator("#ladder-games a", has_text=f"#{game_id}").click()
        # the viewer writes its step into the fragment once it has drawn, which can be
        # before this wait starts: the URL is the game's with or without it
        page.wait_for_url(re.compile(rf"/games/{game_id}(#.*)?$"))
        page.wait_for_selector('#viewer[data-ready="true"]')
        assert errors == []
    finally:
        context.close()
        server.stop()
        store.close()
