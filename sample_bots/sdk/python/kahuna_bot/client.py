"""The gRPC side: connect to the referee, run a ``Session`` over one stream.

``run(choose)`` is all a bot needs: it reads ``KAHUNA_REFEREE`` and
``KAHUNA_TOKEN``, opens the ``Play`` stream, says Hello, answers every
request with ``choose(observation, legal_actions)`` and returns an exit
status once the match is over (0) or the referee cut the bot off (1).

The stream runs on ``grpc.aio`` in one event loop thread: a response is
read, handled (``choose`` included) and the reply written in that thread,
with no hand-off to a request-iterator thread as the synchronous API needs
(measured: about a third less CPU per decision, ``benchmarks/sdk.py``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import traceback
from collections.abc import Mapping

import grpc
import grpc.aio

from kahuna_bot._gen import referee_pb2
from kahuna_bot.observation import ProtocolError
from kahuna_bot.session import Bot, Choose, FunctionBot, Session

CONNECT_TIMEOUT_S = 10.0
CLOSE_TIMEOUT_S = 5.0  # after MatchOver: how long to wait for the referee to close the stream
PLAY_METHOD = "/kahuna.v1.RefereeService/Play"
_CHANNEL_OPTIONS = (
    ("grpc.enable_http_proxy", 0),
    ("grpc.max_receive_message_length", 16 * 1024 * 1024),
)

_PlayCall = grpc.aio.StreamStreamCall[referee_pb2.PlayRequest, referee_pb2.PlayResponse]

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

    Runs its own event loop (``asyncio.run``): call it from a thread with no
    running loop. Several threads may each run a match at once.
    """
    player = bot if isinstance(bot, Bot) else FunctionBot(bot, name=name, version=version)
    try:
        target, token = referee_from_env(os.environ if environ is None else environ)
    except ConfigError as err:
        _say(str(err))
        return EXIT_USAGE
    return asyncio.run(_connect_and_play(target, Session(player, token=token)))


async def _connect_and_play(target: str, session: Session) -> int:
    async with grpc.aio.insecure_channel(target, options=_CHANNEL_OPTIONS) as channel:
        try:
            await asyncio.wait_for(channel.channel_ready(), CONNECT_TIMEOUT_S)
        except TimeoutError:
            _say(f"could not connect to the referee at {target} within {CONNECT_TIMEOUT_S:g} s")
            return EXIT_USAGE
        return await _play(channel, session)


async def _play(channel: grpc.aio.Channel, session: Session) -> int:
    """Say Hello, then answer until MatchOver or Goodbye; the exit status."""
    call: _PlayCall = channel.stream_stream(
        PLAY_METHOD,
        request_serializer=referee_pb2.PlayRequest.SerializeToString,
        response_deserializer=referee_pb2.PlayResponse.FromString,
    )(None)  # no request iterator: this coroutine writes each request itself
    try:
        await call.write(session.hello())
        while not session.finished:
            response = await call.read()
            if not isinstance(response, referee_pb2.PlayResponse):
                break  # grpc.aio.EOF: the referee closed the stream
            reply = session.handle(response)
            if reply is not None:
                await call.write(reply)
    except grpc.RpcError as err:
        _say(f"the stream ended: {_describe(err)}")
        return EXIT_CUT_OFF
    except asyncio.InvalidStateError:
        pass  # the call ended (status OK) under a write: reported below
    except ProtocolError as err:
        _say(f"protocol error: {err}")
        return EXIT_CUT_OFF
    except Exception:
        traceback.print_exc()
        return EXIT_CUT_OFF
    if session.result is not None:  # the result stands, whatever follows it
        await _close(call)
        return EXIT_OK
    call.cancel()
    if session.goodbye_reason is not None:
        _say(f"the referee cut this bot off: {session.goodbye_reason}")
        return EXIT_CUT_OFF
    _say("the referee closed the stream before the match was over")
    return EXIT_CUT_OFF


async def _close(call: _PlayCall) -> None:
    """Half-close and read until the referee ends the stream; nothing read counts any more."""
    try:
        await call.done_writing()
        async with asyncio.timeout(CLOSE_TIMEOUT_S):
            while isinstance(response := await call.read(), referee_pb2.PlayResponse):
                if response.WhichOneof("kind") == "goodbye":
                    _say(f"after the match was over: {response.goodbye.reason}")
    except (grpc.RpcError, TimeoutError, asyncio.InvalidStateError):
        pass  # the match is over; how the stream ends does not matter
    finally:
        call.cancel()


def _describe(err: grpc.RpcError) -> str:
    if isinstance(err, grpc.aio.AioRpcError):
        return f"{err.code().name} {err.details() or ''}".rstrip()
    return repr(err)


def _say(message: str) -> None:
    print(f"kahuna_bot: {message}", file=sys.stderr, flush=True)
