"""The one shape of the API server's interceptors: look at a method's handler, maybe
replace its behaviour, keep everything else.

A ``HandlerInterceptor`` says in ``wrap`` what it does with one method's
handler (``None`` when no such method exists is passed over); ``replaced``
builds the handler that does ``behaviour`` instead, of the same kind (unary or
streamed request and response), with the same serializers and, unless another
is given, the same request deserializer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

import grpc
import grpc.aio

Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"  # generic only to the type checker
Behaviour = Callable[..., Any]
Deserializer = Callable[[bytes], Any] | None

_NEW_HANDLER = {
    (False, False): grpc.unary_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
}


def behaviour_of(handler: Handler) -> Behaviour:
    """The function that answers the method, whichever of the four kinds it is."""
    found = (handler.unary_unary or handler.unary_stream or handler.stream_unary
             or handler.stream_stream)  # fmt: skip
    if found is None:
        raise ValueError("a gRPC method handler without a behaviour")
    return found


def replaced(
    handler: Handler, behaviour: Behaviour, *, request_deserializer: Deserializer = None
) -> Handler:
    """``handler`` answering with ``behaviour``; with ``request_deserializer`` in place
    of its own if one is given."""
    new_handler = _NEW_HANDLER[(bool(handler.request_streaming), bool(handler.response_streaming))]
    return new_handler(
        behaviour,
        request_deserializer=request_deserializer or handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


class HandlerInterceptor(grpc.aio.ServerInterceptor, ABC):  # type: ignore[type-arg]
    """An interceptor that decides per method handler (see the module)."""

    @abstractmethod
    def wrap(self, handler: Handler, method: grpc.HandlerCallDetails) -> Handler:
        """The handler to serve ``method`` with: ``handler`` itself or ``replaced(...)``."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        return self.wrap(handler, handler_call_details)
