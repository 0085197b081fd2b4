"""/submit tells a participant what to do with what a participant can run."""

from __future__ import annotations

from pathlib import Path

from arena.store import Store
from arena.web.app import WebApp
from arena.web.source import StoreSource


def test_the_submit_page_gives_steps_a_participant_can_follow(tmp_path: Path) -> None:
    """The steps end at `arena remote submit`; the participant is never told to create their
    own token (only the admin can)."""
    with Store.open(tmp_path / "data") as store:
        response = WebApp(StoreSource(store)).handle("GET", "/submit", {})
    assert response.status == 200
    page = response.body.decode()
    steps = page[page.index('<ol class="steps"') : page.index("</ol>")]
    assert "Ask the person who runs this arena" in steps
    assert "arena bot new python my_bot" in steps and "arena bot check my_bot" in steps
    assert "arena remote submit my_bot" in steps
    assert "a name of your own" in steps  # the guide's my_bot is the first submitter's
    assert "Give your token (from <code>arena token create" not in page
    assert 'href="/static/style.css"' in page and 'class="submit-form card-box"' in page


def test_the_play_page_sends_a_participant_to_the_admin_for_a_token(tmp_path: Path) -> None:
    with Store.open(tmp_path / "data") as store:
        page = WebApp(StoreSource(store)).handle("GET", "/play", {}).body.decode()
    assert "the person who runs this arena makes it for you" in page
    assert "arena token create" not in page
