"""`arena serve`: the gRPC arena API (and its web pages) on a data directory; `arena token` and
`arena limits` beside it."""

from __future__ import annotations

import argparse
import resource
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.bots.submission import SubmissionCheck, check_submission
from arena.commands import limits, tokens
from arena.commands.ladder import (
    LadderThread,
    add_ladder_flags,
    ladder_flags_problem,
    start_ladder,
)
from arena.commands.pathargs import given_path
from arena.commands.playflags import positive_seconds, whole
from arena.commands.rayflags import (
    RayUnavailableError,
    add_ray_flags,
    ray_executors,
    ray_flags_problem,
)
from arena.commands.storeargs import EXIT_BAD_FLAGS, add_data_dir, fail, with_store
from arena.commands.tournament import add_cpu_pinning, concurrency_problem
from arena.logs import get_logger
from arena.referee import BotConfigError, load_bot
from arena.server.app import create_server
from arena.server.arena_service import ServiceOptions
from arena.server.limits import StreamLimits
from arena.server.quotas import LIMIT_NAMES, UserLimits, limit_help
from arena.server.submissions import WebSubmitter
from arena.server.tls import ServerTls, TlsConfigError, load_server_tls
from arena.store import (
    ADMIN_TOKEN_NAME,
    LeaseHeldError,
    Store,
    ensure_admin_token,
)
from arena.store.served_delay import (
    ShorterDelayError,
    next_served,
    serve_with_delay,
    served_delay,
)
from arena.tournament.policy.config import TournamentError

DESCRIPTION = """\
`arena serve` (the gRPC arena API); `arena token` beside it.

`arena serve` prints where the admin token is kept (DATA_DIR/admin.token,
created on first use, mode 0600). Clients send `authorization: Bearer TOKEN`.
With --tls-cert and --tls-key (PEM) the port speaks TLS only, for the API and
remote bots alike, and the web pages are served over HTTPS with the same
certificate; --tls-client-ca also requires a client certificate signed by
that CA on the gRPC port (mutual TLS). Without them, tokens travel in clear:
bind a loopback address, or put a TLS proxy in front.

Ctrl-C or SIGTERM stops it, exit status 0: the calls in progress get two
seconds, and a tournament in play is left interrupted with its stored games
(StartTournament or `arena tournament resume NAME` finishes it). Refused flags
exit 2; a port or data directory it cannot use, 1.
"""


DEFAULT_HOST = "127.0.0.1"
API_STOP_GRACE_S = 2.0
"""How long the API's calls still running get when the server stops (gRPC's grace)."""
DEFAULT_PORT = 50051


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = subparsers.add_parser(
        "serve", help="run the gRPC arena API (bots, tournaments, leaderboard)",
        description=DESCRIPTION,
    )
    serve.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind ({DEFAULT_HOST})")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"gRPC port ({DEFAULT_PORT})")
    serve.add_argument("--web-port", type=int, help="also serve the web pages on this port")
    serve.add_argument(
        "--spectator-delay-s", type=spectator_delay, metavar="S",
        help="everything public (live games, records, frames, the leaderboard, tournament"
        " and ladder pages, WatchTournament, `arena export` on this data directory) shows"
        " each game's start, actions and end S seconds late; the admin sees them at once."
        " Stored in the data directory: the default is the stored delay (0 at first), and a"
        " shorter one is refused without --allow-shorter-delay",
    )  # fmt: skip
    serve.add_argument(
        "--allow-shorter-delay", action="store_true",
        help="serve with a --spectator-delay-s shorter than the stored one (the games played"
        " under the longer one stay out of `arena export` until it has passed for them)",
    )  # fmt: skip
    serve.add_argument(
        "--concurrency", type=int, help="matches at once per tournament (default: cores)"
    )
    add_cpu_pinning(serve)
    serve.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="run bots even where the host cannot sandbox them (trusted bots only)",
    )
    serve.add_argument(
        "--paired-remote",
        action="store_true",
        help="pair deals (games 2k and 2k+1 share one) in matches with a remote bot too, in the"
        " tournaments created here (committed with each, so it holds for all their games). Risk:"
        " a remote bot's owner can link its processes, so the bot plays the second game of a"
        " pair knowing the whole deal (hands and draw order) from the first; default: a fresh"
        " deal in every game of such a match (unpaired)",
    )
    serve.add_argument(
        "--tls-cert", type=given_path, metavar="FILE",
        help="serve TLS with this PEM certificate (chain); needs --tls-key",
    )  # fmt: skip
    serve.add_argument(
        "--tls-key", type=given_path, metavar="FILE", help="the certificate's PEM private key"
    )
    serve.add_argument(
        "--tls-client-ca", type=given_path, metavar="FILE",
        help="mutual TLS: gRPC clients must present a certificate signed by this PEM CA",
    )  # fmt: skip
    add_stream_limits(serve)
    add_user_limits(serve)
    add_ray_flags(serve)
    add_ladder_flags(serve)
    add_data_dir(serve)
    serve.set_defaults(func=with_store(run_serve, flags=serve_flags_problem))

    tokens.register(subparsers)  # arena token create | list | revoke
    limits.register(subparsers)  # arena limits show | set | clear


