"""The gateway's pure parts: the record's words for a seat it cut, and who a seat token
went to (the end-to-end paths run against a real server in test_remote_bots.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.server.gateway import cut_reason
from arena.server.seats import PublishedSeat, SeatHub
from arena.store import SeatOfferRow, Store

CUTS = [
    # (case, the token's refusal, the record's words)
    ("revoked", "token revoked at 2026-01-01T00:00:00.000+00:00 (ask the admin for a new one)",
     "the token its owner obtained the seat with was revoked"),
    ("expired", "token expired at 2026-01-01T00:00:00.000+00:00 (ask the admin for a new one)",
     "the token its owner obtained the seat with was expired"),
    ("unknown", "unknown token", "the token its owner obtained the seat with is no longer valid"),
]  # fmt: skip


@pytest.mark.parametrize(("refusal", "words"), [c[1:] for c in CUTS], ids=[c[0] for c in CUTS])
def test_the_record_says_how_the_seats_token_died_without_a_date(refusal: str, words: str) -> None:
    assert cut_reason(refusal) == words


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[SeatHub]:
    store = Store.open(tmp_path / "data")
    yield SeatHub(store)
    store.close()


def _seat(offer_id: int, token: str, expires_at_ms: int = 2**62) -> PublishedSeat:
    offer = SeatOfferRow(
        id=offer_id, bot="far", version="v", owner="alice", match_id=None, referee_match="m",
        slot=0, socket_path="/nonexistent.sock", created_at="", expires_at_ms=expires_at_ms,
        state="open",
    )  # fmt: skip
    return PublishedSeat(offer, token)


def test_a_seat_token_remembers_every_stream_it_went_to_until_taken(hub: SeatHub) -> None:
    seat = _seat(1, "seat-one")
    hub.publish(seat.offer, seat.token)
    hub.hand(seat, "Bearer a")
    hub.hand(seat, "Bearer b")
    hub.hand(seat, "Bearer a")
    assert hub.holders("seat-one") == {"Bearer a", "Bearer b"}
    assert hub.holders("seat-two") == frozenset()
    assert hub.holders("seat-one", forget=True) == {"Bearer a", "Bearer b"}
    assert hub.holders("seat-one") == frozenset()


def test_an_expired_seat_forgets_who_it_went_to(hub: SeatHub) -> None:
    old = _seat(1, "old", expires_at_ms=1)
    hub.publish(old.offer, old.token)
    hub.hand(old, "Bearer a")
    new = _seat(2, "new")
    hub.publish(new.offer, new.token)
    assert hub.holders("old") == frozenset()
