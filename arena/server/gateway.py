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

A seat token is only as good as the bearer tokens it was handed to
(``SeatHub.holders``: the WaitForSeats streams that received it). A Hello is
refused once one of them is revoked or expired, and a seat being played is
checked again at the pace of every other open stream (arena.server.rechecks):
once one of them is refused, the gateway writes why beside the seat's socket
(``write_cut_note``), ends the seat's stream, which the referee records as a
DISCONNECT saying the owner's token was revoked (or expired), and tells the bot
Goodbye. A stolen user token, once revoked, plays no further move.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Collection
from typing import Any

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from arena.logs import get_logger
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee.endpoint import MAX_MESSAGE_BYTES, SERVICE_NAME, TRANSPORT_MAX_BYTES
from arena.referee.remote import write_cut_note
from arena.server.limits import UNAUTHENTICATED, StreamCounter, StreamLimits
from arena.server.pool import DrainingPool
from arena.server.rechecks import TOKEN_RECHECK_S, SharedChecks, token_refusal
from arena.server.seats import SeatHub
from arena.store import SeatOfferRow, SeatRefusedError, Store, take_seat_offer

PLAY_METHOD = f"/{SERVICE_NAME}/Play"
GATEWAY_THREADS = 4
"""Threads that admit Hellos (a store read and write each: a few ms)."""


def _identity(frame: bytes) -> bytes:
    return frame


def goodbye_frame(
    reason: str, status: referee_pb2.BotStatus.ValueType = referee_pb2.BOT_STATUS_PROTOCOL_VIOLATION
) -> bytes:
    goodbye = referee_pb2.Goodbye(status=status, reason=reason)
    return referee_pb2.PlayResponse(goodbye=goodbye).SerializeToString()


def cut_reason(refusal: str) -> str:
    """The record's words for a seat ended because ``refusal`` refused a token it was
    handed to (no date, no advice: the record is public)."""
    for state in ("revoked", "expired"):
        if refusal.startswith(f"token {state}"):
            return f"the token its owner obtained the seat with was {state}"
    return "the token its owner obtained the seat with is no longer valid"


def _cut(watch: asyncio.Future[str]) -> str:
    """The refusal for which ``watch`` (``_cut_when_refused``) ended the seat's stream, or ""."""
    if not watch.done() or watch.cancelled() or watch.exception() is not None:
        return ""
    return watch.result()


class _Admitted:
    """A Hello's seat, and the bearer tokens its seat token was handed to."""

    __slots__ = ("holders", "offer")

    def __init__(self, offer: SeatOfferRow, holders: Collection[str | None]) -> None:
        self.offer = offer
        self.holders = holders


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
        seats: SeatHub | None = None,
    ) -> None:
        self.store = store
        self.seats = seats or SeatHub(store)
        """Who each seat token was handed to (the API's hub: WaitForSeats fills it)."""
        self.checks = SharedChecks(store)
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
        admitted = await asyncio.get_running_loop().run_in_executor(
            self.pool, self._admit, first, context.peer()
        )
        if isinstance(admitted, str):
            yield goodbye_frame(admitted)
            return
        async for frame in self._proxy(admitted, first, requests, context):
            yield frame

    def _admit(self, first: bytes, peer: str) -> _Admitted | str:
        """The seat the Hello's token opens, or why the connection is refused (blocking)."""
        token = hello_token(first)
        if token is None:
            reason = "the first message must be a Hello carrying a seat token"
        elif not token:
            reason = "Hello without a token (KAHUNA_TOKEN: the seat token of WaitForSeats)"
        else:
            holders = self.seats.holders(token)
            refusals = [token_refusal(self.store, holder) for holder in holders]
            refused = sorted(r for r in refusals if r is not None)
            if refused:
                reason = f"the user token this seat token was handed to is refused: {refused[0]}"
                self.log.info("remote_bot_refused", reason=reason, peer=peer)
                return reason
            try:
                offer = take_seat_offer(self.store, token)
            except SeatRefusedError as error:
                reason = str(error)
            else:
                self.log.info(
                    "remote_bot_admitted", bot=offer.bot, match=offer.referee_match,
                    slot=offer.slot, peer=peer,
                )  # fmt: skip
                # handed out until the take: its stream watches them all
                return _Admitted(offer, holders | self.seats.holders(token, forget=True))
        self.log.info("remote_bot_refused", reason=reason, peer=peer)
        return reason

    async def _refused_holder(self, holders: Collection[str | None]) -> str:
        """The first refusal of a token in ``holders``, checked every ``TOKEN_RECHECK_S``
        (as every open stream's token is): never returns while all are live."""
        # at a random point of the first period, as the API's streams (rechecks.py)
        await asyncio.sleep(random.uniform(0.0, TOKEN_RECHECK_S))
        while True:
            for holder in holders:
                try:
                    refusal = await self.checks.refusal(holder)
                except Exception as error:  # the store failed to answer: not the bot's fault
                    self.log.warning("remote_bot_token_check_failed", error=repr(error))
                    continue
                if refusal is not None:
                    return refusal
            await asyncio.sleep(TOKEN_RECHECK_S)

    async def _proxy(
        self,
        admitted: _Admitted,
        first: bytes,
        requests: AsyncIterator[bytes],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[bytes]:
        """Both ways, byte for byte; the bot going away cancels this, and its seat's stream,
        and so does a token the seat token was handed to being refused (the bot is told)."""
        offer = admitted.offer

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
        call = play(upstream())
        watch = asyncio.ensure_future(self._cut_when_refused(admitted, call))
        try:
            try:
                async for frame in call:
                    yield frame
            except grpc.aio.AioRpcError as error:
                code = error.code()
                if code is grpc.StatusCode.UNAVAILABLE:
                    yield goodbye_frame("the seat's match is no longer being played")
                elif code is not grpc.StatusCode.CANCELLED:
                    await context.abort(code, error.details() or "the referee ended the stream")
            except asyncio.CancelledError:
                if not _cut(watch):
                    raise  # the bot went away: not the cut below
            refusal = _cut(watch)
            if refusal:
                reason = f"the arena ended this seat's stream: {refusal}"
                yield goodbye_frame(reason, referee_pb2.BOT_STATUS_DISCONNECT)
        finally:
            watch.cancel()
            await channel.close(None)
            self.log.info("remote_bot_left", bot=offer.bot, match=offer.referee_match)

    async def _cut_when_refused(
        self, admitted: _Admitted, call: grpc.aio.StreamStreamCall[bytes, bytes]
    ) -> str:
        """Once a token the seat token was handed to is refused: say why beside the seat's
        socket, then end the seat's stream; the refusal (for the bot's Goodbye)."""
        if not admitted.holders:
            return ""  # handed to nobody we know of (a seat stored by hand): nothing to watch
        refusal = await self._refused_holder(admitted.holders)
        offer = admitted.offer
        try:
            await asyncio.get_running_loop().run_in_executor(
                self.pool, write_cut_note, offer.socket_path, cut_reason(refusal)
            )
        except OSError as error:  # the match is gone: its stream ends anyway
            self.log.info("remote_bot_cut_note_failed", error=str(error))
        self.log.info(
            "remote_bot_cut", bot=offer.bot, match=offer.referee_match, reason=refusal
        )  # fmt: skip
        call.cancel()
        return refusal