def spectator_delay(text: str) -> float:
    """``--spectator-delay-s``: 0 or more seconds, at most a day."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= seconds <= 86_400:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be from 0 to 86400 seconds, got {text}")
    return seconds


_DEFAULT_LIMITS = StreamLimits()
_STREAM_FLAGS = (
    ("--streams-per-token", "per_token", "open response streams per bearer token"),
    ("--streams-unauthenticated", "unauthenticated", "open streams that carry no token, together"),
    ("--streams-total", "total", "open streams of the whole server"),
    ("--calls-per-token", "calls_per_token", "unary calls in flight per bearer token"),
)


def add_stream_limits(parser: argparse.ArgumentParser) -> None:
    """The API server's stream limits (arena.server.limits.StreamLimits) as flags."""
    for flag, name, text in _STREAM_FLAGS:
        default = getattr(_DEFAULT_LIMITS, name)
        parser.add_argument(
            flag, type=whole(1), metavar="N", dest=f"limit_{name}", default=default,
            help=f"{text}; one more is refused with RESOURCE_EXHAUSTED (default {default})",
        )  # fmt: skip
    parser.add_argument(
        "--connections", type=whole(1), metavar="N", default=_DEFAULT_LIMITS.connections,
        help="open connections to the API port; one more is closed as it is accepted"
        f" (default {_DEFAULT_LIMITS.connections})",
    )  # fmt: skip
    parser.add_argument(
        "--hello-wait-s", type=positive_seconds, metavar="S",
        default=_DEFAULT_LIMITS.hello_wait_s,
        help="a remote bot's Play stream must say Hello within S seconds"
        f" (default {_DEFAULT_LIMITS.hello_wait_s:g})",
    )  # fmt: skip


def add_user_limits(parser: argparse.ArgumentParser) -> None:
    """Each user's limits and the check queue (arena.server.quotas.UserLimits) as flags:
    the defaults the admin's stored settings (`arena limits set`, SetLimit) override."""
    defaults = UserLimits()
    for name in LIMIT_NAMES:
        default = getattr(defaults, name)
        minimum = 1 if name == "checks_total" else 0
        parser.add_argument(
            f"--limit-{name.replace('_', '-')}", type=whole(minimum), metavar="N",
            dest=f"user_limit_{name}", default=default,
            help=f"{limit_help(name)} (default {default})",
        )  # fmt: skip


def user_limits(args: argparse.Namespace) -> UserLimits:
    """The flags' UserLimits; ValueError naming values that do not fit together."""
    return UserLimits(**{name: getattr(args, f"user_limit_{name}") for name in LIMIT_NAMES})


