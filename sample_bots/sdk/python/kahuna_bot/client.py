"""The transport side: connect to the referee, run a ``Session`` over one stream.

``run(choose)`` is all a bot needs: it reads ``KAHUNA_REFEREE`` and
``KAHUNA_TOKEN``, opens the ``Play`` stream, says Hello, answers every
request with ``choose(observation, legal_actions)`` and returns an exit
status once the match is over (0) or the referee cut the bot off (1).

The stream is plain gRPC over HTTP/2 (``kahuna_bot.wire``, on the ``h2``
library) on a blocking socket, in the caller's thread: a response is read,
handled (``choose`` included) and the reply written with no event loop and
no other thread. A sandboxed bot is launched twice per paired match, and
``grpcio`` with ``grpc.aio`` cost each launch more CPU than the bot's whole
game of random moves (measured: docs/reference/PROTOCOL.md, "What a launch costs").
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Mapping

from google.protobuf.message import DecodeError

from kahuna_bot._gen import referee_pb2
from kahuna_bot.observation import ProtocolError
from kahuna_bot.session import Bot, Choose, FunctionBot, Session
from kahuna_bot.wire import Call, CallError, TargetError, parse_target

CONNECT_TIMEOUT_S = 10.0
CLOSE_TIMEOUT_S = 5.0  # after MatchOver: how long in all to wait for the referee to close
PLAY_METHOD = "/kahuna.v1.RefereeService/Play"
MAX_RECEIVE_BYTES = 16 * 1024 * 1024

EXIT_OK = 0  # the match is over (MatchOver arrived; nothing after it changes that)
EXIT_CUT_OFF = 1  # Goodbye, a failed stream, a protocol error or an error in the bot
EXIT_USAGE = 2  # no KAHUNA_REFEREE / KAHUNA_TOKEN, or no referee there


class ConfigError(RuntimeError):
    """The environment does not say where the referee is."""


def referee_from_env(environ: Mapping[str, str]) -> tuple[str, str]:
    """(target, token) from KAHUNA_REFEREE and KAHUNA_TOKEN; ConfigError naming what is missing."""
    target = environ.get("KAHUNA_REFEREE", "").strip()
    token = environ.get("KAHUNA_TOKEN", "")
    if not target:
        raise ConfigError(
            "KAHUNA_REFEREE is not set (expected unix:///path/to/socket or host:port)"
        )
    if not token:
        raise ConfigError("KAHUNA_TOKEN is not set (the arena gives each bot its token)")
    return target, token


def run(
    bot: Bot | Choose,
    *,
    name: str = "",
    version: str = "",
    environ: Mapping[str, str] | None = None,
) -> int:
    """Play one match with ``bot`` (a ``Bot`` or a ``choose`` function); the exit status.

    Blocks the calling thread until the match is over. Several threads may each run a
    match at once (each has its own connection).
    """
    player = bot if isinstance(bot, Bot) else FunctionBot(bot, name=name, version=version)
    try:
        target, token = referee_from_env(os.environ if environ is None else environ)
    except ConfigError as err:
        _say(str(err))
        return EXIT_USAGE
    return run_session(target, Session(player, token=token))


def run_session(target: str, session: Session) -> int:
    """Connect to the referee at ``target`` and play ``session`` (a ``Session``, or a
    subclass that sees every message first) to its end; the exit status, as ``run``."""
    try:
        where = parse_target(target)
    except TargetError as err:
        _say(str(err))
        return EXIT_USAGE
    _freeze_start_up()
    try:
        call = Call(
            where, PLAY_METHOD, connect_timeout_s=CONNECT_TIMEOUT_S,
            max_receive_bytes=MAX_RECEIVE_BYTES,
        )  # fmt: skip
    except TimeoutError:
        _say(f"could not connect to the referee at {target} within {CONNECT_TIMEOUT_S:g} s")
        return EXIT_USAGE
    except OSError as err:
        _say(f"could not connect to the referee at {target}: {err.strerror or err}")
        return EXIT_USAGE
    try:
        return _play(call, session)
    finally:
        call.cancel()


_frozen = False


def _freeze_start_up() -> None:
    """Once per process, as its first match starts: hand every object alive now to
    ``gc.freeze``. They are the program's (the modules, classes, functions and tables of
    the bot, the SDK, protobuf, the engine) and live as long as the process, so no
    collection needs to look at them again: not those during the match, nor the
    interpreter's last ones at exit (measured in the sandbox: a launch that imports the
    SDK and exits costs ~5 ms less CPU, of ~80). What the match creates is collected as
    usual."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.freeze()


def _play(call: Call, session: Session) -> int:
    """Say Hello, then answer until MatchOver or Goodbye; the exit status."""
    try:
        call.send(session.hello().SerializeToString())
        while not session.finished:
            data = call.receive()
            if data is None:
                break  # the referee ended the stream (status OK)
            reply = session.handle(referee_pb2.PlayResponse.FromString(data))
            if reply is not None:
                call.send(reply.SerializeToString())
    except CallError as err:
        if session.result is None:
            _say(f"the stream ended: {err}")
            return EXIT_CUT_OFF
    except ProtocolError as err:
        _say(f"protocol error: {err}")
        return EXIT_CUT_OFF
    except DecodeError as err:
        _say(f"protocol error: a message that is not a PlayResponse ({err})")
        return EXIT_CUT_OFF
    except Exception:
        import traceback  # only here: every launch would pay its import

        traceback.print_exc()
        return EXIT_CUT_OFF
    if session.result is not None:  # the result stands, whatever follows it
        _close(call)
        return EXIT_OK
    if session.goodbye_reason is not None:
        _say(f"the referee cut this bot off: {session.goodbye_reason}")
        return EXIT_CUT_OFF
    _say("the referee closed the stream before the match was over")
    return EXIT_CUT_OFF


def _close(call: Call) -> None:
    """Half-close and read until the referee ends the stream; nothing read counts any more."""
    try:
        call.done_writing()
        call.set_deadline(CLOSE_TIMEOUT_S)
        while (data := call.receive()) is not None:
            response = referee_pb2.PlayResponse.FromString(data)
            if response.WhichOneof("kind") == "goodbye":
                _say(f"after the match was over: {response.goodbye.reason}")
    except (CallError, OSError, ValueError):
        pass  # the match is over; how the stream ends does not matter


def _say(message: str) -> None:
    print(f"kahuna_bot: {message}", file=sys.stderr, flush=True)
