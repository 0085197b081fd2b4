"""`arena bot add|list|show|check|new`: the bots of a data directory, stored once they pass
their checks."""

from __future__ import annotations

import argparse
import json
import sys

from rich.table import Table

from arena.bots.archive import ArchiveError, check_bot_directory
from arena.bots.smoke import SAMPLE_RANDOM_BOT, SMOKE_GAMES
from arena.bots.submission import check_submission
from arena.commands import bot_check, kits
from arena.commands.pathargs import given_path
from arena.commands.rebuilds import binary_only_changes
from arena.commands.storeargs import add_data_dir, console, fail, with_store
from arena.commands.tables import fit
from arena.commands.tokens import user_name
from arena.conformance import SUBMISSION_SCENARIOS, ensure_class_archive
from arena.referee import BotConfigError, BotSpec, load_bot, unbuilt
from arena.store import (
    BotVersionRow,
    NotFoundError,
    Store,
    StoreError,
    add_bot_version,
    bot_failures,
    bot_spec,
    get_bot,
    get_version,
    list_bots,
)
from arena.store.bots import check_bot_source

DESCRIPTION = """\
`arena bot add|list|show|check|new`: store bots once they pass their checks, look at
them, check them and start new ones from a starter kit.

`arena bot add DIR` validates DIR/bot.toml, plays the bot through the
conformance check's submission scenarios (`arena bot check --submission`: the
situations a short match may never reach) and then a short smoke match (2
games, one deal from both seats) against the random sample bot, all in the
sandbox, and refuses a bot that fails either, saying how it failed. Like an
uploaded archive, the directory may hold only regular files, directories and
links that stay inside it (checked before the smoke match). An
unchanged bot is the version already stored; a changed one is a new version.
A stored Java version then gets its class-data archive for this JDK (one
training launch in the sandbox, docs/design/SANDBOX.md), if it has none yet.
"""


