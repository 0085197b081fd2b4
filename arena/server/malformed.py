"""A request whose bytes are not the message its method takes: INVALID_ARGUMENT, one line.

gRPC parses a request with the method's deserializer before any of our code
runs; a corrupt message (bad wire format, a string field that is not UTF-8)
raised protobuf's DecodeError there, which the server answered UNKNOWN
("Unexpected <class DecodeError>") with a traceback in its log for every such
request. ``MalformedRequestInterceptor`` gives each unary-request method a
deserializer that returns ``MalformedRequest`` instead of raising, and a
handler that answers it INVALID_ARGUMENT naming the message type and the
problem (streamed requests, the gateway's Play, are left alone: it relays
bytes).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from arena.server.interceptors import Handler, HandlerInterceptor, replaced


@dataclass(frozen=True)
class MalformedRequest:
    """What the wrapped deserializer gives for bytes that do not parse."""

    problem: str


def _tolerant(deserialize: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserialize is None:
        return None

    def parse(data: bytes) -> Any:
        try:
            return deserialize(data)
        except DecodeError as error:
            return MalformedRequest(" ".join(str(error).split()) or "malformed message")

    return parse


def _refusal(request: MalformedRequest) -> str:
    return f"the request is not a valid message: {request.problem}"


def _unary(inner: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(inner):

        async def answer_async(request: Any, context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
            if isinstance(request, MalformedRequest):
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, _refusal(request))
            return await inner(request, context)

        return answer_async

    def answer(request: Any, context: grpc.ServicerContext) -> Any:
        if isinstance(request, MalformedRequest):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, _refusal(request))
        return inner(request, context)

    return answer


def _streamed(inner: Callable[..., AsyncIterator[Any]]) -> Callable[..., AsyncIterator[Any]]:
    async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:  # type: ignore[type-arg]
        if isinstance(request, MalformedRequest):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, _refusal(request))
        async for message in inner(request, context):
            yield message

    return stream


class MalformedRequestInterceptor(HandlerInterceptor):
    """Answers a request that does not parse INVALID_ARGUMENT (see the module)."""

    def wrap(self, handler: Handler, method: grpc.HandlerCallDetails) -> Handler:
        if handler.request_streaming:
            return handler
        deserializer = _tolerant(handler.request_deserializer)
        if handler.unary_unary is not None:
            return replaced(handler, _unary(handler.unary_unary), request_deserializer=deserializer)
        if handler.unary_stream is not None and inspect.isasyncgenfunction(handler.unary_stream):
            return replaced(
                handler, _streamed(handler.unary_stream), request_deserializer=deserializer
            )
        return handler
