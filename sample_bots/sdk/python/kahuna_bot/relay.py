"""A private Unix socket that relays a bot's Play stream to a TLS arena.

Bots speak plain gRPC (``KAHUNA_REFEREE`` = ``unix:///...`` or
``host:port``). When the arena's port is TLS only (``arena serve
--tls-cert``), the connector (kahuna_bot.remote) starts one ``Relay``: a gRPC
server on a socket in a fresh directory only this user can enter, whose
``kahuna.v1.RefereeService/Play`` streams are forwarded frame for frame,
both ways, over one secure channel to the arena. The bot is given the
relay's ``unix://`` address and plays unchanged, in any language. The relay
reads nothing but frame boundaries: the seat token still travels inside the
Hello, now encrypted between this machine and the arena.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from concurrent import futures
from types import TracebackType

import grpc

PLAY_SERVICE = "kahuna.v1.RefereeService"
PLAY_METHOD = f"/{PLAY_SERVICE}/Play"
MAX_FRAME_BYTES = 64 * 1024 * 1024
"""Generous both ways: the referee, not the relay, judges oversized messages."""
MAX_STREAMS = 64
"""Seats played through one relay at once (one thread each)."""
_OPTIONS = (
    ("grpc.max_send_message_length", MAX_FRAME_BYTES),
    ("grpc.max_receive_message_length", MAX_FRAME_BYTES),
)


def _identity(frame: bytes) -> bytes:
    return frame


class Relay:
    """Plain Play streams on a private Unix socket, forwarded over ``credentials`` to ``arena``."""

    def __init__(self, arena: str, credentials: grpc.ChannelCredentials) -> None:
        self._directory = tempfile.mkdtemp(prefix="kahuna-relay-")  # mode 0700
        self.socket_path = os.path.join(self._directory, "referee.sock")
        self._channel = grpc.secure_channel(arena, credentials, options=_OPTIONS)
        self._upstream = self._channel.stream_stream(
            PLAY_METHOD, request_serializer=_identity, response_deserializer=_identity
        )
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=MAX_STREAMS, thread_name_prefix="relay"),
            options=_OPTIONS,
        )
        play = grpc.stream_stream_rpc_method_handler(
            self._play, request_deserializer=_identity, response_serializer=_identity
        )
        self._server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(PLAY_SERVICE, {"Play": play}),)
        )
        try:
            self._server.add_insecure_port(self.target)
            self._server.start()
        except BaseException:
            self.close()
            raise

    @property
    def target(self) -> str:
        """The address to give a bot as ``KAHUNA_REFEREE``."""
        return f"unix://{self.socket_path}"

    def close(self) -> None:
        """Stop relaying (open streams are cancelled) and remove the socket's directory."""
        self._server.stop(grace=None).wait()
        self._channel.close()
        shutil.rmtree(self._directory, ignore_errors=True)

    def __enter__(self) -> Relay:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _play(self, frames: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
        call = self._upstream(frames)
        context.add_callback(call.cancel)  # the bot went away: so does its stream to the arena
        try:
            yield from call
        except grpc.RpcError as error:
            if isinstance(error, grpc.Call) and error.code() is not grpc.StatusCode.CANCELLED:
                context.abort(error.code(), error.details() or "the arena ended the stream")
