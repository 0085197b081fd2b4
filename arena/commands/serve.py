"""`arena serve` (the gRPC arena API) and `arena token create` (user tokens).

`arena serve` prints where the admin token is kept (DATA_DIR/admin.token,
created on first use, mode 0600). Clients send `authorization: Bearer TOKEN`.
"""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from types import FrameType

from arena.commands.storeargs import add_data_dir, fail, with_store
from arena.logs import get_logger
from arena.referee import BotConfigError, load_bot
from arena.server.app import create_server
from arena.server.arena_service import ServiceOptions
from arena.server.smoke import SAMPLE_RANDOM_BOT, smoke_failure
from arena.store import ADMIN_TOKEN_NAME, Store, create_token, ensure_admin_token

DEFAULT_LISTEN = "127.0.0.1:50051"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = subparsers.add_parser(
        "serve", help="run the gRPC arena API (bots, tournaments, leaderboard)", description=__doc__
    )
    serve.add_argument(
        "--listen", default=DEFAULT_LISTEN, help=f"address (default {DEFAULT_LISTEN})"
    )
    serve.add_argument(
        "--concurrency", type=int, help="matches at once per tournament (default: cores)"
    )
    serve.add_argument("--unsafe", action="store_true", help="run bots without namespaces")
    add_data_dir(serve)
    serve.set_defaults(func=with_store(run_serve))

    token = subparsers.add_parser("token", help="manage API tokens for `arena serve`")
    commands = token.add_subparsers(dest="token_command", metavar="SUBCOMMAND")
    commands.required = True
    create = commands.add_parser("create", help="create a token and print it (shown once)")
    create.add_argument("user", help="user name (letters, digits, - _ .)")
    create.add_argument("--admin", action="store_true", help="an admin token")
    add_data_dir(create)
    create.set_defaults(func=with_store(run_token_create))


def run_token_create(store: Store, args: argparse.Namespace) -> int:
    print(create_token(store, args.user, "admin" if args.admin else "user"))
    return 0


def run_serve(store: Store, args: argparse.Namespace) -> int:
    if args.concurrency is not None and args.concurrency < 1:
        return fail(f"--concurrency must be at least 1, got {args.concurrency}")
    try:
        opponent = load_bot(SAMPLE_RANDOM_BOT)
    except BotConfigError as error:
        return fail(f"the smoke-match opponent is unusable: {error}")

    def smoke(directory: Path) -> str | None:
        return smoke_failure(load_bot(directory), opponent, unsafe=args.unsafe)

    options = ServiceOptions(concurrency=args.concurrency, unsafe=args.unsafe, smoke_check=smoke)
    try:
        server, port = create_server(args.listen, store=store, options=options)
    except RuntimeError as error:
        return fail(str(error))
    ensure_admin_token(store)
    server.start()
    host = args.listen.rsplit(":", 1)[0]
    print(f"arena API listening on {host}:{port}", flush=True)
    print(f"admin token: {store.data_dir / ADMIN_TOKEN_NAME}", flush=True)
    get_logger().info("server_started", address=f"{host}:{port}")
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stop.wait()
    server.stop(grace=2.0).wait()
    get_logger().info("server_stopped")
    return 0
