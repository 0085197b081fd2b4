"""`arena export`: the public games of a tournament, a ladder or the whole store, as Parquet."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from arena.commands.pathargs import given_path
from arena.commands.storeargs import EXIT_BAD_FLAGS, add_data_dir, fail, with_store
from arena.store import Store, get_tournament
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
        "--spectator-delay-s", type=float, default=0.0, metavar="S",
        help="leave out games that ended less than S seconds ago, as `arena serve"
        f" --spectator-delay-s S` keeps them from the public (0 to {MAX_DELAY_S}; default 0)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.set_defaults(func=with_store(run_export, existing=True))


def run_export(store: Store, args: argparse.Namespace) -> int:
    try:
        from arena.export.writer import export_public_games
    except ImportError as error:
        return fail(f"arena export needs pyarrow (pip install 'kahuna-arena[data]'): {error}")
    tournament_id = None
    if args.tournament is not None:
        tournament_id = get_tournament(store, args.tournament).id
    try:
        delay_s = check_delay(args.spectator_delay_s)
    except ValueError as error:
        return fail(f"--spectator-delay-s: {error}", EXIT_BAD_FLAGS)
    if delay_s > MAX_DELAY_S:  # a cut before year 1 has no stamp
        return fail(f"--spectator-delay-s: the spectator delay must be at most {MAX_DELAY_S}"
                    f" seconds (a day, as arena serve takes), not {delay_s:g}",
                    EXIT_BAD_FLAGS)  # fmt: skip
    public_before = stamp(time.time() - delay_s) if delay_s > 0 else None
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
            "withheld": summary.withheld, "games_path": str(summary.games_path),
            "decisions_path": str(summary.decisions_path),
        }))  # fmt: skip
        return 0
    print(f"{summary.games} games and {summary.decisions} decisions written to"
          f" {summary.games_path} and {summary.decisions_path}")  # fmt: skip
    if summary.withheld:
        print(f"{summary.withheld} stored games left out: not public yet (their deal is"
              " still to be played from the other seat, or they ended within the"
              " spectator delay)")  # fmt: skip
    return 0
