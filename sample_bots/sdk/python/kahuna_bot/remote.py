"""Play a bot you host yourself in an arena's tournaments (a *remote* bot).

Register the bot once (``ArenaService.RegisterRemoteBot``, or ``--register``
below), then keep a connector running::

    KAHUNA_USER_TOKEN=... python -m kahuna_bot.remote --arena HOST:PORT --bot NAME \\
        -- python3 my_bot.py

The user token comes from ``$KAHUNA_USER_TOKEN`` or ``--user-token-file FILE``,
never from the command line, where every user of the machine sees it (``ps``);
the bot's command does not get it. At most ``--max-parallel`` bots run at once
(default: the CPUs): a seat offered while all are busy waits for one to end
until its deadline, then is let go. Text from the arena is printed with its
control characters made visible (``\\u001b``), so an arena cannot drive the
terminal.

The connector waits for the seats the arena offers the bot
(``ArenaService.WaitForSeats``) and, for each, starts the command with
``KAHUNA_REFEREE=HOST:PORT`` and ``KAHUNA_TOKEN=<seat token>`` in its
environment: any bot written for the arena (``run(choose)`` in Python, or any
language) plays unchanged. ``serve_seats(choose, ...)`` does the same in
process, one thread per seat. A seat token works once, for one seat of one
match, and only until its deadline (the bot must say Hello by then).

An arena served with TLS (``arena serve --tls-cert ... --tls-key ...``) needs
``--tls`` (the system's CA roots) or ``--tls-ca FILE`` (a PEM CA, for a
private or self-signed certificate), and with mutual TLS also
``--tls-cert FILE --tls-key FILE``. The connector then talks to the arena
over TLS, and gives each bot a private Unix socket
(kahuna_bot.relay) whose Play stream it relays over TLS: bots need no TLS
of their own.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeAlias, cast

import grpc

from kahuna_bot._gen import arena_service_pb2, arena_service_pb2_grpc
from kahuna_bot.client import run
from kahuna_bot.relay import Relay
from kahuna_bot.session import Bot, Choose

RETRY_S = 2.0
FATAL_CODES = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.INVALID_ARGUMENT,
    }
)
EXIT_OK = 0
EXIT_REFUSED = 2
TOKEN_ENV = "KAHUNA_USER_TOKEN"
# Characters that move the cursor, rewrite the screen or reorder text on a terminal:
# C0 and C1 controls, DEL, line and paragraph separators, bidirectional overrides.
# arena/commands/remote.py holds the same set (its tests compare the two).
HIDDEN = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)

Seat: TypeAlias = arena_service_pb2.WaitForSeatsResponse  # one offered seat
Player = Callable[[Seat], int]  # plays one seat; its exit status


class ConnectorError(RuntimeError):
    """The arena refused the connector (bad token, not the caller's bot ...).

    ``code`` is the gRPC status code's name (``"NOT_FOUND"``; empty when there is
    none) and ``details`` the arena's own words, for a caller with exit statuses of
    its own (``connect``'s ``refused``).
    """

    def __init__(self, error: grpc.RpcError) -> None:
        super().__init__(_describe(error))
        self.code = error.code().name if isinstance(error, grpc.Call) else ""
        self.details = (error.details() or "") if isinstance(error, grpc.Call) else ""


def _metadata(user_token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {user_token}"),)


def tls_credentials(
    ca: Path | None = None, cert: Path | None = None, key: Path | None = None
) -> grpc.ChannelCredentials:
    """TLS credentials for an arena: the system's CA roots unless ``ca`` (PEM) is given.

    ``cert`` and ``key`` (PEM, both or neither) are this client's certificate
    for an arena with mutual TLS. Raises ValueError naming a file it cannot use.
    """
    if (cert is None) != (key is None):
        raise ValueError("--tls-cert and --tls-key go together: give both PEM files, or neither")
    roots = system_roots() if ca is None else _read_pem("--tls-ca", ca, b"CERTIFICATE")
    return grpc.ssl_channel_credentials(
        root_certificates=roots,
        private_key=None if key is None else _read_pem("--tls-key", key, b"PRIVATE KEY"),
        certificate_chain=None if cert is None else _read_pem("--tls-cert", cert, b"CERTIFICATE"),
    )


def system_roots() -> bytes | None:
    """The system's CA bundle (OpenSSL's default file, or ``$SSL_CERT_FILE``).

    None where there is none: gRPC then uses the roots it ships with.
    """
    cafile = ssl.get_default_verify_paths().cafile
    if cafile is None:
        return None
    try:
        return Path(cafile).read_bytes()
    except OSError:
        return None


def _read_pem(flag: str, path: Path, label: bytes) -> bytes:
    try:
        pem = path.read_bytes()
    except OSError as error:
        raise ValueError(f"{flag} {path}: cannot be read ({error.strerror or error})") from None
    if b"-----BEGIN " not in pem or label not in pem:
        raise ValueError(f"{flag} {path}: not a PEM file with a {label.decode()} block")
    return pem


def _channel(arena: str, credentials: grpc.ChannelCredentials | None) -> grpc.Channel:
    if credentials is None:
        return grpc.insecure_channel(arena)
    return grpc.secure_channel(arena, credentials)


def register(
    arena: str,
    user_token: str,
    bot: str,
    description: str = "",
    *,
    credentials: grpc.ChannelCredentials | None = None,
) -> str:
    """Register ``bot`` as a remote bot of the token's user; its version."""
    with _channel(arena, credentials) as channel:
        stub = arena_service_pb2_grpc.ArenaServiceStub(channel)
        try:
            reply = stub.RegisterRemoteBot(
                arena_service_pb2.RegisterRemoteBotRequest(name=bot, description=description),
                metadata=_metadata(user_token),
            )
        except grpc.RpcError as error:
            raise ConnectorError(error) from None
    return str(reply.bot.version)


