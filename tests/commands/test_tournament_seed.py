"""`arena tournament create --seed`: the same seed, bots and name give the same secret (so
the same commitment and deals) in any data directory; without it, a fresh one each time."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena import store as st
from arena.cli import main
from arena.testing.demo_data import add_demo_bots

BOTS = ("alpha", "beta")


def _create(tmp_path: Path, data: str, *flags: str, other_bots: bool = False) -> bytes:
    with st.Store.open(tmp_path / data) as store:
        if other_bots:  # other version ids first
            add_demo_bots(store, tmp_path / "others", ("zeta", "eta"))
        add_demo_bots(store, tmp_path / "bots", BOTS)
    status = main(["tournament", "create", "cup", *BOTS, "--data-dir", str(tmp_path / data),
                   *flags])  # fmt: skip
    assert status == 0
    with st.Store.open(tmp_path / data) as store:
        tournament = st.get_tournament(store, "cup")
        assert tournament.commitment is not None
        return st.tournament_secret(store, tournament.id)


def test_the_same_seed_gives_the_same_secret_in_any_data_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seeded = _create(tmp_path, "a", "--seed", "5")
    assert _create(tmp_path, "b", "--seed", "5", other_bots=True) == seeded
    assert _create(tmp_path, "c", "--seed", "6") != seeded
    assert _create(tmp_path, "d") != _create(tmp_path, "e") != seeded
