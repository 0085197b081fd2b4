"""Bot archives: what is accepted, and that refusals write nothing."""

from __future__ import annotations

import gzip
import io
import os
import re
import stat
import subprocess
import tarfile
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest

from arena.bots.archive import (
    ArchiveError,
    ArchiveTooLargeError,
    check_bot_directory,
    check_tar_headers,
    detect_format,
    remove_stale_uploads,
    unpack_bot_archive,
    upload_directory,
)


def _tar(entries: list[tuple[str, bytes | str, int]]) -> bytes:
    """(name, data or link target, mode); a str payload makes a symlink."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, payload, mode in entries:
            info = tarfile.TarInfo(name)
            info.mode = mode
            if isinstance(payload, str):
                info.type, info.linkname = tarfile.SYMTYPE, payload
                archive.addfile(info)
            else:
                info.size = len(payload)
                archive.addfile(info, io.BytesIO(payload))
    return buffer.getvalue()


def test_a_tar_with_one_top_directory_unpacks_to_that_directory(tmp_path: Path) -> None:
    data = _tar([
        ("mybot/bot.toml", b"name = 'x'\n", 0o644),
        ("mybot/run.sh", b"#!/bin/sh\n", 0o755),
        ("mybot/lib/util.py", b"pass\n", 0o644),
        ("mybot/link.py", "lib/util.py", 0o777),
    ])  # fmt: skip
    root = unpack_bot_archive(data, tmp_path)
    assert root == tmp_path / "mybot"
    assert (root / "bot.toml").read_bytes() == b"name = 'x'\n"
    assert os.access(root / "run.sh", os.X_OK) and not os.access(root / "bot.toml", os.X_OK)
    assert os.readlink(root / "link.py") == "lib/util.py"


def test_a_zip_without_a_top_directory_unpacks_in_place(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.toml", "name = 'x'\n")
        archive.writestr("src/bot.py", "pass\n")
    root = unpack_bot_archive(buffer.getvalue(), tmp_path)
    assert root == tmp_path and (root / "src" / "bot.py").read_text() == "pass\n"


@pytest.mark.parametrize(
    ("entries", "error", "words"),
    [
        ([("a/../../x", b"", 0o644)], ArchiveError, "'..'"),
        ([("/abs", b"", 0o644)], ArchiveError, "absolute"),
        ([("back\\slash", b"", 0o644)], ArchiveError, "bad characters"),
        ([("l", "/etc", 0o777)], ArchiveError, "outside"),
        ([("d/l", "../..", 0o777)], ArchiveError, "outside"),
        ([("d/l", "../d/../../x", 0o777)], ArchiveError, "outside"),
        ([("a", b"1", 0o644), ("./a", b"2", 0o644)], ArchiveError, "same path twice"),
        ([("big", bytes(16 * 1024 * 1024 + 1), 0o644)], ArchiveTooLargeError, "limit"),
    ],
    ids=["dotdot", "absolute", "backslash", "link-absolute", "link-up", "link-up-twisted",
         "duplicate", "file-too-big"],
)  # fmt: skip
def test_refused_archives_write_nothing(
    tmp_path: Path, entries: list[tuple[str, bytes | str, int]], error: type[Exception], words: str
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    with pytest.raises(error, match=words):
        unpack_bot_archive(_tar(entries), target)
    assert list(target.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target"]


def test_a_zip_that_lies_about_its_sizes_is_stopped_while_reading(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bot.toml", "x" * 10_000)
    data = bytearray(buffer.getvalue())
    # Patch the central directory's uncompressed size of the entry down to 10 bytes.
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")
    with pytest.raises(ArchiveError):
        unpack_bot_archive(bytes(data), tmp_path)


def _corrupt_zip(method: int, corrupt: bool) -> bytes:
    """A zip of one bot.toml (and a second file after it), its data flipped when ``corrupt``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        archive.writestr("bot.toml", "name = 'x'\n" * 200)
        archive.writestr("bot.py", "pass\n")
    data = bytearray(buffer.getvalue())
    if corrupt:  # inside the first entry's compressed data, past its local header
        start = 30 + len("bot.toml") + 6
        data[start : start + 14] = bytes(b ^ 0xFF for b in data[start : start + 14])
    return bytes(data)


