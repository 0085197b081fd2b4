"""`arena limits show | set | clear`: the per-user limits of `arena serve`, on a data directory."""

from __future__ import annotations

import argparse
import json

from arena.commands.storeargs import EXIT_BAD_FLAGS, add_data_dir, fail, with_store
from arena.commands.tokens import user_name
from arena.server.quotas import LIMIT_NAMES, Quotas, limit_value_problem, setting_problem
from arena.store import Store

DESCRIPTION = """\
`arena limits show | set | clear`: the per-user limits of `arena serve`, on the data directory.

A setting is stored: for every user, or for one user (`--user`), over the
server's defaults (its `--limit-*` flags; this command shows the built-in
defaults). A running server applies it from its next request, as it does the
admin's SetLimit call. docs/guide/operating.md lists the limits.
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    limits = subparsers.add_parser(
        "limits", help="per-user limits of `arena serve` (bots, bytes, submissions)",
        description=DESCRIPTION,
    )  # fmt: skip
    commands = limits.add_subparsers(dest="limits_command", metavar="SUBCOMMAND")
    commands.required = True
    show = commands.add_parser("show", help="each limit in force, and whose setting holds")
    show.add_argument(
        "--user", type=user_name, help="the limits of this user (default: every user's)"
    )
    show.add_argument("--json", action="store_true", help="print JSON")
    add_data_dir(show)
    show.set_defaults(func=with_store(run_show, existing=True))
    put = commands.add_parser("set", help="store a limit for every user (or --user)")
    put.add_argument("name", choices=LIMIT_NAMES, metavar="NAME", help=", ".join(LIMIT_NAMES))
    put.add_argument("value", type=int, help="a whole number, 0 or more")
    put.add_argument("--user", type=user_name, help="for this user alone")
    add_data_dir(put)
    put.set_defaults(func=with_store(run_set, flags=_setting_problem))
    clear = commands.add_parser("clear", help="forget a stored setting (the next one holds)")
    clear.add_argument("name", choices=LIMIT_NAMES, metavar="NAME", help=", ".join(LIMIT_NAMES))
    clear.add_argument("--user", type=user_name, help="this user's setting (default: every user's)")
    add_data_dir(clear)
    # existing: nothing is stored to clear where there is no store (a mistyped --data-dir)
    clear.set_defaults(func=with_store(run_clear, existing=True, flags=_setting_problem))


def _setting_problem(args: argparse.Namespace) -> str | None:
    """What `set` or `clear` refuses from its arguments alone (the store holds the rest)."""
    value = getattr(args, "value", None)  # `clear` has none
    return setting_problem(args.name, args.user) or (
        None if value is None else limit_value_problem(args.name, value)
    )


def run_show(store: Store, args: argparse.Namespace) -> int:
    shown = Quotas(store).in_force(args.user)
    if args.json:
        print(json.dumps([
            {"name": s.name, "value": s.value, "default": s.default, "set_for": s.set_for}
            for s in shown
        ], indent=2))  # fmt: skip
        return 0
    for s in shown:
        whose = "the default" if s.set_for == "default" else f"set for {s.set_for}"
        print(f"{s.name:<22} {s.value:>12}  ({whose}; default {s.default})  {s.description}")
    return 0


def _change(store: Store, args: argparse.Namespace, value: int | None) -> int:
    quotas = Quotas(store)
    try:
        quotas.set(args.name, value, args.user)
    except ValueError as error:
        return fail(str(error), EXIT_BAD_FLAGS)
    finally:
        quotas.close()
    [now] = [s for s in quotas.in_force(args.user) if s.name == args.name]
    print(f"{now.name} = {now.value} for {args.user or 'every user'} ({now.set_for})")
    return 0


def run_set(store: Store, args: argparse.Namespace) -> int:
    return _change(store, args, args.value)


def run_clear(store: Store, args: argparse.Namespace) -> int:
    return _change(store, args, None)
