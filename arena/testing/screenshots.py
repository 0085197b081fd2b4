"""README screenshots: a real server on a temporary data dir, photographed by chromium.

Run ``scripts/screenshots`` (or ``python3 -m arena.testing.screenshots``). It
stores two real round robins of engine-played games (``arena.testing.demo_data``),
starts the web server on a free port and writes PNGs of the leaderboard, a
tournament, a bot page and the replay viewer into docs/screenshots/.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from arena import store as st
from arena.testing.browser import CHROMIUM, launch_chromium
from arena.testing.demo_data import play_demo_tournament
from arena.web.server import create_web_server

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
VIEWPORT_WIDTH_PX = 1360
VIEWPORT_HEIGHT_PX = 900


def take_screenshots(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="arena-shots-") as tmp:
        store = st.Store.open(Path(tmp) / "data")
        play_demo_tournament(store, Path(tmp) / "bots", name="spring-open", seed=3)
        demo = play_demo_tournament(
            store, Path(tmp) / "bots", name="summer-cup", seed=11, games_per_match=4, forfeits=1
        )
        server, port = create_web_server(store, "127.0.0.1", 0)
        base = f"http://127.0.0.1:{port}"
        try:
            with launch_chromium() as browser:
                page = browser.new_page(
                    viewport={"width": VIEWPORT_WIDTH_PX, "height": VIEWPORT_HEIGHT_PX}
                )
                shots = [
                    ("leaderboard.png", f"{base}/", None),
                    ("tournament.png", f"{base}/tournaments/{demo.tournament_id}", None),
                    ("bot.png", f"{base}/bots/{demo.bots[0]}", None),
                    ("replay.png", f"{base}/games/{demo.game_ids[4]}#step=60", "#viewer"),
                    (
                        "replay-seat0.png",
                        f"{base}/games/{demo.game_ids[4]}#step=60&perspective=0",
                        "#viewer",
                    ),
                ]
                for name, url, ready in shots:
                    page.goto("about:blank")  # a change of #fragment alone would not reload
                    page.goto(url)
                    if ready:
                        page.wait_for_selector(f'{ready}[data-ready="true"]')
                    path = out_dir / name
                    page.screenshot(path=str(path), full_page=not name.startswith("replay"))
                    written.append(path)
        finally:
            server.stop()
            store.close()
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="README screenshots: a real server on a temporary data dir,"
        " photographed by chromium"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="directory for the PNGs")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"screenshots: {CHROMIUM} is missing (apt-get install chromium)", file=sys.stderr)
        return 1
    for path in take_screenshots(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
