"""Debian's chromium driven headless through Playwright (a dev dependency).

Playwright's own browser download does not work on these machines, so we
point it at /usr/bin/chromium. Used by the browser tests and the README
screenshots script; the web server itself never needs a browser.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser

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
