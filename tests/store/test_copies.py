"""A stored bot version's copy is checked against its version before it plays."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from arena.store import Store, add_bot_version, bot_spec, copies
from arena.store.copies import MissingBotCopyError, check_stored_copy
from tests.store.conftest import MakeBot


def _unreadable(directory: Path) -> None:
    raise PermissionError(13, "Permission denied", str(directory / "bot.py"))


# (case, what is done to the stored copy, what the refusal says after "version V ").
STORED_COPY = [
    ("in place", lambda copy: None, None),
    ("missing", lambda copy: shutil.rmtree(copy), "is missing from {copy}"),
    ("changed", lambda copy: (copy / "bot.py").write_text("pass\n"),
     "in {copy} has changed since it was stored (its files hash to "),
    ("an extra file", lambda copy: (copy / "cache.bin").write_bytes(b"\0"),
     "in {copy} has changed since it was stored"),
    ("unreadable", "unreadable", "in {copy} cannot be read ({copy}/bot.py: Permission denied)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("damage", "problem"), [case[1:] for case in STORED_COPY], ids=[c[0] for c in STORED_COPY]
)
def test_a_stored_copy_is_checked_against_its_version_before_it_plays(
    store: Store, make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch, damage: Any,
    problem: str | None,
) -> None:  # fmt: skip
    add_bot_version(store, make_bot("r1"))
    spec = bot_spec(store, "r1")
    if damage == "unreadable":
        monkeypatch.setattr(copies, "content_hash", _unreadable)
    else:
        damage(spec.directory)
    if problem is None:
        check_stored_copy(spec)
        return
    with pytest.raises(MissingBotCopyError) as refused:
        check_stored_copy(spec)
    assert refused.value.problem.startswith(problem.format(copy=spec.directory))
    assert str(refused.value).endswith("restore the data directory's bots/ from a backup,"
                                       " then resume")  # fmt: skip
