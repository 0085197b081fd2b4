"""`arena serve --web-port 0`: the web pages served beside the gRPC API by a real process."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import store as st
from arena.testing.demo_data import play_demo_tournament

pytestmark = pytest.mark.slow  # every test here starts a process or a server


@contextlib.contextmanager
def _served(data_dir: Path, *flags: str, until: str | None = None) -> Iterator[str]:
    """A real `arena serve` of ``data_dir`` with its web pages, read up to its web address
    (or on to the line that starts with ``until``); that address. Stopped with SIGTERM,
    which must exit 0."""
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--data-dir", str(data_dir),
         "--port", "0", "--web-port", "0", *flags],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        web_url = None
        for line in process.stdout:
            found = re.search(r"web pages on (http://\S+/)", line)
            if found:
                web_url = found.group(1)
            if (web_url and until is None) or (until and line.startswith(until)):
                break
        assert web_url, "arena serve printed no web address"
        yield web_url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert process.returncode == 0


@pytest.mark.timeout(60)  # a server that never prints its address fails, not hangs
def test_serve_serves_the_web_pages_of_its_data_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with st.Store.open(data_dir) as store:
        demo = play_demo_tournament(store, tmp_path / "bots", name="served", bots=("ann", "bob"))
    with _served(data_dir) as web_url:
        with urllib.request.urlopen(web_url + "api/leaderboard", timeout=10) as response:
            board = json.loads(response.read())
        assert {row["bot"] for row in board["leaderboard"]} == {"ann", "bob"}
        game_url = f"{web_url}games/{demo.game_ids[0]}"
        with urllib.request.urlopen(game_url, timeout=10) as response:
            assert response.status == 200
            assert 'id="viewer"' in response.read().decode()


@pytest.mark.timeout(60)
def test_serve_passes_the_spectator_delay_and_its_submission_path_to_the_web(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    with _served(data_dir, "--spectator-delay-s", "2.5", until="admin token:") as web_url:
        with urllib.request.urlopen(web_url + "api/live", timeout=10) as response:
            assert json.loads(response.read()) == {"games": [], "delay_s": 2.5}
        with urllib.request.urlopen(web_url + "submit", timeout=10) as response:
            assert 'id="disabled"' not in response.read().decode()
        token = (data_dir / "admin.token").read_text().strip()
        request = urllib.request.Request(
            web_url + "api/submit", data=b"not an archive", method="POST",
            headers={"Content-Type": "application/octet-stream",
                     "Authorization": f"Bearer {token}"},
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 400
        assert "bot refused: not a tar.gz or zip" in json.loads(refused.value.read())["error"]


@pytest.mark.timeout(60)
def test_serve_rates_peoples_games_by_its_flag_and_the_admins_stored_setting(
    tmp_path: Path,
) -> None:
    """--limit-rated-play 1 turns rated play on for everyone; the admin's stored setting
    (arena limits set rated_play 0 --user bob) turns it off for bob. Control: without
    the flag, ann's games are unrated."""
    data_dir = tmp_path / "data"
    with st.Store.open(data_dir) as store:
        tokens = {user: st.create_token(store, user) for user in ("ann", "bob")}
    from arena.cli import main

    assert main(["limits", "set", "rated_play", "0", "--user", "bob",
                 "--data-dir", str(data_dir)]) == 0  # fmt: skip

    def rated(web_url: str, user: str) -> bool:
        request = urllib.request.Request(
            web_url + "api/play/games", headers={"Authorization": f"Bearer {tokens[user]}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            payload = json.loads(response.read())
        assert payload["games"] == []
        return bool(payload["rated_play"])

    with _served(data_dir, "--limit-rated-play", "1") as web_url:
        assert (rated(web_url, "ann"), rated(web_url, "bob")) == (True, False)
    with _served(data_dir) as web_url:
        assert (rated(web_url, "ann"), rated(web_url, "bob")) == (False, False)
