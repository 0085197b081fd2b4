"""Bots and versions: stored copies, content-hash versions, ownership."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.referee.types import BotSpec
from arena.store import (
    NotFoundError,
    NotOwnerError,
    Principal,
    StorageFullError,
    Store,
    StoreError,
    add_bot_version,
    bot_spec,
    case_twin,
    get_bot,
    get_version,
    list_bots,
    require_owner,
)
from arena.store import bots as bots_module
from arena.store.copies import check_stored_copy
from tests.server.test_disk_full import SmallDisk, small_disk

from .conftest import MakeBot


def test_a_bot_is_stored_as_a_copy_and_an_unchanged_bot_is_the_same_version(
    store: Store, make_bot: MakeBot
) -> None:
    spec = make_bot("alpha")
    row, is_new = add_bot_version(store, spec)
    assert is_new and row.version == spec.version and row.games == 0
    stored = bot_spec(store, "alpha")
    assert stored.directory.is_relative_to(store.data_dir)
    assert (stored.directory / "bot.py").read_text() == "print('hello')\n"
    assert stored.command == spec.command and stored.runtime == "python"
    again, is_new_again = add_bot_version(store, make_bot("alpha"))
    assert not is_new_again and again.version == row.version
    assert get_bot(store, "alpha").versions == (row,)


def test_a_changed_bot_is_a_new_version_with_its_own_row(store: Store, make_bot: MakeBot) -> None:
    first, _ = add_bot_version(store, make_bot("alpha"))
    second, is_new = add_bot_version(store, make_bot("alpha", "print('v2')\n"))
    assert is_new and second.version != first.version
    assert [v.version for v in get_bot(store, "alpha").versions] == [first.version, second.version]
    assert get_version(store, "alpha").version == second.version
    assert get_version(store, "alpha", first.version[:6]).version == first.version
    assert (bot_spec(store, "alpha", first.version).directory / "bot.py").read_text() == (
        "print('hello')\n"
    )
    summary = list_bots(store)
    assert [(s.name, s.version_count, s.latest.version) for s in summary] == [
        ("alpha", 2, second.version)
    ]


def test_another_users_bot_name_is_refused_and_nothing_changes(
    store: Store, make_bot: MakeBot
) -> None:
    add_bot_version(store, make_bot("alpha"), owner="ann")
    before = get_bot(store, "alpha")
    with pytest.raises(StoreError, match="belongs to another user"):
        add_bot_version(store, make_bot("alpha", "print('hijack')\n"), owner="bob")
    assert get_bot(store, "alpha") == before
    assert len(list((store.bots_dir / "alpha").iterdir())) == 1


@pytest.mark.parametrize(
    ("first_owner", "twin_owner"),
    [("ann", "bob"), ("ann", "ann"), (None, "bob"), ("ann", None)],
    ids=["another-user", "the-same-user", "after-the-admin", "the-admin-after"],
)  # fmt: skip
def test_a_name_one_case_apart_from_a_stored_bot_is_refused_and_nothing_is_stored(
    store: Store, make_bot: MakeBot, first_owner: str | None, twin_owner: str | None
) -> None:
    """On a leaderboard ``AliceBot`` and ``alicebot`` pass for one bot: whoever asks, the
    second name is refused, naming the first; the first takes new versions as before."""
    add_bot_version(store, make_bot("alicebot"), owner=first_owner)
    with pytest.raises(StoreError, match="'AliceBot' differs only in case from the stored bot"
                       " 'alicebot'"):  # fmt: skip
        add_bot_version(store, make_bot("AliceBot"), owner=twin_owner)
    assert [bot.name for bot in list_bots(store)] == ["alicebot"]
    assert not (store.bots_dir / "AliceBot").exists()
    assert case_twin(store, "ALICEBOT") == "alicebot" and case_twin(store, "alicebot") is None
    _, is_new = add_bot_version(store, make_bot("alicebot", "print('v2')\n"), owner=first_owner)
    assert is_new


def test_an_owner_less_add_onto_a_users_bot_is_refused_naming_the_owner(
    store: Store, make_bot: MakeBot
) -> None:
    add_bot_version(store, make_bot("python_random", "print('squat')\n"), owner="mallory")
    before = get_bot(store, "python_random")
    with pytest.raises(NotOwnerError, match="belongs to user 'mallory'"):
        add_bot_version(store, make_bot("python_random", "print('the real one')\n"))
    assert get_bot(store, "python_random") == before


def test_a_user_cannot_add_to_an_owner_less_bot(store: Store, make_bot: MakeBot) -> None:
    add_bot_version(store, make_bot("house"))
    with pytest.raises(NotOwnerError, match="belongs to another user"):
        add_bot_version(store, make_bot("house", "print('mine now')\n"), owner="mallory")
    assert get_bot(store, "house").owner is None


@pytest.mark.parametrize("owner", ["", "../x", "a b", "x" * 41], ids=["empty", "dotdot", "space",
                                                                   "too-long"])  # fmt: skip
def test_an_owner_no_user_can_be_named_is_refused_and_nothing_is_stored(
    store: Store, make_bot: MakeBot, owner: str
) -> None:
    with pytest.raises(StoreError, match=r"owner .*: use 1-40 letters"):
        add_bot_version(store, make_bot("alpha"), owner=owner)
    assert list_bots(store) == [] and not (store.bots_dir / "alpha").exists()


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("data-dir-inside", "holds the arena data directory"),
        ("fifo", r"cannot store a copy of .*pipe.*named pipe"),
    ],
)
def test_a_bot_that_cannot_be_copied_is_refused_and_nothing_is_stored(
    make_bot: MakeBot, tmp_path: Path, case: str, message: str
) -> None:
    spec = make_bot("alpha")
    data = spec.directory / "data" if case == "data-dir-inside" else tmp_path / "data"
    if case == "fifo":
        os.mkfifo(spec.directory / "pipe")
    with Store.open(data) as store:
        with pytest.raises(StoreError, match=message):
            add_bot_version(store, spec)
        assert list_bots(store) == []
        assert list(store.bots_dir.glob("alpha/*")) == []  # no half copy left


def test_a_half_copy_a_killed_process_left_is_removed_by_the_next_add(
    store: Store, make_bot: MakeBot
) -> None:
    """A process killed mid-copy (kill -9, the OOM killer) leaves its staging directory:
    the next version stored removes it, whichever bot's it was; stored versions stay."""
    first, _ = add_bot_version(store, make_bot("alpha"))
    for bot in ("alpha", "never-stored"):  # a new bot's first add killed: its only trace
        left = store.bots_dir / bot / ".incoming-k1ll3d"
        (left / "files").mkdir(parents=True)
        (left / "files" / "bot.py").write_bytes(b"\0" * 4096)
    second, _ = add_bot_version(store, make_bot("alpha", "print('v2')\n"))
    assert sorted(p.name for p in (store.bots_dir / "alpha").iterdir()) == sorted(
        [first.version, second.version]
    )
    assert list((store.bots_dir / "never-stored").iterdir()) == []
    assert (bot_spec(store, "alpha", first.version).directory / "bot.py").is_file()


