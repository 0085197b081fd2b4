"""`arena demo`: a real round-robin tournament of the sample bots, on the defaults."""

from __future__ import annotations

import argparse
import shutil

from arena.commands.bot import store_checked_bot
from arena.commands.leaderboard import run_leaderboard
from arena.commands.storeargs import add_data_dir, fail, with_store
from arena.commands.tournament import add_cpu_pinning, play_tournament, run_options_problem
from arena.referee import BotConfigError, BotSpec, load_bot, unbuilt
from arena.resources import sample_bots_dir
from arena.store import Store, TournamentConfig, TournamentFormat, list_tournaments
from arena.tournament.policy.config import TournamentError, build_config
from arena.tournament.policy.rounds import create_tournament

DESCRIPTION = """\
`arena demo`: a real round-robin tournament of the sample bots, on the defaults.

Stores the sample bots (each after its checks, as `arena bot add` does;
an unchanged bot is not played again), creates a round robin named
`demo-N`, plays it in the sandbox with the default clocks, and prints the
standings, the crosstable and the leaderboard. Everything lands in the data
directory like any other tournament, so `arena serve --web-port 8080` shows it.
"""


DEMO_BOTS = ("python_greedy", "python_random", "js_random")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "demo", help="play a round robin of the sample bots (stored, rated, viewable)",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    parser.add_argument("--games", type=int, default=4, help="games per match (default 4)")
    parser.add_argument(
        "--seed", type=int, default=1,
        help="deal seed (default 1): the same seed deals the same games in any data directory",
    )  # fmt: skip
    parser.add_argument("--concurrency", type=int, help="matches at once (default: cores)")
    add_cpu_pinning(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--unsafe-no-sandbox", action="store_true",
        help="run the bots even where the host cannot sandbox them (they are ours)",
    )  # fmt: skip
    add_data_dir(parser)
    parser.set_defaults(func=with_store(run_demo, flags=demo_flags_problem))


def sample_bots() -> tuple[list[BotSpec], list[str]]:
    """The sample bots that can run here, and notes on those that cannot."""
    specs: list[BotSpec] = []
    notes: list[str] = []
    for name in DEMO_BOTS:
        directory = sample_bots_dir() / name
        if name.startswith("js_") and shutil.which("node") is None:
            notes.append(f"{name} left out: no node (Node.js 20+) on PATH")
            continue
        try:
            spec = load_bot(directory)
        except BotConfigError as error:
            notes.append(f"{name} left out: {error}")
            continue
        not_built = unbuilt(spec)
        if not_built is not None:
            notes.append(f"{name} left out: {not_built} (in {directory}) to include it")
            continue
        specs.append(spec)
    return specs, notes


def _demo_name(store: Store) -> str:
    taken = {t.name for t in list_tournaments(store)}
    number = 1
    while f"demo-{number}" in taken:
        number += 1
    return f"demo-{number}"


def demo_flags_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the demo's flags (None: nothing), before any bot is stored."""
    if args.games < 1:
        return f"--games must be at least 1, got {args.games}"
    problem = run_options_problem(args)
    if problem is not None:
        return problem
    try:
        _config(args)
    except TournamentError as error:
        return str(error)
    return None


def _config(args: argparse.Namespace) -> TournamentConfig:
    return build_config(games_per_match=args.games, seed=args.seed)


def run_demo(store: Store, args: argparse.Namespace) -> int:
    config = _config(args)  # checked before the store was opened: demo_flags_problem
    specs, notes = sample_bots()
    for note in notes:
        print(note)
    if len(specs) < 2:
        return fail("a demo needs at least two sample bots")
    opponent = next(s for s in specs if s.name == "python_random")
    for spec in specs:
        refusal = store_checked_bot(store, spec, opponent, owner=None,
                                    unsafe=args.unsafe_no_sandbox)  # fmt: skip
        if refusal is not None:
            return fail(refusal)
    tournament = create_tournament(
        store, _demo_name(store), TournamentFormat.ROUND_ROBIN, [s.name for s in specs], config,
        seeded=True,
    )
    print(f"tournament {tournament.name}: round robin of {len(specs)} bots,"
          f" {args.games} games per match, data in {store.data_dir}")  # fmt: skip
    status = play_tournament(store, tournament, args)
    if status != 0:
        return status
    run_leaderboard(store, argparse.Namespace(json=False, latest=True, min_games=0))
    print(f"see it on the web: arena serve --data-dir {store.data_dir} --web-port 8080,"
          " then open http://127.0.0.1:8080/")  # fmt: skip
    return 0
