"""The data directory's spectator delay: what a server stores, what an export must keep."""

from __future__ import annotations

import pytest

from arena.server.quotas import Quotas
from arena.store import Store
from arena.store.limits import stored_limits
from arena.store.served_delay import (
    ServedDelay,
    ShorterDelayError,
    export_delay,
    next_served,
    serve_with_delay,
    served_delay,
)

NOW = 1_000_000.0
REFUSED = "refused"


@pytest.mark.parametrize(
    ("asked", "stored", "allow", "expected"),
    [
        (None, ServedDelay(), False, 0.0),
        (None, ServedDelay(3600), False, 3600.0),
        (7200.0, ServedDelay(3600), False, 7200.0),
        (3600.0, ServedDelay(3600), False, 3600.0),
        (0.0, ServedDelay(3600), False, REFUSED),
        (3599.9, ServedDelay(3600), False, REFUSED),
        (0.0, ServedDelay(3600), True, 0.0),
        (None, ServedDelay(0, 3600, NOW + 10), False, 3600.0),
        (None, ServedDelay(60, 3600, NOW), False, 60.0),
        (60.0, ServedDelay(60, 3600, NOW + 10), False, REFUSED),
        (0.0, ServedDelay(0.0005), False, REFUSED),
        (0.0005, ServedDelay(0.0005), False, 0.0005),
    ],
    ids=["none-stored", "the-stored-delay", "longer-asked", "same-asked", "shorter-refused",
         "a-little-shorter-refused", "shorter-allowed", "held-longer-delay",
         "held-delay-ran-out", "shorter-than-held-refused", "under-a-ms-refused",
         "under-a-ms-same"],
)  # fmt: skip
def test_export_delay(
    asked: float | None, stored: ServedDelay, allow: bool, expected: float | str
) -> None:
    if expected == REFUSED:
        with pytest.raises(ShorterDelayError, match="shorter than this data directory's"):
            export_delay(asked, stored, NOW, allow_shorter=allow)
    else:
        assert export_delay(asked, stored, NOW, allow_shorter=allow) == expected


@pytest.mark.parametrize(
    ("asked", "stored", "allow", "expected"),
    [
        (None, ServedDelay(), False, ServedDelay()),
        (3600.0, ServedDelay(), False, ServedDelay(3600)),
        (None, ServedDelay(3600), False, ServedDelay(3600)),
        (7200.0, ServedDelay(3600), False, ServedDelay(7200)),
        (0.0, ServedDelay(3600), False, REFUSED),
        (0.0, ServedDelay(3600), True, ServedDelay(0, 3600, NOW + 3600)),
        (60.0, ServedDelay(0, 3600, NOW + 10), False, ServedDelay(60, 3600, NOW + 10)),
        (7200.0, ServedDelay(0, 3600, NOW + 10), False, ServedDelay(7200)),
        (0.0, ServedDelay(0, 3600, NOW), False, ServedDelay(0)),
        (0.0, ServedDelay(60, 3600, NOW + 10), True, ServedDelay(0, 3600, NOW + 60)),
    ],
    ids=["nothing-stored", "first-delay", "restart-keeps-it", "longer", "shorter-refused",
         "shorter-allowed-holds-the-old", "hold-kept", "longer-than-the-hold",
         "hold-ran-out", "two-holds-merged"],
)  # fmt: skip
def test_next_served(
    asked: float | None, stored: ServedDelay, allow: bool, expected: ServedDelay | str
) -> None:
    if expected == REFUSED:
        with pytest.raises(ShorterDelayError, match="give --allow-shorter-delay"):
            next_served(asked, stored, NOW, allow_shorter=allow)
    else:
        assert next_served(asked, stored, NOW, allow_shorter=allow) == expected


def test_a_lowered_delay_keeps_exports_out_of_the_old_one_until_it_has_passed() -> None:
    lowered = next_served(0.0, ServedDelay(3600), NOW, allow_shorter=True)
    assert export_delay(None, lowered, NOW + 3599) == 3600
    assert export_delay(None, lowered, NOW + 3600) == 0


def test_the_delay_is_stored_and_read_back(store: Store) -> None:
    assert served_delay(store) == ServedDelay()
    assert serve_with_delay(store, 2.5, now=NOW) == 2.5
    assert served_delay(store) == ServedDelay(2.5)
    assert serve_with_delay(store, None, now=NOW) == 2.5
    with pytest.raises(ShorterDelayError, match=r"delay of 2\.5 seconds"):
        serve_with_delay(store, 1.0, now=NOW)
    assert served_delay(store) == ServedDelay(2.5)  # a refusal stores nothing
    assert serve_with_delay(store, 1.0, allow_shorter=True, now=NOW) == 1.0
    assert served_delay(store) == ServedDelay(1.0, 2.5, NOW + 2.5)


def test_the_stored_delay_is_no_user_limit(store: Store) -> None:
    serve_with_delay(store, 3600.0)
    assert [row.name for row in stored_limits(store, "alice")] == []
    shown = Quotas(store).in_force(None)
    assert all(row.name != "spectator_delay_ms" for row in shown)
