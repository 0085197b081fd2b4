"""Live games for tests and benchmarks: records cut into live entries, slow games to watch.

``live_parts(record)`` gives the head (the record before any action, with
``match.bots``) and the entries in the order the referee emits them: each
action with its seat, and after an action that ends a round the next
round's order (``{"reshuffle": [...], "round": n}``), as
``arena.referee.live.live_entry`` writes them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arena import store as st
from arena.kahuna import Record, record_to_json, replay_steps
from arena.referee import load_bot
from arena.tournament.orchestration.runner import TournamentRunner
from arena.tournament.policy.rounds import create_tournament
from arena.web import create_web_server
from arena.web.live_answers import LIVE_ANSWER_S

if TYPE_CHECKING:
    from playwright.sync_api import Page


def live_parts(
    record: Record, bots: tuple[str, str] = ("ann", "bob")
) -> tuple[dict[str, object], list[dict[str, object]]]:
    data = record_to_json(record)
    head = {
        key: value for key, value in data.items() if key not in ("actions", "reshuffles", "result")
    }
    head["match"] = {"bots": [{"seat": seat, "name": name} for seat, name in enumerate(bots)]}
    entries: list[dict[str, object]] = []
    mover: int | None = None
    for step in replay_steps(record):
        if step.action >= 0:
            seat, action = record.actions[step.action]
            entries.append({"seat": seat if seat is not None else mover, **action.to_json()})
        mover = step.state.to_move
        if step.round_began:
            entries.append(
                {"reshuffle": list(record.reshuffles[step.state.round - 2]),
                 "round": step.state.round}
            )  # fmt: skip
    return head, entries


def write_slow_bot(root: Path, name: str, think_s: float) -> Path:
    """A random Python bot (the SDK's ``run``) that waits ``think_s`` before each action,
    so a game lasts long enough to be watched."""
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "bot.toml").write_text(
        f'name = "{name}"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'
    )
    (directory / "bot.py").write_text(
        "import random\nimport time\n\nfrom kahuna_bot import run\n\n\n"
        "def choose(observation, legal_actions):\n"
        f"    time.sleep({think_s!r})\n"
        "    return random.Random(len(observation.history)).choice(legal_actions)\n\n\n"
        f"raise SystemExit(run(choose, name={name!r}, version='1'))\n"
    )
    return directory


@dataclass
class WatchedGame:
    """A live game followed in a browser page, and what the page showed of it."""

    match_id: int
    game_index: int
    latencies_ms: list[float]  # shown on the page minus applied by the referee, per action


@contextmanager
def slow_tournament(
    work_dir: Path, think_s: float = 0.06, spectator_delay_s: float = 0.0
) -> Iterator[tuple[st.Store, str]]:
    """A real sandboxed round robin of two slow bots being played, and its web server's URL."""
    store = st.Store.open(work_dir / "data")
    for name in ("slow_ann", "slow_bob"):
        st.add_bot_version(store, load_bot(write_slow_bot(work_dir / "bots", name, think_s)))
    tournament = create_tournament(
        store, "live-cup", st.TournamentFormat.ROUND_ROBIN, ["slow_ann", "slow_bob"],
        st.TournamentConfig(games_per_match=2),
    )  # fmt: skip
    server, port = create_web_server(
        store, "127.0.0.1", 0, spectator_delay_s=spectator_delay_s, live_answer_s=LIVE_ANSWER_S
    )
    runner = TournamentRunner(store, tournament.id, concurrency=1, pin_cpus=False)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        yield store, f"http://127.0.0.1:{port}"
    finally:
        thread.join(300)
        server.stop()
        store.close()


def watch_first_live_game(
    page: Page, store: st.Store, base_url: str, actions: int = 60,
    on_open: Callable[[Page], None] | None = None,
) -> WatchedGame:  # fmt: skip
    """Open the first live game's page and wait until it shows ``actions`` actions; the
    latency of each action that happened after the page opened (the page's history
    items carry the referee's ``at_ms`` and their own ``shownMs``). ``on_open`` looks at
    the page as soon as it is ready: the one moment the game is sure to be still live
    (a random game may end a few actions after ``actions``)."""
    deadline = time.monotonic() + 120
    while not st.list_live_games(store):
        if time.monotonic() > deadline:
            raise TimeoutError("no game went live within 120 s")
        time.sleep(0.05)
    game = st.list_live_games(store)[0]
    page.goto(f"{base_url}/live/{game.match_id}/{game.game_index}")
    page.wait_for_selector('#viewer[data-ready="true"]')
    opened_ms = time.time() * 1000
    if on_open is not None:
        on_open(page)
    page.locator("#history li").nth(actions - 1).wait_for(state="attached", timeout=120_000)
    items = page.eval_on_selector_all(
        "#history li",
        "items => items.map(i => [Number(i.dataset.atMs), Number(i.dataset.shownMs)])",
    )
    latencies = sorted(shown - at for at, shown in items if at > opened_ms)
    return WatchedGame(game.match_id, game.game_index, latencies)
