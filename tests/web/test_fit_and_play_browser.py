"""Every page fits the window at 1280, 1920 and 400 px, and the replay viewer plays.

Chromium measures each page: the document is no wider than the viewport (no
horizontal scroll bar) and every table's box ends inside it (a wide table
scrolls in its own box instead of running under its neighbours or off the
edge). The viewer plays by itself, pauses, jumps with its scrubber, shows the
points after each scoring and says the result in words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import store as st
from arena.testing.browser import CHROMIUM
from arena.testing.waiting import assert_stays, wait_until
from tests.web.conftest import LiveSite

pytestmark = [
    pytest.mark.slow,  # a web server and a browser
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed"),
]

if Path(CHROMIUM).exists():
    from playwright.sync_api import Browser, Page, expect
else:  # pragma: no cover - the module is skipped
    Browser = Page = object  # type: ignore[misc,assignment]

WIDTHS = (1280, 1920, 400)

OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const found = [];
  if (document.documentElement.scrollWidth > width) {
    found.push(`the page is ${document.documentElement.scrollWidth} px wide`);
  }
  // a table not shown (in a closed <details>: laid out, but hidden) runs under nothing
  const shownTables = [...document.querySelectorAll("table")].filter((t) => t.checkVisibility());
  for (const table of shownTables) {
    const box = table.getBoundingClientRect();
    let clip = null;  // a scrolling box around the table keeps it inside
    for (let up = table; up; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (["auto", "scroll"].includes(style.overflowX)) {
        clip = up.getBoundingClientRect();
        break;
      }
    }
    const right = clip ? Math.min(box.right, clip.right) : box.right;
    const name = table.id || table.className || `of ${table.rows.length} rows`;
    if (right > width + 0.5 || box.left < -0.5) {
      found.push(`table ${name} ends at ${Math.round(right)} px`);
    }
    for (const other of shownTables) {  // one runs under another
      if (other === table || table.contains(other) || other.contains(table)) continue;
      const o = other.getBoundingClientRect();
      const shown = clip ? Math.min(box.right, clip.right) : box.right;
      if (box.left < o.right && o.left < shown && box.top < o.bottom && o.top < box.bottom) {
        found.push(`table ${name} overlaps table ${other.id || other.className}`);
      }
    }
  }
  return found;
}"""


