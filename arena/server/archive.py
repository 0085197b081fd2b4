"""Unpacking uploaded bot archives (tar.gz or zip), checked before anything is written.

Every entry is inspected first; the archive is refused as a whole, naming the
entry, when it breaks a rule:

* sizes: the upload at most ``MAX_ARCHIVE_BYTES``; at most ``MAX_ENTRIES``
  entries; each file at most ``MAX_FILE_BYTES`` and all of them together at
  most ``MAX_TOTAL_BYTES`` unpacked (zip sizes are also enforced while
  reading, so a lying header cannot smuggle a bomb through);
* names: relative, no ``..`` component, no backslash or NUL, not empty;
* kinds: regular files, directories and symbolic links only (no devices,
  FIFOs or hard links); a link must stay inside the bot directory.

When every entry sits under one top-level directory, that directory is the bot.
"""

from __future__ import annotations

import io
import os
import posixpath
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

MAX_ARCHIVE_BYTES = 8 * 1024 * 1024
MAX_ENTRIES = 2000
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_TOTAL_BYTES = 64 * 1024 * 1024
_CHUNK = 64 * 1024


class ArchiveError(ValueError):
    """An archive refused before unpacking; the message names the entry and the rule."""


class ArchiveTooLargeError(ArchiveError):
    """An archive over a size or count limit."""


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str  # normalised relative path
    kind: str  # "file" | "dir" | "symlink"
    size: int
    link: str = ""
    member: object = None  # TarInfo or ZipInfo


def detect_format(data: bytes) -> str:
    if data[:2] == b"\x1f\x8b":
        return "tar.gz"
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        return "zip"
    raise ArchiveError("not a tar.gz or zip archive (unrecognised first bytes)")


def unpack_bot_archive(data: bytes, target: Path, archive_format: str | None = None) -> Path:
    """Check and unpack ``data`` into the empty directory ``target``; return the bot directory."""
    if len(data) > MAX_ARCHIVE_BYTES:
        raise ArchiveTooLargeError(
            f"archive is {len(data)} bytes; the limit is {MAX_ARCHIVE_BYTES}"
        )
    kind = archive_format or detect_format(data)
    if kind == "tar.gz":
        _unpack_tar(data, target)
    elif kind == "zip":
        _unpack_zip(data, target)
    else:
        raise ArchiveError(f"unknown archive format {kind!r}")
    return _bot_root(target)


def check_bot_directory(directory: Path) -> None:
    """Apply the archive's kind and link rules to a bot directory on disk (`arena bot add`).

    Regular files, directories and links that stay inside ``directory`` only;
    ArchiveError names the first entry that breaks a rule.
    """
    for root, dirs, files in os.walk(directory):
        for name in sorted(dirs) + sorted(files):
            path = Path(root) / name
            relative = path.relative_to(directory).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                _check_link(relative, os.readlink(path))
            elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise ArchiveError(
                    f"entry {relative!r}: {_special_kind(mode)}; a bot directory holds only"
                    " regular files, directories and links inside it"
                )


def _special_kind(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
    )  # fmt: skip
    for test, kind in kinds:
        if test(mode):
            return kind
    return "not a regular file"


def _clean_name(raw: str) -> str:
    if not raw or "\x00" in raw or "\\" in raw:
        raise ArchiveError(f"entry {raw!r}: bad characters in the name")
    if raw.startswith("/"):
        raise ArchiveError(f"entry {raw!r}: absolute path")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(f"entry {raw!r}: '..' in the path")
    if not parts:
        return ""
    return "/".join(parts)


def _check_link(name: str, link: str) -> None:
    if not link or link.startswith("/") or "\x00" in link:
        raise ArchiveError(f"entry {name!r}: link to {link!r} points outside the bot directory")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), link))
    if resolved == ".." or resolved.startswith("../") or resolved.startswith("/"):
        raise ArchiveError(f"entry {name!r}: link to {link!r} points outside the bot directory")


def _check_totals(entries: list[_Entry]) -> None:
    if len(entries) > MAX_ENTRIES:
        raise ArchiveTooLargeError(
            f"archive has {len(entries)} entries; the limit is {MAX_ENTRIES}"
        )
    total = 0
    for entry in entries:
        if entry.size > MAX_FILE_BYTES:
            raise ArchiveTooLargeError(
                f"entry {entry.name!r} is {entry.size} bytes; the limit is {MAX_FILE_BYTES}"
            )
        total += entry.size
    if total > MAX_TOTAL_BYTES:
        raise ArchiveTooLargeError(
            f"archive unpacks to {total} bytes; the limit is {MAX_TOTAL_BYTES}"
        )
    names = [e.name for e in entries if e.name]
    if len(set(names)) != len(names):
        raise ArchiveError("archive holds the same path twice")


