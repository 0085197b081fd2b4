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

Before its Hello a stream is a stranger's, and its first message may be as
large as the server's receive limit: gRPC buffers a message whole before the
gateway sees it, and opens the stream's flow-control window to the size the
message's header announces as soon as a read is waiting for it. So the
gateway reads at most ``StreamLimits.hello_reads`` first messages at once
(``hello_reads_per_peer`` per peer address: ``HelloReads``); the other streams
wait for a turn within their Hello deadline, their peer held to the 64 KiB
window HTTP/2 starts with (the server grows no window on its own:
arena.server.app turns gRPC's bandwidth probe off). A Hello is tiny, and
already sent when its turn comes, so a turn lasts a moment for a real bot.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Collection
from typing import Any

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from arena.logs import get_logger
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee.endpoint import MAX_MESSAGE_BYTES, SERVICE_NAME, TRANSPORT_MAX_BYTES
from arena.referee.remote import cut_words, write_cut_note
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
    return cut_words(refusal, "the token its owner obtained the seat with")


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


def peer_address(peer: str) -> str:
    """The address of a gRPC peer (``ipv4:10.0.0.1:5555``, ``ipv6:[::1]:5555``) without
    its port: the connections of one host share it."""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return rest.rpartition(":")[0] or rest
    return peer


class HelloReads:
    """Turns at reading a Play stream's first message: at most ``total`` at once and
    ``per_peer`` per peer address (on the server's event loop)."""

    def __init__(self, total: int, per_peer: int) -> None:
        self.total = total
        self.per_peer = per_peer
        self.reading = 0
        self.by_peer: dict[str, int] = {}
        self._changed = asyncio.Condition()

    def _free(self, peer: str) -> bool:
        return self.reading < self.total and self.by_peer.get(peer, 0) < self.per_peer

    @contextlib.asynccontextmanager
    async def turn(self, peer: str) -> AsyncIterator[None]:
        """Wait for a turn of ``peer``'s, and hold it while the body runs."""
        async with self._changed:
            await self._changed.wait_for(lambda: self._free(peer))
            self.reading += 1
            self.by_peer[peer] = self.by_peer.get(peer, 0) + 1
        try:
            yield
        finally:
            self.reading -= 1
            left = self.by_peer.pop(peer) - 1
            if left:
                self.by_peer[peer] = left
            async with self._changed:
                self._changed.notify_all()

    def busy(self) -> str:
        """Why a stream that never had a turn was not read, naming the limits."""
        return (
            f"the gateway reads at most {self.total} first messages at once"
            f" ({self.per_peer} per address), and none was free"
        )


async def _let_go(requests: AsyncIterator[bytes]) -> None:
    """Close a refused stream's incoming messages: gRPC's reader keeps the last message it
    read until then (or until the cyclic collector finds it, which large messages do not
    hasten), so a stranger's refused message would stay in memory."""
    aclose = getattr(aiter(requests), "aclose", None)
    if aclose is not None:
        await aclose()


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
        limits = self.counter.limits
        self.reads = HelloReads(limits.hello_reads, limits.hello_reads_per_peer)
        """Turns at reading a first message (what strangers can make the server hold)."""
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
        turns: list[bool] = []

        async def first_message() -> bytes | int | None:
            """The first message; past a Hello's limit, its size only (it is let go of
            before the turn is: the turns bound what strangers' messages hold)."""
            async with self.reads.turn(peer_address(context.peer())):
                turns.append(True)
                message = await anext(aiter(requests), None)  # gRPC's reader: made on first use
                if message is not None and len(message) > MAX_MESSAGE_BYTES:
                    await _let_go(requests)
                    return len(message)
                return message

        try:
            first = await asyncio.wait_for(first_message(), self.hello_wait_s)
        except TimeoutError:
            self.log.info("remote_bot_silent", peer=context.peer(), wait_s=self.hello_wait_s)
            reason = f"no Hello within {self.hello_wait_s:g} s"
            if not turns:
                reason = f"no Hello read within {self.hello_wait_s:g} s: {self.reads.busy()}"
            yield goodbye_frame(reason)
            return
        except grpc.RpcError:
            return
        finally:
            self.counter.release(UNAUTHENTICATED)
        if first is None:
            return
        if isinstance(first, int):
            reason = (
                f"a first message of {first} bytes: a Hello has at most {MAX_MESSAGE_BYTES} bytes"
            )
            self.log.info("remote_bot_refused", reason=reason, peer=context.peer())
            yield goodbye_frame(reason)
            return
        admitted = await asyncio.get_running_loop().run_in_executor(
            self.pool, self._admit, first, context.peer()
        )
        if isinstance(admitted, str):
            del first
            await _let_go(requests)
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