def stream_limits(args: argparse.Namespace) -> StreamLimits:
    """The flags' StreamLimits (their argparse types have checked their ranges)."""
    return StreamLimits(
        per_token=args.limit_per_token, unauthenticated=args.limit_unauthenticated,
        total=args.limit_total, calls_per_token=args.limit_calls_per_token,
        hello_wait_s=args.hello_wait_s, connections=args.connections,
    )  # fmt: skip


FILES_BESIDE_CONNECTIONS = 1024
"""Open files `arena serve` keeps for all but its connections: the store, the bots'
sockets and pipes, logs, a Ray driver's."""


def open_files_for(connections: int) -> str | None:
    """Raise this process's open-file limit (its soft one, up to the hard one) to what
    ``connections`` and the rest need; the warning to print when the hard limit is lower,
    else None. Past the limit every accept and open fails, not only the connections'."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + FILES_BESIDE_CONNECTIONS
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return None
    raised = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
    if raised > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
    if raised >= wanted:
        return None
    return (
        f"the open-file limit is {raised} (its hard limit), below the {wanted} that"
        f" {connections} connections and the rest need: raise it (ulimit -Hn, systemd's"
        " LimitNOFILE=) or lower --connections"
    )


def serve_flags_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the server's flags, in words (None: nothing): found before the
    data directory is opened, so that a refused command line leaves none behind."""
    try:
        user_limits(args)
    except ValueError as error:
        return str(error)
    problem = concurrency_problem(args.concurrency)
    if problem is not None:
        return problem
    for flag, port in (("--port", args.port), ("--web-port", args.web_port)):
        if port is not None and not 0 <= port <= 65535:
            return f"{flag} must be a port number from 0 to 65535, got {port}"
    try:
        _server_tls(args)
    except TlsConfigError as error:
        return str(error)
    return ray_flags_problem(args) or (ladder_flags_problem(args) if args.ladder else None)