def seats(
    arena: str, user_token: str, bot: str, *, credentials: grpc.ChannelCredentials | None = None
) -> Iterator[Seat]:
    """Every seat offered to ``bot``, reconnecting when the arena is unreachable."""
    while True:
        with _channel(arena, credentials) as channel:
            stub = arena_service_pb2_grpc.ArenaServiceStub(channel)
            request = arena_service_pb2.WaitForSeatsRequest(bot=bot)
            try:
                yield from stub.WaitForSeats(request, metadata=_metadata(user_token))
            except grpc.RpcError as error:
                if isinstance(error, grpc.Call) and error.code() in FATAL_CODES:
                    raise ConnectorError(error) from None
                _say(f"lost the arena ({_describe(error)}); retrying in {RETRY_S:g} s")
        time.sleep(RETRY_S)


def connect(
    arena: str,
    user_token: str,
    bot: str,
    play: Player,
    *,
    max_seats: int | None = None,
    max_parallel: int | None = None,
    credentials: grpc.ChannelCredentials | None = None,
    refused: Callable[[ConnectorError], int] | None = None,
) -> int:
    """Play each offered seat with ``play`` in a thread of its own; stop after ``max_seats``.

    At most ``max_parallel`` seats play at once (default: the CPUs): an offer made
    while all are busy waits for one to end until the seat's deadline, then is let
    go (the arena forfeits that seat), so an arena cannot make this machine run
    more bots than it chose. When the arena refuses the connector, ``refused`` says
    so and gives the exit status (default: a line on stderr, ``EXIT_REFUSED``).
    """
    limit = max_parallel if max_parallel is not None else default_parallel()
    slots = threading.BoundedSemaphore(limit)
    threads: list[threading.Thread] = []
    seen: set[str] = set()  # after a reconnect the arena repeats the offers still open
    taken = 0

    def play_then_free(seat: Seat) -> None:
        try:
            play(seat)
        finally:
            slots.release()

    try:
        for seat in seats(arena, user_token, bot, credentials=credentials):
            if seat.seat_token in seen:
                continue
            seen.add(seat.seat_token)
            wait_s = max(0.0, seat.deadline_unix_ms / 1000 - time.time())
            if not slots.acquire(timeout=wait_s):
                _say(f"seat let go: match {seat.match_id}; {limit} bots already play"
                     f" (--max-parallel {limit})")  # fmt: skip
                continue
            _say(f"seat offered: match {seat.match_id}, seat token valid until its deadline")
            thread = threading.Thread(
                target=play_then_free, args=(seat,), name=f"seat-{seat.match_id}"
            )
            thread.start()
            threads.append(thread)
            taken += 1
            if max_seats is not None and taken >= max_seats:
                break
    except ConnectorError as error:
        status = _refused(error) if refused is None else refused(error)
        for thread in threads:  # the seats already playing end as they would have
            thread.join()
        return status
    for thread in threads:
        thread.join()
    return EXIT_OK


