"""The admin's rated_play setting: a limit of 0 (off, the default) or 1 (on), for
everyone or one user, over the server's default (``arena serve --limit-rated-play``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.server.quotas import Quotas, UserLimits
from arena.store import Store


def test_rated_play_is_off_by_default_and_set_per_user(tmp_path: Path) -> None:
    with Store.open(tmp_path / "data") as store:
        quotas = Quotas(store)
        try:
            assert quotas.limits_for("ann").rated_play == 0
            quotas.set("rated_play", 1, None)
            quotas.set("rated_play", 0, "mallory")
            assert [quotas.limits_for(u).rated_play for u in ("ann", "mallory")] == [1, 0]
            shown = {s.name: s for s in quotas.in_force("mallory")}["rated_play"]
            assert (shown.value, shown.default, shown.set_for) == (0, 0, "mallory")
            refusal = r"rated_play must be 0 \(off\) or 1 \(on\), got 2"
            with pytest.raises(ValueError, match=refusal):
                quotas.set("rated_play", 2, "ann")
            assert quotas.limits_for("ann").rated_play == 1  # the refused value is not stored
        finally:
            quotas.close()


def test_the_servers_default_may_turn_it_on(tmp_path: Path) -> None:
    with Store.open(tmp_path / "data") as store:
        quotas = Quotas(store, UserLimits(rated_play=1))
        try:
            assert quotas.limits_for("ann").rated_play == 1
        finally:
            quotas.close()
    with pytest.raises(ValueError, match="rated_play"):
        UserLimits(rated_play=3)
