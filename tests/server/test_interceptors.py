"""The interceptors' one shape: a replaced handler keeps its kind and serializers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest

from arena.server.faults import DiskFullInterceptor
from arena.server.interceptors import Handler, HandlerInterceptor, behaviour_of, replaced
from arena.server.limits import StreamCounter, StreamLimitInterceptor, StreamLimits
from arena.server.malformed import MalformedRequestInterceptor
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
    "disk_full": DiskFullInterceptor,
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