def _refused(error: ConnectorError) -> int:
    _say(f"the arena refused: {error}")
    return EXIT_REFUSED


def default_parallel() -> int:
    """The CPUs this process may use: how many bots play at once unless told otherwise."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def command_player(referee: str, command: Sequence[str]) -> Player:
    """Plays a seat by running ``command`` with the seat in its environment.

    ``referee`` is the bot's ``KAHUNA_REFEREE``: the arena's address, or a
    relay's (``Relay.target``) when the arena is TLS only.
    """

    def play(seat: Seat) -> int:
        env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}  # the bot's, not yours
        env.update(KAHUNA_REFEREE=referee, KAHUNA_TOKEN=seat.seat_token)
        status = subprocess.run(list(command), env=env, check=False).returncode
        _say(f"match {seat.match_id}: the bot exited with status {status}")
        return status

    return play


def seat_player(bot: Bot | Choose | type[Bot]) -> Bot | Choose:
    """What plays one seat: a new instance of a ``Bot`` class, so that seats in play at
    once keep their state (``on_match_start``'s, a search tree) apart; an instance or a
    function as given, shared by every seat."""
    if isinstance(bot, type) and issubclass(bot, Bot):
        return bot()
    return cast("Bot | Choose", bot)


def serve_seats(
    bot: Bot | Choose | type[Bot],
    *,
    arena: str,
    user_token: str,
    name: str,
    max_seats: int | None = None,
    max_parallel: int | None = None,
    credentials: grpc.ChannelCredentials | None = None,
) -> int:
    """Play every seat offered to remote bot ``name`` in this process with ``bot``.

    Up to ``max_parallel`` seats play at once, each in a thread of its own: pass a
    ``Bot`` class (``serve_seats(MyBot, ...)``) for an instance per seat; an instance or
    a ``choose`` function is shared by the seats in play, so it must keep no state of
    one match or game on itself.

    With ``credentials`` (``tls_credentials()``) the arena is reached over TLS,
    the seats' streams through a ``Relay``.
    """
    with contextlib.ExitStack() as stack:
        referee = arena
        if credentials is not None:
            referee = stack.enter_context(Relay(arena, credentials)).target

        def play(seat: Seat) -> int:
            environ = {"KAHUNA_REFEREE": referee, "KAHUNA_TOKEN": seat.seat_token}
            return run(seat_player(bot), name=name, environ=environ)

        return connect(arena, user_token, name, play, max_seats=max_seats,
                       max_parallel=max_parallel, credentials=credentials)  # fmt: skip


def _describe(error: grpc.RpcError) -> str:
    if isinstance(error, grpc.Call):
        return f"{error.code().name}: {error.details()}"
    return repr(error)


def visible(text: str) -> str:
    """``text`` with every character that could drive a terminal shown as ``\\uXXXX``."""
    return HIDDEN.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def _say(message: str) -> None:
    print(f"kahuna_bot.remote: {visible(message)}", file=sys.stderr, flush=True)


def user_token(token_file: Path | None, environ: Mapping[str, str]) -> str:
    """The user token: the first line of ``token_file``, else ``$KAHUNA_USER_TOKEN``.

    Raises ValueError saying where to put it.
    """
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").partition("\n")[0].strip()
        except (OSError, UnicodeDecodeError) as error:
            raise ValueError(f"--user-token-file {token_file}: cannot be read ({error})") from None
        if not token:
            raise ValueError(f"--user-token-file {token_file}: no token on its first line")
        return token
    token = environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise ValueError(f"no user token: set {TOKEN_ENV} or give --user-token-file FILE")
    return token


def main(
    argv: Sequence[str] | None = None, *, refused: Callable[[ConnectorError], int] | None = None
) -> int:
    """The connector's command line; its exit status (``refused`` as for ``connect``)."""
    parser = argparse.ArgumentParser(
        prog="python -m kahuna_bot.remote",
        description="Run a bot you host in an arena's tournaments (docs/reference/PROTOCOL.md).",
    )
    parser.add_argument("--arena", required=True, help="the arena's host:port (arena serve)")
    parser.add_argument(
        "--user-token-file", type=Path, metavar="FILE",
        help=f"read your arena user token from FILE's first line (else ${TOKEN_ENV})",
    )  # fmt: skip
    parser.add_argument("--user-token", help=argparse.SUPPRESS)
    parser.add_argument("--bot", required=True, help="the remote bot's name")
    parser.add_argument("--register", action="store_true", help="register the bot first")
    parser.add_argument("--max-seats", type=int, default=None, help="stop after N seats")
    parser.add_argument(
        "--max-parallel", type=int, default=None, metavar="N",
        help="run at most N bots at once (default: the CPUs)",
    )  # fmt: skip
    parser.add_argument(
        "--tls", action="store_true",
        help="the arena serves TLS (arena serve --tls-cert): verify it with the system's CA roots",
    )  # fmt: skip
    parser.add_argument(
        "--tls-ca", type=Path, metavar="FILE",
        help="verify the arena's certificate with this PEM CA instead (implies --tls)",
    )  # fmt: skip
    parser.add_argument(
        "--tls-cert", type=Path, metavar="FILE",
        help="this client's PEM certificate, for an arena with mutual TLS (implies --tls)",
    )  # fmt: skip
    parser.add_argument("--tls-key", type=Path, metavar="FILE", help="the key of --tls-cert (PEM)")
    parser.add_argument("command", nargs="+", help="the bot's command line, after --")
    args = parser.parse_args(argv)
    if args.max_seats is not None and args.max_seats < 1:
        parser.error("--max-seats must be at least 1")
    if args.max_parallel is not None and args.max_parallel < 1:
        parser.error(f"--max-parallel must be at least 1, got {args.max_parallel}")
    if args.user_token is not None:
        parser.error(f"--user-token puts your token where every user of this machine sees it"
                     f" (ps): set {TOKEN_ENV} or give --user-token-file FILE")  # fmt: skip
    try:
        token = user_token(args.user_token_file, os.environ)
    except ValueError as error:
        parser.error(str(error))
    credentials = None
    if args.tls or args.tls_ca or args.tls_cert or args.tls_key:
        try:
            credentials = tls_credentials(args.tls_ca, args.tls_cert, args.tls_key)
        except ValueError as error:
            parser.error(str(error))
    if args.register:
        try:
            version = register(args.arena, token, args.bot, credentials=credentials)
        except ConnectorError as error:
            if refused is not None:
                return refused(error)
            _say(f"registration refused: {error}")
            return EXIT_REFUSED
        _say(f"registered {args.bot} (version {version})")
    with contextlib.ExitStack() as stack:
        referee = args.arena
        if credentials is not None:
            referee = stack.enter_context(Relay(args.arena, credentials)).target
        player = command_player(referee, args.command)
        return connect(
            args.arena, token, args.bot, player, max_seats=args.max_seats,
            max_parallel=args.max_parallel, credentials=credentials, refused=refused,
        )  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
