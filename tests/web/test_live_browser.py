"""A live game in Chromium: a real sandboxed tournament, the web server on port 0.

The page follows the game action by action and each action appears within
1 s of the referee applying it (each history item carries the referee's
``at_ms`` and the page's ``shownMs``); at the end the page becomes the
stored game's replay. Run with ``-s`` to see the measured latencies.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import store as st
from arena.referee import load_bot
from arena.testing.browser import CHROMIUM, launch_chromium
from arena.testing.live_games import write_slow_bot
from arena.tournament.rounds import create_tournament
from arena.tournament.runner import TournamentRunner
from arena.web import create_web_server

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed"),
]

if Path(CHROMIUM).exists():
    from playwright.sync_api import Browser, expect
else:  # pragma: no cover - the module is skipped
    Browser = object  # type: ignore[misc,assignment]

THINK_S = 0.06
TARGET_MS = 1000


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch_chromium() as launched:
        yield launched


def test_a_spectator_sees_each_action_within_a_second_then_the_replay(
    browser: Browser, tmp_path: Path
) -> None:
    store = st.Store.open(tmp_path / "data")
    for name in ("slow_ann", "slow_bob"):
        st.add_bot_version(store, load_bot(write_slow_bot(tmp_path / "bots", name, THINK_S)))
    config = st.TournamentConfig(games_per_match=2)
    tournament = create_tournament(
        store, "live-cup", st.TournamentFormat.ROUND_ROBIN, ["slow_ann", "slow_bob"], config
    )
    server, port = create_web_server(store, "127.0.0.1", 0)
    runner = TournamentRunner(store, tournament.id, concurrency=1, pin_cpus=False)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if "Security Policy" in m.text else None)
    try:
        deadline = time.monotonic() + 60
        while not st.list_live_games(store) and time.monotonic() < deadline:
            time.sleep(0.05)
        (game,) = st.list_live_games(store)
        page.goto(f"http://127.0.0.1:{port}/live/{game.match_id}/{game.game_index}")
        page.wait_for_selector('#viewer[data-ready="true"]')
        expect(page.locator("#live-state")).to_have_text("live")
        expect(page.locator("#hand-0 .card.back").first).to_be_visible()
        opened_ms = time.time() * 1000
        page.locator("#history li").nth(59).wait_for(state="attached", timeout=60_000)
        items = page.eval_on_selector_all(
            "#history li",
            "items => items.map(i => [Number(i.dataset.atMs), Number(i.dataset.shownMs)])",
        )
        latencies = sorted(shown - at for at, shown in items if at > opened_ms)
        assert len(latencies) >= 20, "the page did not follow the game as it was played"
        assert all(lag >= 0 for lag in latencies)
        p90 = latencies[int(0.9 * len(latencies))]
        print(
            f"\nspectator latency over {len(latencies)} actions: median"
            f" {statistics.median(latencies):.0f} ms, p90 {p90:.0f} ms, max {latencies[-1]:.0f} ms"
        )
        assert p90 < TARGET_MS, latencies
        page.wait_for_url("**/games/*", timeout=120_000)  # the game is over: its replay
        page.wait_for_selector('#viewer[data-ready="true"]')
        stored = st.find_game(store, game.match_id, game.game_index)
        assert stored is not None and page.url.split("#")[0].endswith(f"/games/{stored.id}")
        assert errors == []
    finally:
        context.close()
        thread.join(120)
        server.stop()
        store.close()
