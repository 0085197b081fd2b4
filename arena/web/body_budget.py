"""The room the web server gives request bodies being received, shared fairly.

A body is held in memory from its first byte to its answer, and a client sends
it at the pace it likes (up to the body deadline), so bodies in flight are
capped in all. Within that cap nobody may take everything: bodies sent without
a valid token (anyone's record at /replay) hold at most their share, so that a
crowd of strangers cannot keep a participant's submission out, and each
participant at most theirs, so that one participant cannot keep out the others.
A refusal names the limit that was reached.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

ANYONE = ""  # the holder of a body sent without a valid token


@dataclass(frozen=True)
class BodyShares:
    """How many bytes of bodies may be held at once: in all, without a token, per user."""

    in_all: int
    anyone: int
    per_user: int

    def __post_init__(self) -> None:
        if min(self.in_all, self.anyone, self.per_user) <= 0:  # a share above in_all never binds
            raise ValueError(
                f"body shares must be positive: {self.in_all} bytes in all, {self.anyone}"
                f" without a token, {self.per_user} per user"
            )


@dataclass(frozen=True)
class Reservation:
    holder: str  # a user's name, or ANYONE
    length: int


class BodyBudget:
    """Bytes of request bodies held now, in all and by holder (thread-safe)."""

    def __init__(self, shares: BodyShares) -> None:
        self.shares = shares
        self._lock = threading.Lock()
        self.held = 0
        self._by_holder: dict[str, int] = {}

    def held_by(self, holder: str) -> int:
        with self._lock:
            return self._by_holder.get(holder, 0)

    def reserve(self, holder: str, length: int) -> Reservation | str:
        """Room for ``length`` bytes held by ``holder``, or the reached limit in words."""
        shares = self.shares
        with self._lock:
            mine = self._by_holder.get(holder, 0)
            if self.held + length > shares.in_all:
                return f"request bodies of {shares.in_all} bytes in all (the limit) are being" \
                    " received"
            if holder == ANYONE and mine + length > shares.anyone:
                return (f"request bodies sent without a token, {shares.anyone} bytes (their"
                        " limit), are being received (a participant's token has room of its"
                        " own)")  # fmt: skip
            if holder != ANYONE and mine + length > shares.per_user:
                return (f"your request bodies of {shares.per_user} bytes (the limit per user) are"
                        " being received")  # fmt: skip
            self.held += length
            self._by_holder[holder] = mine + length
            return Reservation(holder, length)

    def release(self, reservation: Reservation) -> None:
        with self._lock:
            self.held -= reservation.length
            left = self._by_holder[reservation.holder] - reservation.length
            if left:
                self._by_holder[reservation.holder] = left
            else:
                del self._by_holder[reservation.holder]
