"""`arena export`: the public games of a tournament, a ladder or the whole store, as Parquet."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from arena.commands.pathargs import given_path
from arena.commands.storeargs import EXIT_BAD_FLAGS, add_data_dir, fail, with_store
from arena.store import Store, get_tournament
from arena.store.served_delay import ShorterDelayError, export_delay, served_delay
from arena.tournament.view.spectator_delay import check_delay, stamp

MAX_DELAY_S = 86_400
"""The longest ``--spectator-delay-s``: what ``arena serve --spectator-delay-s`` takes."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "export",
        help="write the public game records to Parquet (games and decisions)",
        description=(
            "Write games.parquet (one row per game) and decisions.parquet (one row per"
            " action: the acting seat's observation, the legal actions, the action, its"
            " time) under --out, for every stored game whose record is public now"
            " (docs/reference/export.md). Needs the data extra: pip install 'kahuna-arena[data]'."
        ),
    )
    add_data_dir(parser)
    parser.add_argument(
        "--tournament", metavar="NAME",
        help="only this tournament's or ladder's games (default: every game)",
    )  # fmt: skip
    parser.add_argument("--out", metavar="DIR", required=True, type=given_path,
                        help="directory to write into (created; its two files replaced)")
    parser.add_argument(
        "--spectator-delay-s", type=float, metavar="S",
        help="leave out games that ended less than S seconds ago, as `arena serve"
        f" --spectator-delay-s S` keeps them from the public (0 to {MAX_DELAY_S}; default:"
        " the delay `arena serve` stored in the data directory, 0 if none; a shorter one"
        " is refused without --allow-shorter-delay)",
    )  # fmt: skip
    parser.add_argument(
        "--allow-shorter-delay", action="store_true",
        help="export with a --spectator-delay-s shorter than the stored one (games the"
        " server still hides: for the admin's own use, not to publish)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.set_defaults(func=with_store(run_export, existing=True, flags=_delay_problem))


def _delay_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with ``--spectator-delay-s`` on its own (None: nothing)."""
    asked = args.spectator_delay_s
    if asked is None:
        return None
    try:
        check_delay(asked)
    except ValueError as error:
        return f"--spectator-delay-s: {error}"
    if asked > MAX_DELAY_S:  # a cut before year 1 has no stamp
        return (f"--spectator-delay-s: the spectator delay must be at most {MAX_DELAY_S}"
                f" seconds (a day, as arena serve takes), not {asked:g}")  # fmt: skip
    return None


def run_export(store: Store, args: argparse.Namespace) -> int:
    try:
        from arena.export.writer import export_public_games
    except ImportError as error:
        return fail(f"arena export needs pyarrow (pip install 'kahuna-arena[data]'): {error}")
    tournament_id = None
    if args.tournament is not None:
        tournament_id = get_tournament(store, args.tournament).id
    asked = args.spectator_delay_s  # checked before the store was opened: _delay_problem
    now = time.time()
    try:
        delay_s = export_delay(
            asked, served_delay(store), now, allow_shorter=args.allow_shorter_delay
        )
    except ShorterDelayError as error:
        return fail(str(error), EXIT_BAD_FLAGS)
    public_before = stamp(now - delay_s) if delay_s > 0 else None
    out: Path = args.out
    if out.exists() and not out.is_dir():
        return fail(f"--out {out} is not a directory")
    try:
        summary = export_public_games(store, out, tournament_id, public_before=public_before)
    except OSError as error:
        return fail(f"cannot write under {out}: {error.strerror or error}")
    if args.json:
        print(json.dumps({
            "games": summary.games, "decisions": summary.decisions,
            "withheld": summary.withheld, "spectator_delay_s": delay_s,
            "games_path": str(summary.games_path),
            "decisions_path": str(summary.decisions_path),
        }))  # fmt: skip
        return 0
    print(f"{summary.games} games and {summary.decisions} decisions written to"
          f" {summary.games_path} and {summary.decisions_path}")  # fmt: skip
    if summary.withheld:
        print(f"{summary.withheld} stored games left out: not public yet (their deal is"
              " still to be played from the other seat, or they ended within the"
              f" spectator delay, {delay_s:g} s)")  # fmt: skip
    return 0