RECENT_FAILURES = 5
"""How many of a bot's newest failures (with their stderr) `arena bot show` lists."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bot = subparsers.add_parser(
        "bot", help="add, list, show and start bots", description=DESCRIPTION
    )
    commands = bot.add_subparsers(dest="bot_command", metavar="SUBCOMMAND")
    commands.required = True

    add = commands.add_parser(
        "add", help="validate, check (conformance and a smoke match) and store a bot directory"
    )
    add.add_argument("directory", type=given_path, help="bot directory with a bot.toml")
    add.add_argument(
        "--owner", type=user_name, help="user who owns the bot (for `arena serve`)"
    )
    add.add_argument(
        "--opponent", type=given_path, default=SAMPLE_RANDOM_BOT, metavar="DIR",
        help="smoke-match opponent (default: the random sample bot)",
    )  # fmt: skip
    add.add_argument(
        "--unsafe-no-sandbox", action="store_true",
        help="run the smoke match even where the host cannot sandbox bots (trusted bots only);"
        " says so loudly",
    )  # fmt: skip
    add_data_dir(add)
    add.set_defaults(func=with_store(run_add))

    show_all = commands.add_parser("list", help="every bot with its latest version and rating")
    show_all.add_argument("--json", action="store_true", help="print JSON")
    add_data_dir(show_all)
    show_all.set_defaults(func=with_store(run_list, existing=True))

    show = commands.add_parser("show", help="a bot's versions, ratings and failure rates")
    show.add_argument("name", help="bot name")
    show.add_argument("--json", action="store_true", help="print JSON")
    add_data_dir(show)
    show.set_defaults(func=with_store(run_show, existing=True))

    bot_check.register(commands)
    kits.register(commands)  # bot new


def run_add(store: Store, args: argparse.Namespace) -> int:
    """Read the bot and its smoke-match opponent, then store the bot once it passes. A
    directory that cannot be read leaves no new data directory behind (``with_store``)."""
    try:
        spec = load_bot(args.directory)
        opponent = load_bot(args.opponent)
    except (BotConfigError, StoreError) as error:
        return fail(str(error))
    for bot in (spec, opponent):
        if (not_built := unbuilt(bot)) is not None:
            return fail(f"{bot.directory}: {not_built}")
    refusal = store_checked_bot(store, spec, opponent, owner=args.owner,
                                unsafe=args.unsafe_no_sandbox)  # fmt: skip
    return 0 if refusal is None else fail(refusal)


def store_checked_bot(
    store: Store, spec: BotSpec, opponent: BotSpec, *, owner: str | None, unsafe: bool
) -> str | None:
    """Store ``spec`` once it has finished a smoke match; why not, when it is refused.

    An unchanged bot is the version already stored: nothing is played again.
    A bot of another owner is refused first, naming its owner (an owner-less
    add never takes a user's bot, even one holding the same files).
    """
    try:
        current_owner = get_bot(store, spec.name).owner
    except NotFoundError:
        current_owner = None
    if current_owner is not None and current_owner != owner:
        return (
            f"refused {spec.name}: bot {spec.name!r} belongs to user {current_owner!r};"
            f" choose another name, or add a version of theirs with --owner {current_owner}"
        )
    try:
        known = get_version(store, spec.name, spec.version)
    except NotFoundError:
        known = None
    if known is not None and known.version == spec.version:
        print(f"{spec.name} version {spec.version} is already stored")
        _class_archive(store, spec.name, spec.version)  # e.g. after a JDK upgrade
        return None
    try:
        check_bot_directory(spec.directory)  # what an uploaded archive may not hold either
        check_bot_source(store, spec.directory)
    except (ArchiveError, OSError, StoreError) as error:
        return f"refused {spec.name}: {error}"
    if spec.runtime == "remote":
        print(f"{spec.name} is a remote bot (its owner runs it): no smoke match")
    else:
        # Progress on standard error, as the bar is: standard output is the bot stored.
        print(f"conformance check, then a smoke match against {opponent.name}"
              f" ({SMOKE_GAMES} games): {spec.name} ...", file=sys.stderr, flush=True)  # fmt: skip
        with bot_check.scenario_progress(len(SUBMISSION_SCENARIOS), enabled=True) as heard:
            checked = check_submission(spec, opponent, unsafe=unsafe, on_result=heard)
        if checked.conformance is not None:  # a refused bot's timing goes with its refusal
            print(checked.conformance.timing_text(),
                  file=sys.stdout if checked.refusal is None else sys.stderr)  # fmt: skip
        if checked.refusal is not None:
            return f"refused {spec.name}: {checked.refusal}"
    previous = _latest_stored(store, spec.name)
    row, _ = add_bot_version(store, spec, owner=owner)
    print(f"stored {row.bot} version {row.version}")
    _class_archive(store, row.bot, row.version)
    if previous is not None:
        rebuilt = binary_only_changes(previous.directory, spec.directory)
        if rebuilt:
            shown = ", ".join(rebuilt[:5]) + (" ..." if len(rebuilt) > 5 else "")
            print(
                f"arena: warning: version {row.version} differs from {previous.version} only in"
                f" binary files ({shown}): a rebuild that is not byte-reproducible is a new"
                " version with a fresh rating (sample_bots/README.md, reproducible builds)",
                file=sys.stderr,
            )
    return None


def _class_archive(store: Store, name: str, version: str) -> None:
    """A stored Java version: build its class-data archive for this JDK if it has none."""
    training = ensure_class_archive(bot_spec(store, name, version))
    if training is not None:
        print(f"{name}: {training.text()}")


def _latest_stored(store: Store, name: str) -> BotSpec | None:
    try:
        return bot_spec(store, name)
    except NotFoundError:
        return None


def version_to_json(row: BotVersionRow) -> dict[str, object]:
    return {
        "version": row.version, "created_at": row.created_at, "mu": round(row.mu, 4),
        "sigma": round(row.sigma, 4), "conservative": round(row.conservative, 4),
        "games": row.games, "wins": row.wins, "draws": row.draws, "losses": row.losses,
        "timeout_rate": round(row.rate(row.timeouts), 4),
        "crash_rate": round(row.rate(row.crashes), 4),
        "illegal_action_rate": round(row.rate(row.illegal_actions), 4),
    }  # fmt: skip


def run_list(store: Store, args: argparse.Namespace) -> int:
    bots = list_bots(store)
    if args.json:
        print(json.dumps([
            {"name": b.name, "owner": b.owner, "versions": b.version_count,
             "latest": version_to_json(b.latest)} for b in bots
        ], indent=2))  # fmt: skip
        return 0
    table = Table(title="Bots")
    for header in ("bot", "owner", "versions", "latest", "mu-3sigma", "games"):
        table.add_column(header)
    for b in bots:
        table.add_row(
            b.name, b.owner or "-", str(b.version_count), b.latest.version[:10],
            f"{b.latest.conservative:.2f}", str(b.latest.games),
        )  # fmt: skip
    out = console()
    out.print(fit(table, out, ("latest", "versions", "owner")) if bots
              else "No bots yet: add one with `arena bot add DIR`.")  # fmt: skip
    return 0


def run_show(store: Store, args: argparse.Namespace) -> int:
    bot = get_bot(store, args.name)
    failures = bot_failures(store, bot.name, limit=RECENT_FAILURES)  # the admin's own CLI
    if args.json:
        print(json.dumps({
            "name": bot.name, "owner": bot.owner, "created_at": bot.created_at,
            "versions": [version_to_json(v) for v in bot.versions],
            "history": [{"version": p.version, "game_id": p.game_id, "mu": round(p.mu, 4),
                         "sigma": round(p.sigma, 4)} for p in bot.history],
            "failures": [{"game_id": f.game_id, "version": f.version, "seat": f.seat,
                          "status": f.status, "finished_at": f.finished_at,
                          "stderr": f.stderr} for f in failures],
        }, indent=2))  # fmt: skip
        return 0
    table = Table(title=f"{bot.name}" + (f" (owner {bot.owner})" if bot.owner else ""))
    for header in ("version", "added", "mu-3sigma", "mu", "sigma", "games", "W/D/L",
                   "timeouts", "crashes", "illegal"):  # fmt: skip
        table.add_column(header)
    for v in bot.versions:
        table.add_row(
            v.version[:10], v.created_at[:19], f"{v.conservative:.2f}", f"{v.mu:.2f}",
            f"{v.sigma:.2f}", str(v.games), f"{v.wins}/{v.draws}/{v.losses}",
            f"{100 * v.rate(v.timeouts):.1f}%", f"{100 * v.rate(v.crashes):.1f}%",
            f"{100 * v.rate(v.illegal_actions):.1f}%",
        )  # fmt: skip
    out = console()
    out.print(fit(table, out, ("illegal", "crashes", "timeouts", "added", "sigma", "mu", "W/D/L")))
    for f in failures:
        console().print(
            f"game {f.game_id} (version {f.version[:10]}, seat {f.seat}): {f.status};"
            " stderr ends:", markup=False, highlight=False,
        )
        console().print(
            "\n".join(f"  {line}" for line in f.stderr.splitlines()),
            markup=False, highlight=False, soft_wrap=True,
        )
    return 0
