"""``kahuna.v1.RefereeService/Play`` on the `arena serve` port: the way in for remote bots.

A remote bot connects over TCP and says Hello with the seat token its owner's
connector received (ArenaService.WaitForSeats). The gateway takes the seat
offer of that token from the store (once: unknown, used, withdrawn and
expired tokens are refused with a Goodbye naming why, and nothing is
written), then proxies the stream both ways, byte for byte, to that seat's
private Unix socket in the match worker. The referee behind the socket
judges everything (token, request ids, clocks, sizes) exactly as for a
sandboxed bot; the gateway never interprets a message after the Hello. A
bot whose connection drops is cut from the seat's socket too, which the
referee records as a DISCONNECT.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from arena.logs import get_logger
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee.endpoint import MAX_MESSAGE_BYTES, SERVICE_NAME, TRANSPORT_MAX_BYTES
from arena.server.limits import UNAUTHENTICATED, StreamCounter, StreamLimits
from arena.server.pool import DrainingPool
from arena.store import SeatOfferRow, SeatRefusedError, Store, take_seat_offer

PLAY_METHOD = f"/{SERVICE_NAME}/Play"
GATEWAY_THREADS = 4
"""Threads that admit Hellos (a store read and write each: a few ms)."""


def _identity(frame: bytes) -> bytes:
    return frame


def goodbye_frame(reason: str) -> bytes:
    goodbye = referee_pb2.Goodbye(status=referee_pb2.BOT_STATUS_PROTOCOL_VIOLATION, reason=reason)
    return referee_pb2.PlayResponse(goodbye=goodbye).SerializeToString()


def hello_token(frame: bytes) -> str | None:
    """The token of a Hello frame, or None when the frame is not a Hello."""
    if len(frame) > MAX_MESSAGE_BYTES:
        return None
    message = referee_pb2.PlayRequest()
    try:
        message.ParseFromString(frame)
    except DecodeError:
        return None
    if message.WhichOneof("kind") != "hello":
        return None
    return message.hello.token


class RefereeGateway:
    """The generic handler for ``Play`` that admits remote bots to their seats.

    On the asyncio server: a stream waiting for its Hello, or proxying a seat,
    holds no thread. Until its Hello a stream counts among the unauthenticated
    ones (``counter``, arena.server.limits): past that limit it is refused with
    RESOURCE_EXHAUSTED, and one silent for ``hello_wait_s`` is told Goodbye.
    """

    def __init__(
        self,
        store: Store,
        *,
        hello_wait_s: float = StreamLimits().hello_wait_s,
        counter: StreamCounter | None = None,
    ) -> None:
        self.store = store
        self.hello_wait_s = hello_wait_s
        self.counter = counter or StreamCounter(StreamLimits(hello_wait_s=hello_wait_s))
        self.log = get_logger(service="gateway")
        self.pool = DrainingPool(GATEWAY_THREADS, "arena-gateway")
        """Hellos are admitted here, never behind the API's calls (or a flood of them)."""

    def handler(self) -> grpc.GenericRpcHandler:  # type: ignore[type-arg]
        play = grpc.stream_stream_rpc_method_handler(
            self._play, request_deserializer=_identity, response_serializer=_identity
        )
        return grpc.method_handlers_generic_handler(SERVICE_NAME, {"Play": play})

    async def _play(
        self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bytes]:
        refused = self.counter.acquire(UNAUTHENTICATED)
        if refused is not None:
            self.log.info("remote_bot_refused", reason=refused, peer=context.peer())
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
        try:
            first = await asyncio.wait_for(anext(aiter(requests), None), self.hello_wait_s)
        except TimeoutError:
            self.log.info("remote_bot_silent", peer=context.peer(), wait_s=self.hello_wait_s)
            yield goodbye_frame(f"no Hello within {self.hello_wait_s:g} s")
            return
        except grpc.RpcError:
            return
        finally:
            self.counter.release(UNAUTHENTICATED)
        if first is None:
            return
        offer = await asyncio.get_running_loop().run_in_executor(
            self.pool, self._admit, first, context.peer()
        )
        if isinstance(offer, str):
            yield goodbye_frame(offer)
            return
        async for frame in self._proxy(offer, first, requests, context):
            yield frame

    def _admit(self, first: bytes, peer: str) -> SeatOfferRow | str:
        """The seat the Hello's token opens, or why the connection is refused (blocking)."""
        token = hello_token(first)
        if token is None:
            reason = "the first message must be a Hello carrying a seat token"
        elif not token:
            reason = "Hello without a token (KAHUNA_TOKEN: the seat token of WaitForSeats)"
        else:
            try:
                offer = take_seat_offer(self.store, token)
            except SeatRefusedError as error:
                reason = str(error)
            else:
                self.log.info(
                    "remote_bot_admitted", bot=offer.bot, match=offer.referee_match,
                    slot=offer.slot, peer=peer,
                )  # fmt: skip
                return offer
        self.log.info("remote_bot_refused", reason=reason, peer=peer)
        return reason

    async def _proxy(
        self,
        offer: SeatOfferRow,
        first: bytes,
        requests: AsyncIterator[bytes],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[bytes]:
        """Both ways, byte for byte; the bot going away cancels this, and its seat's stream."""

        async def upstream() -> AsyncIterator[bytes]:
            yield first
            async for frame in requests:
                yield frame

        channel = grpc.aio.insecure_channel(
            f"unix://{offer.socket_path}",
            options=[
                ("grpc.max_send_message_length", TRANSPORT_MAX_BYTES * 2),
                ("grpc.max_receive_message_length", TRANSPORT_MAX_BYTES),
            ],
        )
        play = channel.stream_stream(
            PLAY_METHOD, request_serializer=_identity, response_deserializer=_identity
        )
        try:
            call = play(upstream())
            try:
                async for frame in call:
                    yield frame
            except grpc.aio.AioRpcError as error:
                code = error.code()
                if code is grpc.StatusCode.UNAVAILABLE:
                    yield goodbye_frame("the seat's match is no longer being played")
                elif code is not grpc.StatusCode.CANCELLED:
                    await context.abort(code, error.details() or "the referee ended the stream")
        finally:
            await channel.close(None)
            self.log.info("remote_bot_left", bot=offer.bot, match=offer.referee_match)
