"""Seat offers for remote bots, from the tournament runner to the owners' connectors.

The runner stores each offer (the token's hash only) and then hands the
offer and its token to ``SeatHub.publish``. The hub keeps the tokens of open
offers in memory only, for the ``WaitForSeats`` streams of the bot's owner:
a connector that subscribes gets the offers still open, then each new one.
Offers the store says are taken, withdrawn or expired are forgotten.

The hub also remembers which bearer tokens each seat token was handed to
(``hand``): the gateway refuses a Hello, and ends a seat's game, once one of them
is revoked or expires (a seat token seen by a dead credential is not trusted).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

from arena.server.offloop import LoopInbox
from arena.store import SeatOfferRow, Store, open_seat_offers
from arena.store.remote import now_ms


@dataclass(frozen=True, slots=True)
class PublishedSeat:
    offer: SeatOfferRow
    token: str


@dataclass
class SeatHub:
    store: Store
    lock: threading.Lock = field(default_factory=threading.Lock)
    seats: dict[int, PublishedSeat] = field(default_factory=dict)  # by offer id
    waiting: dict[str, list[LoopInbox[PublishedSeat]]] = field(default_factory=dict)
    handed: dict[str, set[str | None]] = field(default_factory=dict)
    """By seat token: the ``authorization`` values of the WaitForSeats streams it went to."""

    def publish(self, offer: SeatOfferRow, token: str) -> None:
        """A stored offer is open: tell the bot's connectors (called by the runner)."""
        seat = PublishedSeat(offer, token)
        with self.lock:
            expired = [i for i, s in self.seats.items() if s.offer.expires_at_ms < now_ms()]
            for offer_id in expired:  # no Hello can use them any more
                self.handed.pop(self.seats.pop(offer_id).token, None)
            self.seats[offer.id] = seat
            inboxes = list(self.waiting.get(offer.bot, []))
        for inbox in inboxes:
            inbox.put(seat)

    def subscribe(self, bot: str, loop: asyncio.AbstractEventLoop) -> LoopInbox[PublishedSeat]:
        """A new inbox on ``loop`` for ``bot``'s offers from now on (then ask ``open_seats``)."""
        inbox: LoopInbox[PublishedSeat] = LoopInbox(loop)
        with self.lock:
            self.waiting.setdefault(bot, []).append(inbox)
        return inbox

    def unsubscribe(self, bot: str, inbox: LoopInbox[PublishedSeat]) -> None:
        with self.lock:
            inboxes = self.waiting.get(bot, [])
            if inbox in inboxes:
                inboxes.remove(inbox)
            if not inboxes:
                self.waiting.pop(bot, None)

    def open_seats(self, bot: str) -> list[PublishedSeat]:
        """``bot``'s offers that the store still has open (forgetting the others).

        Reads the store: call it off the event loop (arena.server.offloop).
        """
        still_open = {offer.id for offer in open_seat_offers(self.store, bot=bot)}
        with self.lock:
            for offer_id, seat in list(self.seats.items()):
                if seat.offer.bot == bot and offer_id not in still_open:
                    del self.seats[offer_id]
                    self.handed.pop(seat.token, None)
            return sorted(
                (s for s in self.seats.values() if s.offer.bot == bot), key=lambda s: s.offer.id
            )

    def hand(self, seat: PublishedSeat, authorization: str | None) -> None:
        """``seat``'s token is about to go to the stream of ``authorization`` (its bearer
        token): from now on, that token dying ends the seat (``holders``)."""
        with self.lock:
            self.handed.setdefault(seat.token, set()).add(authorization)

    def holders(self, token: str, *, forget: bool = False) -> frozenset[str | None]:
        """The bearer tokens seat token ``token`` was handed to (``forget``: and forget
        them, the seat being taken: its Play stream keeps them)."""
        with self.lock:
            held = self.handed.pop(token, set()) if forget else self.handed.get(token, set())
            return frozenset(held)