def _tar_entries(data: bytes) -> tuple[tarfile.TarFile, list[_Entry]]:
    """Read the headers; stop at the first entry over a limit (before inflating its data)."""
    entries: list[_Entry] = []
    total = 0
    try:
        archive = tarfile.open(fileobj=io.BytesIO(data), mode="r:gz")  # noqa: SIM115
        for member in archive:
            entries.append(_tar_entry(member))
            total += member.size if member.isfile() else 0
            if len(entries) > MAX_ENTRIES or total > MAX_TOTAL_BYTES:
                _check_totals(entries)
            if member.isfile() and member.size > MAX_FILE_BYTES:
                _check_totals(entries)
    except (tarfile.TarError, OSError, EOFError) as error:
        raise ArchiveError(f"not a readable tar.gz archive: {error}") from None
    return archive, entries


def _tar_entry(member: tarfile.TarInfo) -> _Entry:
    name = _clean_name(member.name)
    if member.isfile():
        return _Entry(name, "file", member.size, member=member)
    if member.isdir():
        return _Entry(name, "dir", 0)
    if member.issym():
        _check_link(name, member.linkname)
        return _Entry(name, "symlink", 0, link=member.linkname)
    if member.islnk():
        raise ArchiveError(f"entry {member.name!r}: hard links are not allowed")
    raise ArchiveError(f"entry {member.name!r}: devices and FIFOs are not allowed")


def _unpack_tar(data: bytes, target: Path) -> None:
    archive, entries = _tar_entries(data)
    _check_totals(entries)
    with archive:
        for entry in entries:
            source = None
            if entry.kind == "file":
                source = archive.extractfile(entry.member)  # type: ignore[arg-type]
            _write(target, entry, source)


def _zip_entries(archive: zipfile.ZipFile) -> list[_Entry]:
    entries = []
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise ArchiveTooLargeError(f"archive has {len(infos)} entries; the limit is {MAX_ENTRIES}")
    for info in infos:
        name = _clean_name(info.filename)
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            if info.file_size > 4096:
                raise ArchiveError(f"entry {info.filename!r}: link target too long")
            link = archive.read(info).decode("utf-8", "replace")
            _check_link(name, link)
            entries.append(_Entry(name, "symlink", 0, link=link))
        elif info.is_dir():
            entries.append(_Entry(name, "dir", 0))
        elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: made by a tool that sets no type
            raise ArchiveError(f"entry {info.filename!r}: devices and FIFOs are not allowed")
        else:
            entries.append(_Entry(name, "file", info.file_size, member=info))
    return entries


def _unpack_zip(data: bytes, target: Path) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = _zip_entries(archive)
            _check_totals(entries)
            for entry in entries:
                source = archive.open(entry.member) if entry.kind == "file" else None  # type: ignore[arg-type]
                _write(target, entry, source)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError) as error:
        raise ArchiveError(f"not a readable zip archive: {error}") from None
    except RuntimeError as error:  # encrypted entries
        raise ArchiveError(f"zip archive cannot be read: {error}") from None


def _write(target: Path, entry: _Entry, source: io.BufferedIOBase | object | None) -> None:
    if not entry.name:
        return
    path = target / entry.name
    path.parent.mkdir(parents=True, exist_ok=True)
    if entry.kind == "dir":
        path.mkdir(exist_ok=True)
        return
    if entry.kind == "symlink":
        os.symlink(entry.link, path)
        return
    written = 0
    with open(path, "xb") as out:
        while source is not None:
            chunk = source.read(_CHUNK)  # type: ignore[attr-defined]
            if not chunk:
                break
            written += len(chunk)
            if written > max(entry.size, 0) or written > MAX_FILE_BYTES:
                raise ArchiveTooLargeError(f"entry {entry.name!r} unpacks larger than it says")
            out.write(chunk)
    os.chmod(path, 0o755 if _executable(entry) else 0o644)


def _executable(entry: _Entry) -> bool:
    member = entry.member
    if isinstance(member, tarfile.TarInfo):
        return bool(member.mode & 0o111)
    if isinstance(member, zipfile.ZipInfo):
        return bool((member.external_attr >> 16) & 0o111)
    return False


def _bot_root(target: Path) -> Path:
    children = list(target.iterdir())
    if (target / "bot.toml").exists() or len(children) != 1 or not children[0].is_dir():
        return target
    if children[0].is_symlink():
        return target
    return children[0]