def _pages(site: LiveSite) -> list[str]:
    game = st.list_games(site.store, tournament_id=site.demo.tournament_id, limit=1)[0]
    return [
        "/", f"/tournaments/{site.demo.tournament_id}", f"/games/{game.id}",
        f"/bots/{game.bots[0]}", "/submit", "/live", "/replay",
        f"/h2h?a={game.bots[0]}&b={game.bots[1]}",
    ]  # fmt: skip


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def sized(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": request.param, "height": 900})
    yield context.new_page()
    context.close()


def test_every_page_fits_the_window(sized: Page, site: LiveSite) -> None:
    """Control: a 2000 px wide block makes the same measure report the page."""
    problems = {}
    for path in _pages(site):
        sized.goto(site.base_url + path)
        sized.wait_for_load_state("load")
        viewer = sized.locator("#viewer")  # the one page script that fills the page at start
        if viewer.count():
            expect(viewer).to_have_attribute("data-ready", "true")
        found = sized.evaluate(OVERFLOW)
        if found:
            problems[path] = found
    assert problems == {}
    sized.evaluate("document.body.append(Object.assign(document.createElement('div'),"
                   " {style: 'width: 2000px; height: 1px'}))")  # fmt: skip
    assert sized.evaluate(OVERFLOW) != []


HIDDEN_SHOWN = """() => [...document.querySelectorAll('[hidden]')]
  .filter((node) => getComputedStyle(node).display !== 'none')
  .map((node) => node.id || node.tagName)"""


def test_what_a_page_hides_stays_hidden_at_every_width(sized: Page, site: LiveSite) -> None:
    """A narrow window's table rules (display: block) do not show what a page hides: /play's
    games table before it is asked for, /submit's empty findings after a refused archive."""
    shown = {}
    for path in [*_pages(site), "/play"]:
        sized.goto(site.base_url + path)
        sized.wait_for_load_state("load")
        sized.evaluate("document.querySelectorAll('table').forEach((t) => { t.hidden = true; })")
        if found := sized.evaluate(HIDDEN_SHOWN):
            shown[path] = found
    assert shown == {}


def test_live_lists_the_recently_finished_games(sized: Page, site: LiveSite) -> None:
    newest = st.list_games(site.store, limit=1)[0]
    sized.goto(f"{site.base_url}/live")
    recent = sized.locator("#recent tr.game-row")
    expect(recent.first).to_have_attribute("data-game", str(newest.id))
    expect(recent.first.locator("a.bot")).to_have_text(list(newest.bots))


def _open(page: Page, site: LiveSite, game_id: int) -> None:
    page.goto(f"{site.base_url}/games/{game_id}")
    page.wait_for_selector('#viewer[data-ready="true"]')


def _step(page: Page) -> int:
    return int(page.locator("#viewer").get_attribute("data-step") or "0")


def _until_step(page: Page, at_least: int) -> None:
    """Wait for the viewer to reach a step (the page's CSP forbids wait_for_function)."""
    wait_until(lambda: _step(page) >= at_least, f"the viewer at step {at_least} or later", 10,
               interval_s=0.05, state=lambda: _step(page))  # fmt: skip


def test_the_viewer_plays_pauses_and_scrubs(sized: Page, site: LiveSite) -> None:
    game = st.list_games(site.store, tournament_id=site.demo.tournament_id, limit=1)[0]
    _open(sized, site, game.id)
    last = int(sized.locator("#scrubber").get_attribute("max") or "0")
    assert last > 10
    sized.select_option("#speed", "100")
    sized.click("#play")
    expect(sized.locator("#viewer")).to_have_attribute("data-playing", "true")
    _until_step(sized, 5)
    sized.click("#play")
    expect(sized.locator("#viewer")).to_have_attribute("data-playing", "false")
    paused = _step(sized)
    assert_stays(lambda: _step(sized) == paused, 0.4, "the paused viewer at its step",
                 interval_s=0.05, state=lambda: _step(sized))  # fmt: skip
    sized.locator("#scrubber").fill(str(last // 2))
    expect(sized.locator("#viewer")).to_have_attribute("data-step", str(last // 2))
    sized.keyboard.press("End")
    expect(sized.locator("#viewer")).to_have_attribute("data-step", str(last))
    sized.click("#play")  # at the end, play starts again from the beginning
    _until_step(sized, 1)
    sized.click("#play")


def test_the_viewer_shows_the_points_after_each_scoring_and_the_result_in_words(
    sized: Page, site: LiveSite
) -> None:
    games = st.list_games(site.store, tournament_id=site.demo.tournament_id, limit=100)
    game = next(g for g in games if g.reason in ("points", "final_points", "no_bridges"))
    _open(sized, site, game.id)
    rows = sized.locator("#round-scores tbody tr")
    expect(rows.first).to_be_visible()
    texts = rows.all_inner_texts()
    assert texts[0].startswith("round 1")
    assert texts[-1].startswith("the end")
    result = sized.locator("#result").inner_text()
    assert not re.search(r"\(\w+\)", result), result  # no bare reason code such as (no_bridges)
    assert result.startswith(f"{game.winner} won: ") or result.startswith("draw")


def test_with_javascript_off_the_viewer_says_it_needs_it(browser: Browser, site: LiveSite) -> None:
    """The viewer draws every frame with its script: without it the page says so (it read
    'loading…' for ever), and with it nothing of the note shows."""
    game = st.list_games(site.store, tournament_id=site.demo.tournament_id, limit=1)[0]
    for scripts, shown in ((False, 1), (True, 0)):
        context = browser.new_context(java_script_enabled=scripts)
        page = context.new_page()
        page.goto(f"{site.base_url}/games/{game.id}")
        expect(page.locator("#needs-script:visible")).to_have_count(shown)
        context.close()
