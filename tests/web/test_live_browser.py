"""A live game in Chromium: a real sandboxed tournament, the web server on port 0.

The page follows the game action by action (each history item carries the
referee's ``at_ms`` and the page's ``shownMs``), shows hands as card backs,
and at the end becomes the stored game's replay. The latency figures are
``benchmarks/live_latency.py``'s (run with ``-s`` to see this run's).
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from arena import store as st
from arena.testing.browser import CHROMIUM
from arena.testing.live_games import slow_tournament, watch_first_live_game

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed"),
]

if Path(CHROMIUM).exists():
    from playwright.sync_api import Browser, Page, expect
else:  # pragma: no cover - the module is skipped
    Browser = object  # type: ignore[misc,assignment]



def _shows_a_live_game(page: Page) -> None:
    """Live, and what the players hold hidden from a spectator."""
    expect(page.locator("#live-state")).to_have_text("live")
    expect(page.locator("#hand-0 .card.back").first).to_be_visible()
    expect(page.locator("#hand-1 .card.back").first).to_be_visible()
    expect(page.locator("#facedown-cards-0")).to_have_text("")


def test_a_spectator_follows_each_action_as_it_is_played_then_sees_the_replay(
    browser: Browser, tmp_path: Path
) -> None:
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if "Security Policy" in m.text else None)
    try:
        with slow_tournament(tmp_path) as (store, base_url):
            watched = watch_first_live_game(page, store, base_url, actions=40,
                                            on_open=_shows_a_live_game)  # fmt: skip
            lags = watched.latencies_ms
            assert len(lags) >= 10, "the page did not follow the game as it was played"
            assert min(lags) >= 0, "an action shown before the referee applied it"
            print(f"\nspectator latency over {len(lags)} actions: median"
                  f" {statistics.median(lags):.0f} ms, max {max(lags):.0f} ms")  # fmt: skip
            page.wait_for_url("**/games/*", timeout=180_000)  # the game is over: its replay
            page.wait_for_selector('#viewer[data-ready="true"]')
            stored = st.find_game(store, watched.match_id, watched.game_index)
            assert stored is not None
            assert page.url.split("#")[0].endswith(f"/games/{stored.id}")
        assert errors == []
    finally:
        context.close()
