"""Submitting in Chromium under the server's Content-Security-Policy: a folder (packed by
the page) passes the real submission check and shows up with its version and rating; a
broken bot's zip is refused with the conformance findings; the token never becomes a
cookie or enters the page's storage."""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import store as st
from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.bots.submission import SubmissionCheck, check_submission
from arena.referee import load_bot
from arena.server.submissions import WebSubmitter
from arena.testing.browser import CHROMIUM
from arena.web import create_web_server

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed"),
]

if Path(CHROMIUM).exists():
    from playwright.sync_api import Browser, Page, expect
else:  # pragma: no cover - the module is skipped
    Browser = Page = object  # type: ignore[misc,assignment]

REPO = Path(__file__).resolve().parents[2]



@pytest.fixture
def site(tmp_path: Path, browser: Browser) -> Iterator[tuple[Page, str, st.Store]]:
    store = st.Store.open(tmp_path / "data")
    token = st.create_token(store, "ann")
    opponent = load_bot(SAMPLE_RANDOM_BOT)

    def smoke(directory: Path) -> SubmissionCheck:
        return check_submission(load_bot(directory), opponent)

    server, port = create_web_server(store, "127.0.0.1", 0, submitter=WebSubmitter(store, smoke))
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if "Security Policy" in m.text else None)
    page.goto(f"http://127.0.0.1:{port}/")
    page.locator("header nav a", has_text="Submit a bot").click()
    page.wait_for_url("**/submit")
    page.fill("#token", token)
    try:
        yield page, token, store
        assert context.cookies() == []
        stored = page.evaluate("() => JSON.stringify([{...localStorage}, {...sessionStorage}])")
        assert token not in stored
        assert errors == []
    finally:
        context.close()
        server.stop()
        store.close()


def test_a_folder_is_packed_checked_stored_and_listed(
    site: tuple[Page, str, st.Store], tmp_path: Path
) -> None:
    page, _, store = site
    folder = tmp_path / "webbot"
    shutil.copytree(REPO / "sample_bots" / "python_random", folder)
    toml = (folder / "bot.toml").read_text()
    (folder / "bot.toml").write_text(toml.replace('"python_random"', '"webbot"'))
    page.set_input_files("#folder", folder)
    page.click("#send")
    form = page.locator("#submit-form")
    expect(form).not_to_have_attribute("data-state", "sending", timeout=180_000)
    assert form.get_attribute("data-state") == "stored", page.locator("#outcome").inner_text()
    version = st.get_bot(store, "webbot").versions[-1].version
    expect(page.locator("#outcome")).to_have_text(f"Stored: webbot version {version[:12]}")
    expect(page.locator("#findings tbody tr").first).to_contain_text("passed")
    expect(page.locator("#findings td.failed")).to_have_count(0)
    row = page.locator(f'#bots table[data-bot="webbot"] tr[data-version="{version}"]')
    expect(row).to_have_count(1)
    expect(row.locator("td.failures")).to_have_text("none")
    expect(page.locator("#who")).to_contain_text("ann (user): 1 bot(s)")


def test_a_broken_bot_is_refused_with_its_findings(
    site: tuple[Page, str, st.Store], tmp_path: Path
) -> None:
    page, _, store = site
    archive = tmp_path / "broken.zip"
    with zipfile.ZipFile(archive, "w") as packed:
        packed.writestr(
            "bot.toml", 'name = "broken"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'
        )
        packed.writestr("bot.py", "raise SystemExit(3)\n")
    page.set_input_files("#archive", archive)
    page.click("#send")
    expect(page.locator("#submit-form")).to_have_attribute("data-state", "refused", timeout=180_000)
    expect(page.locator("#outcome")).to_contain_text("Refused (HTTP 422): bot refused:")
    expect(page.locator("#findings td.failed").first).to_be_visible()
    assert st.list_bots(store) == []


def test_an_archive_past_the_limit_is_refused_saying_what_to_do(
    site: tuple[Page, str, st.Store], tmp_path: Path
) -> None:
    page, _, store = site
    archive = tmp_path / "big.tar.gz"
    archive.write_bytes(b"\0" * (WebSubmitter(store, None).max_bytes + 1))
    page.set_input_files("#archive", archive)
    page.click("#send")
    expect(page.locator("#submit-form")).to_have_attribute("data-state", "refused")
    expect(page.locator("#outcome")).to_contain_text("Refused (HTTP 413): the request body is")
    expect(page.locator("#outcome")).to_contain_text("send less, leaving out what the bot does")
    expect(page.locator("#findings")).to_be_hidden()


def test_a_wrong_token_is_named(site: tuple[Page, str, st.Store], tmp_path: Path) -> None:
    page, _, _ = site
    page.fill("#token", "")
    page.click("#show-bots")
    expect(page.locator("#who")).to_have_text("give your token first")
    page.fill("#token", "not-a-token")
    page.click("#show-bots")
    expect(page.locator("#who")).to_have_text(
        "unknown token (ask the person who runs this arena for yours: they make it with"
        " arena token create YOUR_NAME)"
    )


def test_with_javascript_off_the_token_never_enters_the_address(
    browser: Browser, tmp_path: Path
) -> None:
    """A browser without scripts sends the form itself: the token field has no name, so
    that GET carries nothing; /submit, /play and /replay say they need JavaScript."""
    store = st.Store.open(tmp_path / "data")
    submitter = WebSubmitter(store, lambda directory: pytest.fail("nothing is sent"))
    server, port = create_web_server(store, "127.0.0.1", 0, submitter=submitter)
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        for path in ("/play", "/replay"):
            page.goto(f"http://127.0.0.1:{port}{path}")
            expect(page.locator("#needs-script")).to_contain_text("JavaScript")
        page.goto(f"http://127.0.0.1:{port}/submit")
        expect(page.locator("#needs-script")).to_contain_text("arena remote submit")
        page.fill("#token", "secret-token-of-ann")
        with page.expect_navigation():
            page.click("#send")
        assert page.url == f"http://127.0.0.1:{port}/submit?"
    finally:
        context.close()
        server.stop()
        store.close()
