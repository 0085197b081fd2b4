"""`arena token create | list | revoke`: the API tokens of `arena serve`, on the data directory."""

from __future__ import annotations

import argparse
import json
import re
import shlex
from datetime import timedelta
from typing import Any

from arena.commands.storeargs import add_data_dir, with_store
from arena.quoting import PATH_CHARS
from arena.store import (
    NotFoundError,
    Store,
    StoreError,
    TokenRow,
    create_token,
    list_tokens,
    revoke_tokens,
)
from arena.store.tokens import MAX_LIFETIME, check_user_name

DESCRIPTION = """\
`arena token create | list | revoke`: the API tokens of `arena serve`, on the data directory.

A token may be made to expire (`--expires-in 30d`); `revoke` ends one token
(by the id `list` shows) or every token of a user at once. A revoked or
expired token is refused by the gRPC API, the web and the remote-bot gateway,
with a message saying which. Only a token's SHA-256 is stored: `list` shows
its first characters (`sha256sum` of a token one holds starts the same).
"""


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
_DURATION = re.compile(r"(\d{1,7})([smhd])")


def user_name(text: str) -> str:
    """A user named on the command line (a token's, a limit's): one a token can carry."""
    try:
        check_user_name(text)
    except StoreError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def duration(text: str) -> timedelta:
    """``--expires-in``: a whole number and a unit, s m h or d (``90d``, ``12h``)."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration: a positive whole number and s, m, h or d (e.g. 30d)"
        )
    lifetime = timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])
    if lifetime > MAX_LIFETIME:
        raise argparse.ArgumentTypeError(
            f"{text.strip()} is longer than a token may live, {MAX_LIFETIME.days} days"
        )
    return lifetime


MAX_TOKEN_ID = 2**63 - 1
"""The largest token id: the store's ids are SQLite's 64-bit integers (the API's an int64)."""


def token_id(text: str) -> int:
    """`revoke`'s ID: a token's number as `list` shows it (a user's name goes with --user)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a token id (the number `list` shows); every token of a user:"
            f" --user {shlex.quote(text) if len(text) <= PATH_CHARS else 'NAME'}"
        ) from None
    if value > MAX_TOKEN_ID:
        shown = text.strip() if len(text) <= 40 else f"a number of {len(text.strip())} digits"
        raise argparse.ArgumentTypeError(f"{shown} is past the largest token id, {MAX_TOKEN_ID}")
    return value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    token = subparsers.add_parser(
        "token", help="manage API tokens for `arena serve`", description=DESCRIPTION
    )
    commands = token.add_subparsers(dest="token_command", metavar="SUBCOMMAND")
    commands.required = True
    create = commands.add_parser("create", help="create a token and print it (shown once)")
    create.add_argument("user", type=user_name, help="user name (letters, digits, - _ .)")
    create.add_argument("--admin", action="store_true", help="an admin token")
    create.add_argument(
        "--expires-in", type=duration, metavar="DURATION",
        help="the token is refused after this long (e.g. 30d, 12h; default: never)",
    )  # fmt: skip
    add_data_dir(create)
    create.set_defaults(func=with_store(run_create))

    listing = commands.add_parser("list", help="the stored tokens: id, user, role, state")
    listing.add_argument("--user", help="only this user's tokens")
    listing.add_argument("--json", action="store_true", help="print JSON")
    add_data_dir(listing)
    listing.set_defaults(func=with_store(run_list, existing=True))

    revoke = commands.add_parser("revoke", help="revoke a token (by id) or all of a user's")
    which = revoke.add_mutually_exclusive_group(required=True)
    which.add_argument("id", nargs="?", type=token_id, help="the token's id (arena token list)")
    which.add_argument("--user", help="revoke every token of this user")
    add_data_dir(revoke)
    revoke.set_defaults(func=with_store(run_revoke, existing=True))


def run_create(store: Store, args: argparse.Namespace) -> int:
    role = "admin" if args.admin else "user"
    print(create_token(store, args.user, role, lifetime=args.expires_in))
    return 0


def run_list(store: Store, args: argparse.Namespace) -> int:
    rows = [token_json(r) for r in list_tokens(store, args.user)]
    print(json.dumps(rows, indent=2) if args.json else "\n".join(token_lines(rows)))
    return 0


def token_json(row: TokenRow) -> dict[str, object]:
    """A stored token as `list --json` prints it (`arena remote token list` too)."""
    return {"id": row.id, "user": row.user, "role": row.role, "state": row.state(),
            "created_at": row.created_at, "expires_at": row.expires_at,
            "revoked_at": row.revoked_at, "sha256_prefix": row.shown_digest}  # fmt: skip


def token_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The table of `list` (and of `arena remote token list`), from ``token_json``'s rows."""
    head = f"{'id':>4}  {'user':<20} {'role':<5}  {'state':<7}  {'sha256':<12}  expires / revoked"
    lines = [head]
    for r in rows:
        when = r["revoked_at"] or r["expires_at"] or "-"
        lines.append(f"{r['id']:>4}  {r['user']:<20} {r['role']:<5}  {r['state']:<7}"
                     f"  {r['sha256_prefix']}  {when}")  # fmt: skip
    return lines


def revoked_lines(rows: list[dict[str, Any]]) -> list[str]:
    """What `revoke` (and `arena remote token revoke`) prints of the tokens it revoked."""
    if not rows:
        return ["already revoked: nothing changed"]
    return [f"revoked token {r['id']} of {r['user']} ({r['role']})" for r in rows]


def run_revoke(store: Store, args: argparse.Namespace) -> int:
    if args.id is not None and args.id < 1:
        raise NotFoundError(f"no token {args.id}")
    revoked = revoke_tokens(store, token_id=args.id, user=args.user)
    print("\n".join(revoked_lines([token_json(r) for r in revoked])))
    return 0
