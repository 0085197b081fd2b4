"""The gRPC side: connect to the referee, run a ``Session`` over one stream.

``run(choose)`` is all a bot needs: it reads ``KAHUNA_REFEREE`` and
``KAHUNA_TOKEN``, opens the ``Play`` stream, says Hello, answers every
request with ``choose(observation, legal_actions)`` and returns an exit
status once the match is over (0) or the referee cut the bot off (1).
"""

from __future__ import annotations

import os
import queue
import sys
import traceback
from collections.abc import Iterator, Mapping

import grpc

from kahuna_bot._gen import referee_pb2, referee_pb2_grpc
from kahuna_bot.observation import ProtocolError
from kahuna_bot.session import Bot, Choose, FunctionBot, Session

CONNECT_TIMEOUT_S = 10.0
_CHANNEL_OPTIONS = (
    ("grpc.enable_http_proxy", 0),
    ("grpc.max_receive_message_length", 16 * 1024 * 1024),
)

EXIT_OK = 0  # the match is over
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
    """Play one match with ``bot`` (a ``Bot`` or a ``choose`` function); the exit status."""
    player = bot if isinstance(bot, Bot) else FunctionBot(bot, name=name, version=version)
    try:
        target, token = referee_from_env(os.environ if environ is None else environ)
    except ConfigError as err:
        _say(str(err))
        return EXIT_USAGE
    session = Session(player, token=token)
    with grpc.insecure_channel(target, options=_CHANNEL_OPTIONS) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=CONNECT_TIMEOUT_S)
        except grpc.FutureTimeoutError:
            _say(f"could not connect to the referee at {target} within {CONNECT_TIMEOUT_S:g} s")
            return EXIT_USAGE
        return _play(channel, session)


def _play(channel: grpc.Channel, session: Session) -> int:
    outbox: queue.SimpleQueue[referee_pb2.PlayRequest | None] = queue.SimpleQueue()
    outbox.put(session.hello())
    stub = referee_pb2_grpc.RefereeServiceStub(channel)
    responses = stub.Play(_drain(outbox))
    try:
        for response in responses:
            reply = session.handle(response)
            if reply is not None:
                outbox.put(reply)
            if session.finished:
                outbox.put(None)  # half-close; the referee closes the stream
    except grpc.RpcError as err:
        if not session.finished:
            _say(f"the stream ended: {err.code().name} {err.details() or ''}".rstrip())
            return EXIT_CUT_OFF
    except ProtocolError as err:
        _say(f"protocol error: {err}")
        return EXIT_CUT_OFF
    except Exception:
        traceback.print_exc()
        return EXIT_CUT_OFF
    finally:
        outbox.put(None)  # leaving the channel's `with` then cancels a call still open
    if session.goodbye_reason is not None:
        _say(f"the referee cut this bot off: {session.goodbye_reason}")
        return EXIT_CUT_OFF
    if session.result is None:
        _say("the referee closed the stream before the match was over")
        return EXIT_CUT_OFF
    return EXIT_OK


def _drain(
    outbox: queue.SimpleQueue[referee_pb2.PlayRequest | None],
) -> Iterator[referee_pb2.PlayRequest]:
    while (request := outbox.get()) is not None:
        yield request


def _say(message: str) -> None:
    print(f"kahuna_bot: {message}", file=sys.stderr, flush=True)
