"""Immutable values read from protobuf messages, each distinct message read once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar


class _Serialisable(Protocol):
    def SerializeToString(self) -> bytes: ...  # protobuf spells it so


M = TypeVar("M", bound=_Serialisable)
T = TypeVar("T")

LIMIT = 4096
"""A game has a few hundred distinct actions and events; a memo stops growing here."""


class MessageMemo(Generic[M, T]):
    """``read(message)``, kept by the message's bytes: a request repeats the same few
    dozen actions and history events over and over, and what they read to is immutable."""

    def __init__(self, read: Callable[[M], T], limit: int = LIMIT) -> None:
        self._read = read
        self._limit = limit
        self._seen: dict[bytes, T] = {}

    def __call__(self, message: M) -> T:
        key = message.SerializeToString()
        value = self._seen.get(key)
        if value is None:
            value = self._read(message)
            if len(self._seen) < self._limit:
                self._seen[key] = value
        return value

    def __len__(self) -> int:
        return len(self._seen)
