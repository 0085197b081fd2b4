"""A damaged database file met by an open store: one error naming the file, and from
then on nothing written to it (a write beside a damaged page may spread the damage)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.store import (
    DamagedDatabaseError,
    Store,
    create_token,
    damaged_line,
    list_bots,
    list_tokens,
)
from tests.store.damage import damage_tables


def _files(data: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(data.glob("arena.db*"))}


@pytest.mark.parametrize("damaged", [True, False], ids=["bots damaged", "control"])
def test_a_read_that_meets_damage_names_the_file_and_nothing_more_is_written(
    tmp_path: Path, damaged: bool
) -> None:
    data = tmp_path / "data"
    with Store.open(data) as store:
        create_token(store, "alice")
    if damaged:
        damage_tables(data, "bots")
    with Store.open(data) as store:
        if not damaged:
            assert list_bots(store) == []
            create_token(store, "bob")
            assert len(list_tokens(store)) == 2
            return
        with pytest.raises(DamagedDatabaseError) as met:
            list_bots(store)
        database = data.resolve() / "arena.db"
        assert str(met.value) == damaged_line(database, "database disk image is malformed")
        assert str(met.value).startswith(f"{database}: the database is damaged (")
        assert met.value.stopped("the ladder").endswith(
            "; the ladder stopped there: restore the file from a backup"
        )
        before = _files(data)
        with pytest.raises(DamagedDatabaseError):  # the tokens' pages are whole: refused anyway
            create_token(store, "bob")
        assert _files(data) == before
        assert [t.user for t in list_tokens(store)] == ["alice"]  # whole pages are still read
        with pytest.raises(DamagedDatabaseError):  # and the damaged ones still refused
            list_bots(store)
