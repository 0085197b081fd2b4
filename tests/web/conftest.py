"""A real store with a real round robin, served by a real web server on port 0."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from arena import store as st
from arena.testing.browser import CHROMIUM, launch_chromium
from arena.testing.demo_data import DemoTournament, play_demo_tournament
from arena.web import WebServer, create_web_server

if TYPE_CHECKING:
    from playwright.sync_api import Browser

POLL_MS = 250  # live pages refresh this often in tests


@dataclass(frozen=True)
class LiveSite:
    base_url: str
    store: st.Store
    demo: DemoTournament
    work_dir: Path
    server: WebServer


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    work_dir = tmp_path_factory.mktemp("web")
    store = st.Store.open(work_dir / "data")
    demo = play_demo_tournament(store, work_dir / "bots", name="web-test-cup", seed=5, forfeits=1)
    server, port = create_web_server(store, "127.0.0.1", 0, poll_ms=POLL_MS)
    try:
        yield LiveSite(f"http://127.0.0.1:{port}", store, demo, work_dir, server)
    finally:
        server.stop()
        store.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless chromium for every browser test (Playwright's sync API allows one
    at a time in a process)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    with launch_chromium() as launched:
        yield launched