@pytest.mark.parametrize("corrupt", [True, False], ids=["corrupt", "intact (control)"])
@pytest.mark.parametrize(
    "method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA],
    ids=["deflate", "bzip2", "lzma"],
)  # fmt: skip
def test_a_zip_whose_data_cannot_be_inflated_is_refused_naming_the_entry(
    tmp_path: Path, method: int, corrupt: bool
) -> None:
    """zlib.error, bz2's OSError and LZMAError become a refusal naming the entry, never an
    error let out as it is (SubmitBot: UNKNOWN)."""
    target = tmp_path / "target"
    target.mkdir()
    data = _corrupt_zip(method, corrupt)
    if not corrupt:
        assert (unpack_bot_archive(data, target) / "bot.py").read_text() == "pass\n"
        return
    with pytest.raises(ArchiveError, match=r"entry 'bot\.toml': its data is corrupt"):
        unpack_bot_archive(data, target)
    assert list(target.iterdir()) == []


@pytest.mark.parametrize(
    ("data", "expected"),
    [(b"\x1f\x8b\x08rest", "tar.gz"), (b"PK\x03\x04rest", "zip")],
    ids=["gzip", "zip"],
)
def test_formats_are_recognised_by_their_first_bytes(data: bytes, expected: str) -> None:
    assert detect_format(data) == expected


def test_unknown_bytes_are_refused() -> None:
    with pytest.raises(ArchiveError, match="first bytes"):
        detect_format(b"\x00\x01")


# ------------------------------------------------- never written through a link


def _zip(entries: list[tuple[str, bytes | str, int]]) -> bytes:
    """(name, data or link target, mode); a str payload makes a symlink entry."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, payload, mode in entries:
            info = zipfile.ZipInfo(name)
            kind = stat.S_IFLNK if isinstance(payload, str) else stat.S_IFREG
            info.external_attr = (kind | mode) << 16
            archive.writestr(info, payload.encode() if isinstance(payload, str) else payload)
    return buffer.getvalue()


MAKERS = {"tar": _tar, "zip": _zip}
TOML_ENTRY = ("bot.toml", b"name = 'x'\n", 0o644)
LINK_CASES: dict[str, tuple[list[tuple[str, bytes | str, int]], str]] = {
    # each link looks harmless by its text; y resolves to the directory above
    "chain-then-file": (
        [TOML_ENTRY, ("x", ".", 0o777), ("y", "x/..", 0o777), ("y/FILE", b"pwned", 0o644)],
        "entry 'y/FILE': its path runs through the link 'y'",
    ),
    "chain-only": (
        [TOML_ENTRY, ("x", ".", 0o777), ("y", "x/..", 0o777)],
        "entry 'y': link to 'x/..' resolves outside",
    ),
    "file-through-inside-link": (
        [TOML_ENTRY, ("d", ".", 0o777), ("d/FILE", b"pwned", 0o644)],
        "entry 'd/FILE': its path runs through the link 'd'",
    ),
    "file-before-its-link": (
        [TOML_ENTRY, ("y/FILE", b"pwned", 0o644), ("x", ".", 0o777), ("y", "x/..", 0o777)],
        "entry 'y/FILE': its path runs through the link 'y'",
    ),
    "deep-chain": (
        [TOML_ENTRY, ("a/b", "..", 0o777), ("a/c", "b/..", 0o777)],
        "entry 'a/c': link to 'b/..' resolves outside",
    ),
}


@pytest.mark.parametrize("fmt", sorted(MAKERS))
@pytest.mark.parametrize("case", sorted(LINK_CASES))
def test_nothing_is_written_through_a_link(tmp_path: Path, fmt: str, case: str) -> None:
    entries, message = LINK_CASES[case]
    above = tmp_path / "above"
    target = above / "target"
    target.mkdir(parents=True)
    with pytest.raises(ArchiveError) as raised:
        unpack_bot_archive(MAKERS[fmt](entries), target)
    assert message in str(raised.value)
    assert list(target.iterdir()) == []  # a refused archive leaves nothing behind
    assert sorted(p.name for p in above.iterdir()) == ["target"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["above"]


@pytest.mark.parametrize("fmt", sorted(MAKERS))
def test_links_that_resolve_inside_are_still_accepted(tmp_path: Path, fmt: str) -> None:
    entries: list[tuple[str, bytes | str, int]] = [
        TOML_ENTRY, ("lib/util.py", b"pass\n", 0o644), ("x", ".", 0o777),
        ("y", "x/lib", 0o777), ("lib/up", "../bot.toml", 0o777),
    ]  # fmt: skip
    root = unpack_bot_archive(MAKERS[fmt](entries), tmp_path)
    assert (root / "y" / "util.py").read_text() == "pass\n"
    assert os.readlink(root / "lib" / "up") == "../bot.toml"


def test_a_link_already_on_disk_is_never_followed(tmp_path: Path) -> None:
    """The writer itself refuses to follow links, whatever put them there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    target = tmp_path / "target"
    target.mkdir()
    (target / "d").symlink_to(outside)
    with pytest.raises(ArchiveError, match="entry 'd/FILE': 'd' on its path is not a directory"):
        unpack_bot_archive(_tar([TOML_ENTRY, ("d/FILE", b"pwned", 0o644)]), target)
    assert list(outside.iterdir()) == []