@pytest.mark.parametrize(
    ("name", "version"), [("ghost", None), ("alpha", "ffff")], ids=["no-bot", "no-version"]
)
def test_missing_bots_and_versions_are_named(
    store: Store, make_bot: MakeBot, name: str, version: str | None
) -> None:
    add_bot_version(store, make_bot("alpha"))
    with pytest.raises(NotFoundError, match=name):
        get_version(store, name, version)


def test_a_version_prefix_is_matched_literally(store: Store, make_bot: MakeBot) -> None:
    add_bot_version(store, make_bot("alpha"))
    with pytest.raises(NotFoundError):
        get_version(store, "alpha", "%")


def test_another_users_bot_is_a_not_owner_error(store: Store, make_bot: MakeBot) -> None:
    add_bot_version(store, make_bot("mine"), owner="ann")
    with pytest.raises(NotOwnerError, match="bot 'mine' belongs to another user"):
        add_bot_version(store, make_bot("mine", "print('changed')\n"), owner="bob")
    require_owner(store, Principal("ann", "user"), "mine")
    require_owner(store, Principal("root", "admin"), "mine")
    with pytest.raises(NotOwnerError):
        require_owner(store, Principal("bob", "user"), "mine")
    require_owner(store, Principal("bob", "user"), "new-bot", missing_ok=True)


