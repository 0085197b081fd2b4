"""Debian's chromium driven headless through Playwright (a dev dependency).

Playwright's own browser download does not work on these machines, so we
point it at /usr/bin/chromium. Used by the browser tests and the README
screenshots script; the web server itself never needs a browser.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


@contextmanager
def launch_chromium() -> Iterator[Browser]:
    """A headless chromium for the duration of the ``with`` block."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=list(CHROMIUM_ARGS), headless=True
        )
        try:
            yield browser
        finally:
            browser.close()


def pumping(page: Page) -> Callable[[float], None]:
    """A pause for ``arena.testing.waiting``'s polls that runs Playwright meanwhile: its
    sync API runs a page's route and event handlers only inside its own calls, so a
    test that waits on what a handler records must spend the interval in one."""

    def pause(seconds: float) -> None:
        page.wait_for_timeout(seconds * 1000)

    return pause