def test_a_bot_directory_whose_links_chain_outside_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "bot"
    directory.mkdir()
    (directory / "x").symlink_to(".")
    (directory / "y").symlink_to("x/..")
    with pytest.raises(ArchiveError, match=re.escape("entry 'y': link to 'x/..' resolves outside")):
        check_bot_directory(directory)
    (directory / "y").unlink()
    (directory / "y").symlink_to("x/x/bot.toml")
    check_bot_directory(directory)  # resolves inside: fine


@pytest.mark.slow
def test_stale_upload_directories_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = tmp_path / f"kahuna-upload-{gone.pid}-abc123"
    live = tmp_path / f"kahuna-upload-{os.getpid()}-def456"
    old_legacy = tmp_path / "kahuna-upload-q1w2e3"
    new_legacy = tmp_path / "kahuna-upload-r4t5y6"
    other = tmp_path / "kahuna-uploadish"
    for directory in (stale, live, old_legacy, new_legacy, other):
        (directory / "sub").mkdir(parents=True)
        (directory / "sub" / "f").write_text("x")
    os.utime(old_legacy, (0, 0))
    removed = remove_stale_uploads(tmp_path)
    assert sorted(removed) == sorted([stale, old_legacy])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [live.name, new_legacy.name, other.name]
    )


def test_uploads_are_unpacked_in_a_directory_named_after_the_server() -> None:
    with upload_directory() as work:
        assert Path(work).name.startswith(f"kahuna-upload-{os.getpid()}-")
        remove_stale_uploads(Path(work).parent)
        assert Path(work).exists()  # this process is alive: its upload is kept


# ------------------------------------------------- tar metadata bounded before it is read


def _raw_header(name: bytes, kind: bytes, size: int) -> bytes:
    """One ustar header block as a hostile tool would write it (checksum right)."""
    block = bytearray(512)
    block[0 : len(name)] = name
    block[100:108] = b"0000644\0"
    big = b"\x80" + size.to_bytes(11, "big")
    block[124:136] = f"{size:011o}\0".encode() if size < 8**11 else big
    block[156:157] = kind
    block[257:265] = b"ustar\x0000"
    block[148:156] = b" " * 8
    block[148:156] = f"{sum(block):06o}\0 ".encode()
    return bytes(block)


def _raw_tar_gz(*parts: bytes) -> bytes:
    return gzip.compress(b"".join(parts) + bytes(1024))