def run_serve(store: Store, args: argparse.Namespace) -> int:
    limits = stream_limits(args)
    defaults = user_limits(args)  # the flags were checked before the store was opened
    try:
        tls = _server_tls(args)  # read again: a file may have changed since
    except TlsConfigError as error:
        return fail(str(error), EXIT_BAD_FLAGS)
    try:
        delay_s = next_served(  # checked here, stored once the port is bound
            args.spectator_delay_s, served_delay(store), time.time(),
            allow_shorter=args.allow_shorter_delay,
        ).delay_s
    except ShorterDelayError as error:
        return fail(str(error), EXIT_BAD_FLAGS)
    try:
        new_executor = ray_executors(args)  # joins the cluster now: a bad address fails here
    except RayUnavailableError as error:
        return fail(str(error))
    try:
        opponent = load_bot(SAMPLE_RANDOM_BOT)
    except BotConfigError as error:
        return fail(f"the smoke-match opponent is unusable: {error}")

    def smoke(directory: Path) -> SubmissionCheck:
        return check_submission(load_bot(directory), opponent, unsafe=args.unsafe_no_sandbox)

    options = ServiceOptions(
        concurrency=args.concurrency, unsafe=args.unsafe_no_sandbox, smoke_check=smoke,
        pin_cpus=args.pin_cpus, paired_remote=args.paired_remote, new_executor=new_executor,
        limits=defaults,
        spectator_delay_s=delay_s,
    )  # fmt: skip
    credentials = None if tls is None else tls.grpc_credentials()
    if args.web_port is not None:
        from arena.web.server import WebLimits

        web_connections = WebLimits().max_connections
    else:
        web_connections = 0
    warning = open_files_for(limits.connections + web_connections)
    if warning is not None:
        print(f"arena: warning: {warning}", file=sys.stderr, flush=True)
        get_logger().warning("open_files_short", message=warning)
    try:
        server, port = create_server(
            f"{args.host}:{args.port}", store=store, options=options, credentials=credentials,
            limits=limits,
        )  # fmt: skip
    except RuntimeError as error:
        return fail(str(error))
    web = None
    if args.web_port is not None:  # bound before anything is stored: a port in use is refused
        from arena.web.live_answers import LIVE_ANSWER_S
        from arena.web.play import PlayOptions, PlayTables
        from arena.web.server import create_web_server

        quotas = server.quotas

        def rated_play(user: str) -> bool:
            """The admin's rated_play setting for ``user`` (read as every limit is)."""
            return quotas is not None and quotas.limits_for(user).rated_play == 1

        try:
            web, web_port = create_web_server(
                store, args.host, args.web_port, ssl_context=None if tls is None else tls.context,
                spectator_delay_s=delay_s, live_answer_s=LIVE_ANSWER_S,
                submitter=WebSubmitter(store, options.smoke_check, server.quotas),
                tables=PlayTables(store, PlayOptions(unsafe=args.unsafe_no_sandbox,
                                                     rated_play=rated_play)),
                start=False,
            )  # fmt: skip
        except OSError as error:
            server.stop(grace=None)
            return fail(f"cannot serve the web pages on {args.host}:{args.web_port}: {error}")

    def refused(message: str, status: int) -> int:
        server.stop(grace=None)
        if web is not None:
            web.stop()
        return fail(message, status)

    try:  # checked again with the store's write lock: another server may have started since
        serve_with_delay(store, delay_s, allow_shorter=args.allow_shorter_delay)
    except ShorterDelayError as error:
        return refused(str(error), EXIT_BAD_FLAGS)
    ensure_admin_token(store)
    ladder: LadderThread | None = None
    if args.ladder:
        try:
            ladder = start_ladder(store, args, new_executor)
        except (TournamentError, LeaseHeldError) as error:
            return refused(str(error), EXIT_BAD_FLAGS if isinstance(error, TournamentError) else 1)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    # before anything is printed: whoever reads the ports may stop the server at once
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server.start()
    security = "plaintext" if tls is None else "mutual TLS" if tls.mutual else "TLS"
    print(f"arena API (gRPC, {security}) listening on {args.host}:{port}", flush=True)
    print(f"remote bots: RefereeService/Play on {args.host}:{port} (seat tokens)", flush=True)
    if web is not None:
        web.start()
        scheme = "http" if tls is None else "https"
        print(f"web pages on {scheme}://{args.host}:{web_port}/", flush=True)
    if ladder is not None:
        print(f"ladder {args.ladder_name!r} running", flush=True)
    if delay_s > 0:
        print(f"spectator delay: {delay_s:g} s (the data directory's: arena export keeps it)",
              flush=True)  # fmt: skip
    print(f"admin token: {store.data_dir / ADMIN_TOKEN_NAME}", flush=True)
    get_logger().info("server_started", host=args.host, port=port)
    stop.wait()
    if ladder is not None:
        ladder.stop()
    if web is not None:
        web.stop()
    server.stop(grace=API_STOP_GRACE_S).wait()
    get_logger().info("server_stopped")
    return 0


def _server_tls(args: argparse.Namespace) -> ServerTls | None:
    """The checked TLS files of the flags, None without them; TlsConfigError naming a problem."""
    if args.tls_cert is None and args.tls_key is None:
        if args.tls_client_ca is not None:
            raise TlsConfigError("--tls-client-ca needs --tls-cert and --tls-key")
        return None
    if args.tls_cert is None or args.tls_key is None:
        given, missing = (
            ("--tls-cert", "--tls-key") if args.tls_key is None else ("--tls-key", "--tls-cert")
        )
        raise TlsConfigError(f"{given} needs {missing}: give both PEM files, or neither")
    return load_server_tls(args.tls_cert, args.tls_key, args.tls_client_ca)
