"""UploadBot's receiving end: a bot archive streamed in chunks and spooled to a file.

gRPC reads a unary request whole, up to the server's message limit, before any
of our code runs; so that limit (``MAX_REQUEST_BYTES``) is small, SubmitBot
takes only archives that fit in it, and a larger archive comes by UploadBot:
an ``UploadBotStart`` first, then chunks of at most ``UPLOAD_CHUNK_BYTES``,
written as they arrive to a file in a private upload directory
(arena.bots.archive.upload_directory: removed when the call ends however it
ends, and by the stale-upload sweep after a kill). ``receive_upload`` stops
as soon as the bytes pass the archive limit or the user's room
(arena.server.quotas.UploadRoom), and the whole upload, not the check that
follows it, must arrive within ``UPLOAD_DEADLINE_S``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
from google.protobuf.message import DecodeError

from arena.bots.archive import MAX_ARCHIVE_BYTES, UPLOAD_CHUNK_BYTES
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.server.quotas import UploadRoom

MAX_REQUEST_BYTES = 256 * 1024
"""The API port's message limit (``grpc.max_receive_message_length``): every request of
the arena API but an archive fits in it, Play's Hello (64 KiB) and a bot's reply too."""
UPLOAD_DEADLINE_S = 60.0
"""How long an UploadBot call may take to send its start and every chunk."""
KNOWN_FORMATS = frozenset(pb.ArchiveFormat.values())


class UploadRefused(Exception):
    """An upload refused before its check: the status and the words for it."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _too_large(sent: int) -> UploadRefused:
    return UploadRefused(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"archive refused: archive is over {MAX_ARCHIVE_BYTES} bytes ({sent} sent so far);"
        f" the limit is {MAX_ARCHIVE_BYTES}",
    )


def _check_size(sent: int, room: UploadRoom | None) -> None:
    """Refuse ``sent`` bytes past the archive limit or ``room``."""
    if sent > MAX_ARCHIVE_BYTES:
        raise _too_large(sent)
    if room is not None and sent > room.left:
        raise room.past(sent)


async def _parsed(
    requests: AsyncIterator[pb.UploadBotRequest],
) -> AsyncIterator[pb.UploadBotRequest]:
    """``requests``, a message that does not parse refused INVALID_ARGUMENT in one line
    (gRPC parses each before we see it: arena.server.malformed covers unary requests)."""
    while True:
        try:
            request = await anext(requests)
        except StopAsyncIteration:
            return
        except DecodeError as error:
            problem = " ".join(str(error).split()) or "malformed message"
            raise UploadRefused(
                grpc.StatusCode.INVALID_ARGUMENT, f"the request is not a valid message: {problem}"
            ) from None
        yield request


async def receive_upload(
    requests: AsyncIterator[pb.UploadBotRequest], spool: Path, room: UploadRoom | None
) -> pb.ArchiveFormat.ValueType:
    """Write the chunks of ``requests`` to ``spool`` (a new file); return the start's
    format. UploadRefused or LimitExceeded (the room) at the first message that breaks a rule."""
    requests = _parsed(requests)
    start = await anext(requests, None)
    if start is None or start.WhichOneof("part") != "start":
        raise UploadRefused(
            grpc.StatusCode.INVALID_ARGUMENT,
            "UploadBot's first message must be its start (UploadBotStart), then the chunks",
        )
    if start.start.format not in KNOWN_FORMATS:
        raise UploadRefused(
            grpc.StatusCode.INVALID_ARGUMENT, f"unknown archive format {start.start.format}"
        )
    _check_size(max(start.start.size, 0), room)
    sent = 0
    with spool.open("xb") as out:
        spool.chmod(0o600)
        async for request in requests:
            if request.WhichOneof("part") != "chunk":
                raise UploadRefused(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "UploadBot takes one start, then only chunks of the archive",
                )
            if len(request.chunk) > UPLOAD_CHUNK_BYTES:
                raise UploadRefused(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"an UploadBot chunk is {len(request.chunk)} bytes;"
                    f" the limit is {UPLOAD_CHUNK_BYTES}",
                )
            sent += len(request.chunk)
            _check_size(sent, room)
            out.write(request.chunk)
    return start.start.format

