"""Bot bundles and the node-local cache: unpacked once, checked by hash before every use."""

from __future__ import annotations

import io
import os
import shutil
import stat
import tarfile
from pathlib import Path

import pytest

from arena.referee.botdir import content_hash
from arena.tournament.execution.bot_bundles import (
    BundleError,
    CacheError,
    cached_bot,
    checked_members,
    pack,
)

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_bots" / "python_random"


@pytest.fixture()
def bot(tmp_path: Path) -> tuple[Path, str]:
    source = tmp_path / "bot"
    shutil.copytree(SAMPLE, source, ignore=shutil.ignore_patterns("__pycache__"))
    os.symlink("bot.py", source / "link.py")
    return source, content_hash(source)


class Fetches:
    def __init__(self, bundle: bytes) -> None:
        self.bundle = bundle
        self.count = 0

    def __call__(self) -> bytes:
        self.count += 1
        return self.bundle


def test_a_version_is_unpacked_once_then_reused(tmp_path: Path, bot: tuple[Path, str]) -> None:
    source, version = bot
    fetch = Fetches(pack(source))
    first = cached_bot(version, fetch, tmp_path / "cache")
    again = cached_bot(version, fetch, tmp_path / "cache")
    assert first == again == tmp_path / "cache" / version
    assert fetch.count == 1, "a cached version was fetched again"
    assert content_hash(first) == version
    assert os.readlink(first / "link.py") == "bot.py"
    assert stat.S_IMODE(first.stat().st_mode) == 0o755  # the sandbox's user reads it
    assert stat.S_IMODE((first / "bot.py").stat().st_mode) & 0o004


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: (d / "bot.py").write_text("raise SystemExit(1)\n"),
        lambda d: (d / "bot.py").unlink(),
        lambda d: (d / "extra.py").write_text("x = 1\n"),
        lambda d: (d / "bot.toml").chmod(0o644) or (d / "bot.toml").write_bytes(b""),
    ],
    ids=["changed", "removed", "added", "emptied"],
)
def test_a_corrupted_cache_is_found_by_its_hash_and_refetched(
    tmp_path: Path, bot: tuple[Path, str], damage: object
) -> None:
    source, version = bot
    fetch = Fetches(pack(source))
    directory = cached_bot(version, fetch, tmp_path / "cache")
    damage(directory)  # type: ignore[operator]
    assert content_hash(directory) != version  # control: the damage shows in the hash
    repaired = cached_bot(version, fetch, tmp_path / "cache")
    assert content_hash(repaired) == version
    assert fetch.count == 2


def test_a_bundle_of_other_files_is_refused(tmp_path: Path, bot: tuple[Path, str]) -> None:
    source, version = bot
    other = tmp_path / "other"
    shutil.copytree(source, other, symlinks=True)
    (other / "bot.py").write_text("# another bot\n")
    with pytest.raises(BundleError, match=f"bundle of bot version {version} hashes to"):
        cached_bot(version, Fetches(pack(other)), tmp_path / "cache")
    assert not (tmp_path / "cache" / version).exists()
    assert [p.name for p in (tmp_path / "cache").iterdir() if not p.name.endswith(".lock")] == []


def test_the_bundle_leaves_out_compiled_python(tmp_path: Path, bot: tuple[Path, str]) -> None:
    source, version = bot
    (source / "__pycache__").mkdir()
    (source / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"\0" * 10)
    assert content_hash(source) == version  # the version ignores them too
    directory = cached_bot(version, Fetches(pack(source)), tmp_path / "cache")
    assert not (directory / "__pycache__").exists()


def _tar_with(*members: tarfile.TarInfo) -> tarfile.TarFile:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for member in members:
            tar.addfile(member, io.BytesIO(b"") if member.isfile() else None)
    buffer.seek(0)
    return tarfile.open(fileobj=buffer, mode="r")


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type, member.linkname = kind, link
    return member


@pytest.mark.parametrize(
    "member",
    [
        _member("../evil.py"),
        _member("/etc/evil.py"),
        _member("lib/../../evil.py"),
        _member("link.py", tarfile.SYMTYPE, "../../etc/passwd"),
        _member("lib/link.py", tarfile.SYMTYPE, "../../x"),
        _member("link.py", tarfile.SYMTYPE, "/etc/passwd"),
        _member("hard.py", tarfile.LNKTYPE, "../bot.py"),
        _member("fifo", tarfile.FIFOTYPE),
        _member("dev", tarfile.CHRTYPE),
    ],
    ids=lambda m: f"{m.name}->{m.linkname}" if m.linkname else m.name,
)
def test_without_extraction_filters_a_member_leaving_the_directory_is_refused(
    member: tarfile.TarInfo,
) -> None:
    """The check used where Python has no extraction filters (Debian 12's 3.11.2)."""
    with pytest.raises(BundleError, match="bundle"):
        checked_members(_tar_with(member))


