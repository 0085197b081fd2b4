"""The interceptors' one shape: a replaced handler keeps its kind and serializers."""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.server.faults import DISK_FULL_MESSAGE, FaultInterceptor
from arena.server.interceptors import Handler, HandlerInterceptor, behaviour_of, replaced
from arena.server.limits import StreamCounter, StreamLimitInterceptor, StreamLimits
from arena.server.malformed import MalformedRequestInterceptor
from arena.store import DAMAGED_ANSWER, DamagedDatabaseError
from arena.testing.aio import run_apart


def _serialize(message: Any) -> bytes:
    return bytes(message)


def _deserialize(data: bytes) -> Any:
    return data


def _other_deserialize(data: bytes) -> Any:
    return data.upper()


def _answer(request: Any, context: Any) -> Any:
    return request


KINDS: dict[str, Callable[..., Handler]] = {
    "unary_unary": grpc.unary_unary_rpc_method_handler,
    "unary_stream": grpc.unary_stream_rpc_method_handler,
    "stream_unary": grpc.stream_unary_rpc_method_handler,
    "stream_stream": grpc.stream_stream_rpc_method_handler,
}


def _handler(kind: str) -> Handler:
    return KINDS[kind](_answer, request_deserializer=_deserialize, response_serializer=_serialize)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_replaced_handler_keeps_its_kind_and_serializers(kind: str) -> None:
    original = _handler(kind)

    def other(request: Any, context: Any) -> Any:
        return None

    new = replaced(original, other)
    assert (new.request_streaming, new.response_streaming) == (
        original.request_streaming, original.response_streaming
    )  # fmt: skip
    assert getattr(new, kind) is other and behaviour_of(new) is other
    assert new.request_deserializer is _deserialize
    assert new.response_serializer is _serialize
    swapped = replaced(original, other, request_deserializer=_other_deserialize)
    assert swapped.request_deserializer is _other_deserialize


class _Details:
    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = (("authorization", "Bearer t"),)


INTERCEPTORS: dict[str, Callable[[], HandlerInterceptor]] = {
    "faults": FaultInterceptor,
    "malformed": MalformedRequestInterceptor,
    "limits": lambda: StreamLimitInterceptor(StreamCounter(StreamLimits()), frozenset()),
}


@pytest.mark.parametrize("name", sorted(INTERCEPTORS))
def test_every_interceptor_passes_an_unknown_method_over(name: str) -> None:
    interceptor = INTERCEPTORS[name]()

    async def unknown(details: Any) -> Any:
        return None

    assert run_apart(interceptor.intercept_service(unknown, _Details("/x.Y/Z"))) is None


@pytest.mark.parametrize("name", sorted(INTERCEPTORS))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_interceptor_keeps_a_methods_kind_and_serializers(name: str, kind: str) -> None:
    interceptor = INTERCEPTORS[name]()
    original = _handler(kind)

    async def found(details: Any) -> Any:
        return original

    new = run_apart(interceptor.intercept_service(found, _Details("/x.Y/Z")))
    assert (new.request_streaming, new.response_streaming) == (
        original.request_streaming, original.response_streaming
    )  # fmt: skip
    assert new.response_serializer is _serialize
    assert getattr(new, kind) is not None


class _Aborted(Exception):
    pass


class _Context:
    """What the fault mapping uses of a call's context: ``abort``, which raises."""

    def __init__(self) -> None:
        self.aborted: tuple[grpc.StatusCode, str] | None = None

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        self.aborted = (code, details)
        raise _Aborted


@pytest.mark.parametrize(
    ("fault", "code", "message"),
    [
        (lambda: DamagedDatabaseError(Path("/srv/arena.db"), "malformed"),
         grpc.StatusCode.DATA_LOSS, DAMAGED_ANSWER),
        (lambda: OSError(errno.ENOSPC, "No space left"),
         grpc.StatusCode.RESOURCE_EXHAUSTED, DISK_FULL_MESSAGE),
        (lambda: ValueError("a bug"), None, None),
    ],
    ids=["damaged", "disk full", "control: another error"],
)  # fmt: skip
def test_a_stream_that_meets_a_fault_mid_way_ends_with_its_status(
    fault: Callable[[], Exception], code: grpc.StatusCode | None, message: str | None
) -> None:
    """A stream's first messages are sent; the fault that ends it is its status, naming no
    server path; any other error goes on up as it is."""
    sent: list[int] = []

    async def stream(request: Any, context: Any) -> Any:
        yield 1
        raise fault()

    async def found(details: Any) -> Any:
        return grpc.unary_stream_rpc_method_handler(stream)

    async def call() -> _Context:
        handler = await FaultInterceptor().intercept_service(found, _Details("/x.Y/Watch"))
        context = _Context()
        with pytest.raises(_Aborted if code is not None else ValueError):
            async for message in handler.unary_stream(None, context):
                sent.append(message)
        return context

    context = run_apart(call())
    assert sent == [1]
    assert context.aborted == (None if code is None else (code, message))
    if message is not None:
        assert "/srv" not in message