def _bomb(header: bytes, size: int) -> bytes:
    """``header`` then ``size`` bytes of "a": what it declares, really there, gzipped."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [packer.compress(header)]
    out += [packer.compress(b"a" * (1 << 20)) for _ in range(size >> 20)]
    return b"".join([*out, packer.compress(bytes(1024)), packer.flush()])


_PAX_64K = _raw_header(b"pax", b"x", 65536) + b"65536 comment=".ljust(65535, b"a") + b"\n"
GIB = 1 << 30
HOSTILE_TARS: dict[str, tuple[bytes, str]] = {
    "gnu-longname-1gib": (
        _raw_tar_gz(_raw_header(b"././@LongLink", b"L", GIB), b"a" * 1_000_000),
        f"GNU long name declares {GIB} bytes; the limit is 4096",
    ),
    "gnu-longname-64mib-really-there": (
        _bomb(_raw_header(b"././@LongLink", b"L", 64 << 20), 64 << 20),
        f"GNU long name declares {64 << 20} bytes; the limit is 4096",
    ),
    "pax-header-64mib-really-there": (
        _bomb(_raw_header(b"pax", b"x", 64 << 20), 64 << 20),
        f"PAX header declares {64 << 20} bytes; the limit is 65536",
    ),
    "gnu-longlink-1gib": (
        _raw_tar_gz(_raw_header(b"././@LongLink", b"K", GIB), b"a" * 261_000),
        f"GNU long link declares {GIB} bytes; the limit is 4096",
    ),
    "pax-header-1gib": (
        _raw_tar_gz(_raw_header(b"pax", b"x", GIB), b"9 a=b\n".ljust(1_000_000, b"\n")),
        f"PAX header declares {GIB} bytes; the limit is 65536",
    ),
    "pax-global-1gib": (
        _raw_tar_gz(_raw_header(b"pax", b"g", GIB), b"a" * 1_000_000),
        f"PAX header declares {GIB} bytes; the limit is 65536",
    ),
    "pax-size-record-1gib": (
        _raw_tar_gz(
            _raw_header(b"pax", b"x", 19), f"19 size={GIB}\n".encode().ljust(512, b"\0"),
            _raw_header(b"bot.toml", b"0", 10), b"x" * 512,
        ),
        f"PAX size {GIB} bytes; the limit is {16 * 1024 * 1024}",
    ),
    "file-declares-1gib-base256": (
        _raw_tar_gz(_raw_header(b"bot.toml", b"0", 8**12), b"a" * 1_000_000),
        f"declares {8**12} bytes; the limit is {16 * 1024 * 1024}",
    ),
    "directory-declares-1gib": (
        _raw_tar_gz(_raw_header(b"d/", b"5", GIB), b"a" * 1_000_000),
        f"declares {GIB} bytes; the limit is {16 * 1024 * 1024}",
    ),
    "pax-headers-over-4mib-in-all": (
        _raw_tar_gz(*[_PAX_64K + _raw_header(f"f{i}".encode(), b"0", 0) for i in range(65)]),
        "long names and PAX headers exceed 4194304 bytes in all",
    ),
    "too-many-headers": (
        _raw_tar_gz(*[_raw_header(b"././@LongLink", b"L", 0)] * 6001),
        "over 6000 tar headers",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_TARS))
def test_tar_metadata_is_bounded_before_it_is_read(tmp_path: Path, case: str) -> None:
    data, message = HOSTILE_TARS[case]
    assert len(data) < 8 * 1024 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(ArchiveTooLargeError) as raised:
            unpack_bot_archive(data, tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message in str(raised.value)
    assert peak < 8 * 1024 * 1024, f"{peak} bytes allocated to refuse it"
    assert list(tmp_path.iterdir()) == []


class _FullSizeMembers(io.RawIOBase):
    """A raw tar stream of ``count`` members of 16 MiB (the limit per file), each header
    followed by its data, made as it is read: what a gzip bomb inflates to."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.served = 0
        self._pending = b""
        self._data_left = 0
        self._members = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if not self._pending and self._data_left == 0:
            if self._members == self.count:
                return 0
            self._members += 1
            name = f"bot/f{self._members}".encode()
            self._pending, self._data_left = _raw_header(name, b"0", 16 << 20), 16 << 20
        if self._pending:
            count = min(len(buffer), len(self._pending))
            buffer[:count], self._pending = self._pending[:count], self._pending[count:]
        else:
            count = min(len(buffer), self._data_left)
            buffer[:count] = bytes(count)
            self._data_left -= count
        self.served += count
        return count


def test_a_bomb_of_many_full_size_members_is_refused_once_they_pass_the_total() -> None:
    """Each member within the per-file limit, many of them: the header walk stops once
    they declare more than the total, without inflating the rest."""
    stream = _FullSizeMembers(12)
    with pytest.raises(ArchiveTooLargeError) as raised:
        check_tar_headers(io.BufferedReader(stream))  # type: ignore[arg-type]
    assert f"declare {5 * (16 << 20)} bytes in all; the limit is {64 << 20}" in str(raised.value)
    assert stream.served < (64 << 20) + 64 * 1024 + 5 * 512


def test_gnu_sparse_members_are_refused(tmp_path: Path) -> None:
    data = _raw_tar_gz(_raw_header(b"bot.toml", b"S", 0))
    with pytest.raises(ArchiveError, match="GNU sparse files are not allowed"):
        unpack_bot_archive(data, tmp_path)


def test_long_names_and_pax_headers_within_the_limits_still_unpack(tmp_path: Path) -> None:
    long_name = "mybot/" + "d" * 150 + "/bot.toml"
    for fmt in (tarfile.GNU_FORMAT, tarfile.PAX_FORMAT):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz", format=fmt) as archive:
            info = tarfile.TarInfo(long_name)
            info.size, info.pax_headers = 3, {"comment": "é" * 100}
            archive.addfile(info, io.BytesIO(b"x=1"))
        target = tmp_path / str(fmt)
        target.mkdir()
        root = unpack_bot_archive(buffer.getvalue(), target)
        assert (root / ("d" * 150) / "bot.toml").read_bytes() == b"x=1"