def test_without_extraction_filters_a_real_bundle_passes(bot: tuple[Path, str]) -> None:
    source, _version = bot
    with tarfile.open(fileobj=io.BytesIO(pack(source)), mode="r") as tar:
        names = {member.name for member in checked_members(tar)}
    assert {"bot.py", "bot.toml", "link.py"} <= names  # the symlink inside: kept
    inside = _tar_with(
        _member("lib", tarfile.DIRTYPE),
        _member("lib/l.py", tarfile.SYMTYPE, "../bot.py"),
        _member("hard.py", tarfile.LNKTYPE, "bot.py"),
    )
    assert len(checked_members(inside)) == 3


# ----------------------------------------------------------- a planted cache

NOBODY = 65534


def _other_owner(root: Path, victim: Path) -> None:
    root.mkdir(mode=0o755)
    os.chown(root, NOBODY, NOBODY)


def _mode(mode: int) -> object:
    def plant(root: Path, victim: Path) -> None:
        root.mkdir()
        os.chmod(root, mode)

    return plant


def _link_to_own_directory(root: Path, victim: Path) -> None:
    elsewhere = root.parent / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    root.symlink_to(elsewhere)


def _a_file(root: Path, victim: Path) -> None:
    root.write_text("")


PLANTED = [
    # (case, plant(root, victim), words of the refusal)
    ("owned by another user", _other_owner, "is owned by uid 65534"),
    ("group-writable", _mode(0o775), "writable by other users (mode 0775)"),
    ("world-writable", _mode(0o777), "writable by other users (mode 0777)"),
    ("world-writable and sticky, as /tmp", _mode(0o1777), "writable by other users (mode 1777)"),
    ("a symbolic link", _link_to_own_directory, "is a symbolic link"),
    ("not a directory", _a_file, "is not a directory"),
]  # fmt: skip


@pytest.mark.parametrize(("plant", "words"), [c[1:] for c in PLANTED], ids=[c[0] for c in PLANTED])
def test_a_cache_someone_else_could_write_is_refused_naming_it_and_the_fix(
    tmp_path: Path, bot: tuple[Path, str], plant: object, words: str
) -> None:
    if words.startswith("is owned") and os.geteuid() != 0:
        pytest.skip("giving a directory to another user needs root")
    source, version = bot
    root = tmp_path / "cache"
    plant(root, tmp_path / "victim")  # type: ignore[operator]
    fetch = Fetches(pack(source))
    with pytest.raises(CacheError) as refused:
        cached_bot(version, fetch, root)
    message = str(refused.value)
    assert words in message and str(root) in message, message
    assert f"rm -rf {root}" in message and "--cache" in message, message
    assert fetch.count == 0, "a bundle was unpacked into a planted cache"
    assert not (root / version).exists() or root.is_symlink()


def test_a_lock_file_planted_as_a_link_is_refused_and_its_target_left_whole(
    tmp_path: Path, bot: tuple[Path, str]
) -> None:
    source, version = bot
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    victim = tmp_path / "shadow"
    victim.write_text("root:x:0:0\n")
    (root / f".{version}.lock").symlink_to(victim)
    fetch = Fetches(pack(source))
    with pytest.raises(CacheError, match="is a symbolic link"):
        cached_bot(version, fetch, root)
    assert victim.read_text() == "root:x:0:0\n", "the lock's link was followed and truncated"
    assert fetch.count == 0


def test_a_version_planted_as_a_link_to_matching_files_is_replaced_by_its_own_copy(
    tmp_path: Path, bot: tuple[Path, str]
) -> None:
    # A link to a directory that hashes right today could be changed after the check:
    # the cache keeps only directories of its own.
    source, version = bot
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(source, elsewhere, symlinks=True)
    assert content_hash(elsewhere) == version  # control: the planted files hash right
    (root / version).symlink_to(elsewhere)
    fetch = Fetches(pack(source))
    directory = cached_bot(version, fetch, root)
    assert not directory.is_symlink() and directory.is_dir()
    assert content_hash(directory) == version and fetch.count == 1


@pytest.mark.parametrize("existing", [None, 0o755, 0o700], ids=["made", "0755", "0700"])
def test_the_cache_is_the_node_users_alone(
    tmp_path: Path, bot: tuple[Path, str], existing: int | None
) -> None:
    source, version = bot
    root = tmp_path / "cache"
    if existing is not None:
        root.mkdir()
        os.chmod(root, existing)
    cached_bot(version, Fetches(pack(source)), root)
    info = root.lstat()
    assert (stat.S_IMODE(info.st_mode), info.st_uid) == (0o700, os.geteuid())
    assert stat.S_IMODE((root / f".{version}.lock").stat().st_mode) == 0o600


@pytest.mark.parametrize("version", ["", "..", ".x", "a/b"])
def test_a_version_that_is_not_a_name_in_the_cache_is_refused(
    tmp_path: Path, bot: tuple[Path, str], version: str
) -> None:
    source, _ = bot
    with pytest.raises(BundleError, match="is not a content hash"):
        cached_bot(version, Fetches(pack(source)), tmp_path / "cache")
