"""Who is calling the arena API: bearer tokens, checked once per call by a decorator.

``@authenticated()`` (any user) and ``@authenticated(admin=True)`` wrap an
``ArenaService`` method ``(self, request, context, principal)`` into the
servicer's ``(self, request, context)``: the token in the ``authorization:
Bearer <token>`` metadata is checked before the method runs (UNAUTHENTICATED
when missing, unknown, revoked or expired, saying which; PERMISSION_DENIED
when the call is the admin's).
Streaming methods are checked before their first message too, and again every few
seconds while they are open (arena.server.rechecks).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NoReturn, Protocol, TypeVar

import grpc
import grpc.aio

from arena.store import Principal, Store, TokenRefusedError, authenticate

MAX_DETAILS_CHARS = 1000
"""Refusals echo what was asked for (a name, ...): cut so the status itself always
arrives (gRPC's default limit on received metadata is 16 KiB, and non-ASCII
details travel percent-encoded)."""


class HasStore(Protocol):
    store: Store


S = TypeVar("S", bound=HasStore)
Req = TypeVar("Req")
Resp = TypeVar("Resp")


def cut_details(message: str) -> str:
    """``message`` cut to MAX_DETAILS_CHARS, saying how much was cut."""
    if len(message) > MAX_DETAILS_CHARS:
        cut = len(message) - MAX_DETAILS_CHARS
        message = f"{message[:MAX_DETAILS_CHARS]}... ({cut} more characters cut)"
    return message


def abort(context: grpc.ServicerContext, code: grpc.StatusCode, message: str) -> NoReturn:
    """End the call with ``code`` and ``message`` (cut to MAX_DETAILS_CHARS)."""
    context.abort(code, cut_details(message))
    raise AssertionError("unreachable")  # context.abort raises


def authorization_of(
    context: grpc.ServicerContext | grpc.aio.ServicerContext[Any, Any],
) -> str | None:
    """The call's ``authorization`` metadata as sent (None without one): what a later
    check of the same token reads (``principal_of``, arena.server.rechecks)."""
    values = [v for k, v in context.invocation_metadata() or () if k == "authorization"]
    return str(values[0]) if values else None


def principal_of(store: Store, context: grpc.ServicerContext) -> Principal:
    """The caller named by the call's bearer token (aborts UNAUTHENTICATED otherwise)."""
    values = [v for k, v in context.invocation_metadata() if k == "authorization"]
    if not values:
        abort(context, grpc.StatusCode.UNAUTHENTICATED, "missing 'authorization: Bearer <token>'")
    scheme, _, token = str(values[0]).partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        abort(context, grpc.StatusCode.UNAUTHENTICATED, "authorization must be 'Bearer <token>'")
    try:
        return authenticate(store, token.strip())
    except TokenRefusedError as refused:  # unknown, revoked or expired: it says which
        abort(context, grpc.StatusCode.UNAUTHENTICATED, str(refused))


def authenticated(
    *, admin: bool = False
) -> Callable[
    [Callable[[S, Req, grpc.ServicerContext, Principal], Resp]],
    Callable[[S, Req, grpc.ServicerContext], Resp],
]:
    def wrap(
        method: Callable[[S, Req, grpc.ServicerContext, Principal], Resp],
    ) -> Callable[[S, Req, grpc.ServicerContext], Resp]:
        @functools.wraps(method)
        def call(self: S, request: Req, context: grpc.ServicerContext) -> Resp:
            principal = principal_of(self.store, context)
            if admin and not principal.is_admin:
                abort(context, grpc.StatusCode.PERMISSION_DENIED, "this call needs the admin token")
            return method(self, request, context, principal)

        return call

    return wrap