def _fill_after_the_copy(disk: SmallDisk, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills between an add's copy and its commit (another writer, logs): the
    copy lands, the commit meets ENOSPC."""
    copy = bots_module._copy_files

    def copy_then_fill(source: Path, target: Path) -> None:
        copy(source, target)
        disk.fill()

    monkeypatch.setattr(bots_module, "_copy_files", copy_then_fill)


def _another_add_before_the_cleanup(
    disk: SmallDisk, monkeypatch: pytest.MonkeyPatch, spec: BotSpec
) -> None:
    """As above, and another process adds the same version once the failed add has let
    go of the store's lock, before it removes its copy: that process's copy must stay."""
    _fill_after_the_copy(disk, monkeypatch)
    drop = bots_module._drop_uncommitted_copy

    def other_add_first(store: Store, target: Path) -> None:
        monkeypatch.undo()  # the other process's add copies as usual
        disk.free()
        with Store.open(store.data_dir) as other:
            add_bot_version(other, spec)
        drop(store, target)

    monkeypatch.setattr(bots_module, "_drop_uncommitted_copy", other_add_first)


FULL_AT_THE_COMMIT = [
    # (case, what happens around the add of "beta", is beta stored afterwards)
    ("the disk fills between the copy and the commit", "fill", False),
    ("another add of the version commits before the cleanup", "race", True),
]


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
@pytest.mark.parametrize(
    ("what", "stored"), [c[1:] for c in FULL_AT_THE_COMMIT], ids=[c[0] for c in FULL_AT_THE_COMMIT]
)
def test_an_add_whose_commit_meets_a_full_disk_leaves_no_copy_and_loses_nothing(
    tmp_path: Path, make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch, what: str, stored: bool
) -> None:
    """`arena bot add` (and SubmitBot) on a nearly full disk: the copy fits, the commit
    does not. Nothing is stored, no copy of the refused version is left holding the space
    until the next add of that version, the stored bots keep their rows and files, and
    the same add works once there is space; a copy another add committed is kept."""
    alpha, beta = make_bot("alpha"), make_bot("beta", "print('beta')\n" * 2_000)
    with small_disk(tmp_path / "small") as disk, Store.open(disk.root / "data") as store:
        kept, _ = add_bot_version(store, alpha)
        if what == "fill":
            _fill_after_the_copy(disk, monkeypatch)
        else:
            _another_add_before_the_cleanup(disk, monkeypatch, beta)
        with pytest.raises(StorageFullError):
            add_bot_version(store, beta)
        monkeypatch.undo()
        left = sorted(str(p.relative_to(store.bots_dir)) for p in store.bots_dir.rglob("*"))
        if stored:
            version = get_version(store, "beta").version
            assert f"beta/{version}/bot.py" in left, left
            check_stored_copy(bot_spec(store, "beta"))
        else:
            assert not any(p.startswith("beta") for p in left), f"left behind: {left}"
            assert [b.name for b in list_bots(store)] == ["alpha"]
        assert get_version(store, "alpha") == kept
        check_stored_copy(bot_spec(store, "alpha"))  # its files hash to its version
        if disk.filler.exists():
            disk.free()
        again, new = add_bot_version(store, beta)
        assert new is not stored
        check_stored_copy(bot_spec(store, "beta", again.version))
