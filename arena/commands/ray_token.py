"""`arena ray-token create [PATH]`: make a Ray cluster's token, once, on the operator's machine."""

from __future__ import annotations

import argparse
from typing import Any

from arena.commands.pathargs import given_path
from arena.commands.storeargs import fail
from arena.tournament.execution.ray_auth import TokenError, create_token, token_path

DESCRIPTION = """\
`arena ray-token create [PATH]`: make a Ray cluster's token, once, on the operator's machine.

Every node, driver and client of an arena cluster proves it holds this token
(Ray's token authentication, `RAY_AUTH_MODE=token`; docs/design/DISTRIBUTED.md): 256
random bits written to PATH (default `$RAY_AUTH_TOKEN_PATH`, else
`~/.ray/auth_token`, where Ray looks) with mode 0600. Copy the file, by a
channel you trust, to the same place on every machine of the cluster. An
existing file is never overwritten: every node would need the new token.
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ray-token", help="make the token every node and driver of a Ray cluster must hold",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    create = actions.add_parser("create", help="write a new token file (mode 0600)")
    create.add_argument(
        "path", nargs="?", type=given_path,
        help="where (default $RAY_AUTH_TOKEN_PATH, else ~/.ray/auth_token)",
    )  # fmt: skip
    create.set_defaults(func=run_create)


def run_create(args: argparse.Namespace) -> int:
    path = args.path if args.path is not None else token_path()
    try:
        made = create_token(path)
    except TokenError as error:
        return fail(str(error))
    except OSError as error:
        return fail(f"cannot write the token {path}: {error.strerror}")
    print(f"wrote a new Ray token to {made} (mode 0600)")
    default = made == token_path({})
    where = "~/.ray/auth_token" if default else f"{made}, with RAY_AUTH_TOKEN_PATH={made},"
    print(f"copy it to {where} on every machine of the cluster (head, nodes, driver)")
    return 0
