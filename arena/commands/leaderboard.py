"""`arena leaderboard`: one row per bot version, ordered by mu - 3 sigma."""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from arena.commands.storeargs import add_data_dir, console, with_store
from arena.store import LeaderboardRow, Store, leaderboard


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "leaderboard",
        help="TrueSkill leaderboard (one row per bot version)",
        description="Bot versions ordered by mu - 3 sigma, with games, W/D/L and failure rates.",
    )
    add_data_dir(parser)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--latest", action="store_true", help="only each bot's latest version")
    parser.add_argument(
        "--min-games", type=int, default=0, metavar="N", help="hide rows with fewer games"
    )
    parser.set_defaults(func=with_store(run_leaderboard))


def row_to_json(row: LeaderboardRow) -> dict[str, object]:
    e = row.entry
    return {
        "rank": row.rank,
        "bot": e.bot,
        "version": e.version,
        "owner": e.owner,
        "mu": round(e.mu, 4),
        "sigma": round(e.sigma, 4),
        "conservative": round(e.conservative, 4),
        "games": e.games,
        "wins": e.wins,
        "draws": e.draws,
        "losses": e.losses,
        "timeouts": e.timeouts,
        "crashes": e.crashes,
        "illegal_actions": e.illegal_actions,
        "timeout_rate": round(e.rate(e.timeouts), 4),
        "crash_rate": round(e.rate(e.crashes), 4),
        "illegal_action_rate": round(e.rate(e.illegal_actions), 4),
    }


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def run_leaderboard(store: Store, args: argparse.Namespace) -> int:
    rows = leaderboard(store, latest_only=args.latest, min_games=max(0, args.min_games))
    if args.json:
        print(json.dumps([row_to_json(r) for r in rows], indent=2))
        return 0
    table = Table(title="Leaderboard (TrueSkill, ordered by mu - 3 sigma)")
    for header in ("#", "bot", "version", "mu-3sigma", "mu", "sigma", "games", "W/D/L",
                   "timeouts", "crashes", "illegal"):  # fmt: skip
        table.add_column(header, justify="left" if header in ("bot", "version") else "right")
    for row in rows:
        e = row.entry
        table.add_row(
            str(row.rank), e.bot, e.version[:10], f"{e.conservative:.2f}", f"{e.mu:.2f}",
            f"{e.sigma:.2f}", str(e.games), f"{e.wins}/{e.draws}/{e.losses}",
            _percent(e.rate(e.timeouts)), _percent(e.rate(e.crashes)),
            _percent(e.rate(e.illegal_actions)),
        )  # fmt: skip
    console().print(table if rows else "No bots yet: add one with `arena bot add DIR`.")
    return 0
