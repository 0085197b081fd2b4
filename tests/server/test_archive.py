"""Bot archives: what is accepted, and that refusals write nothing."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from arena.server.archive import (
    ArchiveError,
    ArchiveTooLargeError,
    detect_format,
    unpack_bot_archive,
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
