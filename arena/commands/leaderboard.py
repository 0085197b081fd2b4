"""`arena leaderboard`: one row per bot version, ordered by mu - 3 sigma."""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from arena.commands.playflags import whole
from arena.commands.storeargs import add_data_dir, console, with_store
from arena.commands.tables import fit
from arena.store import LeaderboardRow, Store, leaderboard
from arena.tournament.policy.results import leaderboard_intervals, version_key
from arena.tournament.statistics.intervals import ScoreInterval, TableIntervals

DROP_ORDER = ("illegal", "crashes", "timeouts", "pairs", "sigma", "mu", "Elo (95%)", "version",
              "score (95%)", "W/D/L")  # fmt: skip
"""The columns a narrow terminal loses, first to last; rank, bot, rating and games stay."""
MAX_GAMES = 2**63 - 1  # SQLite's largest integer: past it the query cannot be asked


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
        "--min-games", type=whole(0, MAX_GAMES), default=0, metavar="N",
        help="hide rows with fewer games",
    )  # fmt: skip
    parser.set_defaults(func=with_store(run_leaderboard, existing=True))


def row_to_json(
    row: LeaderboardRow, intervals: TableIntervals | None = None, apart: bool = False
) -> dict[str, object]:
    e = row.entry
    pairs = None if intervals is None else intervals.field.get(version_key(e.bot, e.version))
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
        "interval": None if pairs is None else pairs.to_json(),
        "separated_from_next": apart,
    }


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def run_leaderboard(store: Store, args: argparse.Namespace) -> int:
    rows = leaderboard(store, latest_only=args.latest, min_games=args.min_games)
    intervals = leaderboard_intervals(store, rows)
    keys = [version_key(r.entry.bot, r.entry.version) for r in rows]
    apart = intervals.separated_from_next(keys)
    if args.json:
        print(json.dumps([row_to_json(r, intervals, a) for r, a in zip(rows, apart, strict=True)],
                         indent=2))  # fmt: skip
        return 0
    table = Table(title="Leaderboard (TrueSkill, ordered by mu - 3 sigma)",
                  caption="score and Elo: against every version met,"
                  " 95% interval over deal pairs")  # fmt: skip
    for header in ("#", "bot", "version", "mu-3sigma", "mu", "sigma", "games", "W/D/L",
                   "score (95%)", "Elo (95%)", "pairs",
                   "timeouts", "crashes", "illegal"):  # fmt: skip
        table.add_column(header, justify="left" if header in ("bot", "version") else "right")
    for row, key in zip(rows, keys, strict=True):
        e = row.entry
        table.add_row(
            str(row.rank), e.bot, e.version[:10], f"{e.conservative:.2f}", f"{e.mu:.2f}",
            f"{e.sigma:.2f}", str(e.games), f"{e.wins}/{e.draws}/{e.losses}",
            *interval_cells(intervals.field.get(key)),
            _percent(e.rate(e.timeouts)), _percent(e.rate(e.crashes)),
            _percent(e.rate(e.illegal_actions)),
        )  # fmt: skip
    out = console()
    empty = (f"No bot version has {args.min_games} games or more." if args.min_games
             else "No bots yet: add one with `arena bot add DIR`.")  # fmt: skip
    out.print(fit(table, out, DROP_ORDER) if rows else empty)
    names = {
        key: f"{r.entry.bot} {r.entry.version[:10]}" for key, r in zip(keys, rows, strict=True)
    }
    for note in intervals.notes(keys):
        for key, name in names.items():
            note = note.replace(key, name)
        out.print(note, highlight=False, markup=False)
    return 0


def interval_cells(interval: ScoreInterval | None) -> tuple[str, str, str]:
    """The score, Elo and pairs cells of a table row (``-`` before any game)."""
    if interval is None:
        return "-", "-", "0"
    return interval.score_text(), interval.elo_text(), interval.pairs_text()
