"""Unpacking uploaded bot archives (tar.gz or zip), checked before anything is written.

Every entry is inspected first; the archive is refused as a whole, naming the
entry, when it breaks a rule:

* tar metadata: every raw 512-byte header is read before ``tarfile`` sees
  the archive, so no declared size is believed before it is bounded: a GNU
  long name or long link at most ``MAX_LONG_NAME_BYTES``, a PAX header at
  most ``MAX_PAX_HEADER_BYTES`` (its ``size`` record bounded like any size),
  all of them together at most ``MAX_EXTENDED_BYTES``,
  every other member at most ``MAX_FILE_BYTES`` and all of them together at
  most ``MAX_TOTAL_BYTES``, at most ``MAX_HEADERS`` headers; no GNU sparse
  files (so a gzip bomb is refused once its members pass the total, not
  inflated to its end first);
* sizes: the upload at most ``MAX_ARCHIVE_BYTES``; at most ``MAX_ENTRIES``
  entries; each file at most ``MAX_FILE_BYTES`` and all of them together at
  most ``MAX_TOTAL_BYTES`` unpacked (zip sizes are also enforced while
  reading, so a lying header cannot smuggle a bomb through);
* names: relative, no ``..`` component, no backslash or NUL, not empty;
* kinds: regular files, directories and symbolic links only (no devices,
  FIFOs or hard links); a link must stay inside the bot directory;
* links are never written through: an entry whose path runs through a
  link of the archive is refused, and every directory and file is made
  relative to its parent's file descriptor with no-follow semantics
  (``O_NOFOLLOW``), so not even a link made some other way can redirect a
  write. Once the whole archive is in place, every link is judged by where
  it resolves on disk (``x -> .`` then ``y -> x/..`` is refused: ``y`` is
  the directory above), and a refused archive leaves ``target`` empty.

When every entry sits under one top-level directory, that directory is the bot.

Uploads are unpacked in ``upload_directory()``, a temporary directory named
``kahuna-upload-PID-*`` after the server process; ``remove_stale_uploads()``
(at server start-up) removes those a process killed with -9 left behind.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import lzma
import os
import posixpath
import re
import shutil
import stat
import tarfile
import tempfile
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

MAX_ARCHIVE_BYTES = 8 * 1024 * 1024
UPLOAD_CHUNK_BYTES = 64 * 1024
"""The largest chunk of an archive streamed to the arena API (UploadBot)."""
MAX_ENTRIES = 2000
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_TOTAL_BYTES = 64 * 1024 * 1024
_CHUNK = 64 * 1024
MAX_LONG_NAME_BYTES = 4096
MAX_PAX_HEADER_BYTES = 64 * 1024
MAX_HEADERS = 3 * MAX_ENTRIES  # each entry with at most a long name and a PAX header
MAX_EXTENDED_BYTES = 4 * 1024 * 1024
"""All GNU long names/links and PAX headers together (tarfile keeps them per member)."""
_BLOCK = 512


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


UPLOAD_PREFIX = "kahuna-upload-"
_UPLOAD_NAME = re.compile(re.escape(UPLOAD_PREFIX) + r"(?:(\d+)-)?[a-z0-9_]+")
_LEGACY_UPLOAD_AGE_S = 600.0


def upload_directory() -> tempfile.TemporaryDirectory[str]:
    """A private temporary directory to unpack one upload in, named after this process."""
    return tempfile.TemporaryDirectory(prefix=f"{UPLOAD_PREFIX}{os.getpid()}-")


def remove_stale_uploads(parent: Path | None = None) -> list[Path]:
    """Remove this user's upload directories whose process is gone; return what was removed.

    A directory named after a live process is left alone (another server's
    upload in progress); one without a pid (no process to ask about) only
    once it is 10 minutes old.
    """
    parent = Path(parent if parent is not None else tempfile.gettempdir())
    removed: list[Path] = []
    try:
        children = list(parent.iterdir())
    except OSError:
        return removed
    for child in children:
        match = _UPLOAD_NAME.fullmatch(child.name)
        if match is None:
            continue
        try:
            info = child.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        pid = match.group(1)
        if pid is None:
            if time.time() - info.st_mtime < _LEGACY_UPLOAD_AGE_S:
                continue
        elif _alive(int(pid)):
            continue
        shutil.rmtree(child, ignore_errors=True)
        removed.append(child)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


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
    if kind not in ("tar.gz", "zip"):
        raise ArchiveError(f"unknown archive format {kind!r}")
    try:
        links = _unpack_tar(data, target) if kind == "tar.gz" else _unpack_zip(data, target)
        base = os.path.realpath(target)
        for entry in links:  # judged once everything is in place
            _check_resolved(base, target / entry.name, entry.name, entry.link)
    except BaseException:
        _empty(target)
        raise
    return _bot_root(target)


def _empty(target: Path) -> None:
    """Remove what was unpacked into ``target`` (links removed, never followed)."""
    try:
        children = list(target.iterdir())
    except OSError:
        return
    for child in children:
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def check_bot_directory(directory: Path) -> None:
    """Apply the archive's kind and link rules to a bot directory on disk (`arena bot add`).

    Regular files, directories and links that stay inside ``directory`` only;
    ArchiveError names the first entry that breaks a rule.
    """
    base = os.path.realpath(directory)
    for root, dirs, files in os.walk(directory):
        for name in sorted(dirs) + sorted(files):
            path = Path(root) / name
            relative = path.relative_to(directory).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                link = os.readlink(path)
                _check_link(relative, link)
                _check_resolved(base, path, relative, link)
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


def _check_resolved(base: str, path: Path, name: str, link: str) -> None:
    """The link at ``path``, resolved on disk through every other link, must stay in ``base``."""
    resolved = os.path.realpath(path)
    if resolved != base and not resolved.startswith(base.rstrip("/") + "/"):
        raise ArchiveError(
            f"entry {name!r}: link to {link!r} resolves outside the bot directory"
            " (through the links it passes)"
        )


def _check_no_path_through_links(entries: list[_Entry]) -> None:
    """Refuse any entry whose parent path is (or runs through) a link of the archive."""
    links = {entry.name for entry in entries if entry.kind == "symlink"}
    for entry in entries:
        parts = entry.name.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent in links:
                raise ArchiveError(
                    f"entry {entry.name!r}: its path runs through the link {parent!r};"
                    " nothing is unpacked through a link"
                )


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
    _check_no_path_through_links(entries)


def _declared_size(field: bytes, where: str) -> int:
    """A tar header's size field: octal text, or GNU base-256 (first byte 0x80)."""
    if field[:1] == b"\x80":
        return int.from_bytes(field[1:], "big")
    if field[:1] == b"\xff":
        raise ArchiveError(f"{where}: negative size")
    text = field.rstrip(b"\0 ").strip()
    try:
        return int(text or b"0", 8)
    except ValueError:
        raise ArchiveError(f"{where}: unreadable size field {field!r}") from None


def _pax_size(records: bytes, where: str) -> int | None:
    """The ``size`` record of a PAX header, if any (``LEN key=value\\n`` records)."""
    size = None
    position = 0
    while position < len(records) and records[position:position + 1] not in (b"\0", b""):
        space = records.find(b" ", position)
        if space < 0 or not records[position:space].isdigit():
            raise ArchiveError(f"{where}: malformed PAX header")
        length = int(records[position:space])
        record = records[space + 1 : position + length]
        if length <= space - position or not record.endswith(b"\n") or b"=" not in record:
            raise ArchiveError(f"{where}: malformed PAX header")
        key, _, value = record[:-1].partition(b"=")
        if key == b"size":
            if not value.isdigit():
                raise ArchiveError(f"{where}: PAX size {value!r} is not a number")
            size = int(value)
        position += length
    return size


def check_tar_headers(stream: io.BufferedIOBase | gzip.GzipFile) -> None:
    """Walk the raw tar headers of ``stream`` and bound every declared size before it is read.

    Reads at most one PAX header (``MAX_PAX_HEADER_BYTES``) into memory at a
    time; file data is skipped, and never more than ``MAX_TOTAL_BYTES`` of it.
    ArchiveTooLargeError names the header and the limit.
    """
    headers = extended = declared = 0
    pax_size: int | None = None
    while True:
        block = stream.read(_BLOCK)
        if len(block) < _BLOCK or block == bytes(_BLOCK):
            return  # the end (or a truncated archive: tarfile says which)
        headers += 1
        if headers > MAX_HEADERS:
            raise ArchiveTooLargeError(f"archive has over {MAX_HEADERS} tar headers")
        name = block[:100].split(b"\0", 1)[0].decode("utf-8", "replace")
        kind = block[156:157]
        where = f"tar header {headers} ({name!r}, type {kind.decode('latin-1')!r})"
        size = _declared_size(block[124:136], where)
        if kind in (b"L", b"K"):
            if size > MAX_LONG_NAME_BYTES:
                raise ArchiveTooLargeError(
                    f"{where}: GNU long {'name' if kind == b'L' else 'link'} declares"
                    f" {size} bytes; the limit is {MAX_LONG_NAME_BYTES}"
                )
            extended = _add_extended(extended, size, where)
        elif kind in (b"x", b"g", b"X"):
            if size > MAX_PAX_HEADER_BYTES:
                raise ArchiveTooLargeError(
                    f"{where}: PAX header declares {size} bytes; the limit is"
                    f" {MAX_PAX_HEADER_BYTES}"
                )
            extended = _add_extended(extended, size, where)
            records = stream.read(size)
            stream.read(-size % _BLOCK)
            found = _pax_size(records, where)
            if kind != b"g" and found is not None:
                pax_size = found
            if found is not None and found > MAX_FILE_BYTES:
                raise ArchiveTooLargeError(
                    f"{where}: PAX size {found} bytes; the limit is {MAX_FILE_BYTES}"
                )
            continue
        elif kind == b"S":
            raise ArchiveError(f"{where}: GNU sparse files are not allowed")
        else:
            if pax_size is not None:
                size, pax_size = pax_size, None
            if size > MAX_FILE_BYTES:
                raise ArchiveTooLargeError(
                    f"{where}: declares {size} bytes; the limit is {MAX_FILE_BYTES}"
                )
            declared += size
            if declared > MAX_TOTAL_BYTES:
                raise ArchiveTooLargeError(
                    f"{where}: the members up to here declare {declared} bytes in all;"
                    f" the limit is {MAX_TOTAL_BYTES}"
                )
        _skip(stream, size + (-size % _BLOCK))


def _add_extended(extended: int, size: int, where: str) -> int:
    extended += size
    if extended > MAX_EXTENDED_BYTES:
        raise ArchiveTooLargeError(
            f"{where}: long names and PAX headers exceed {MAX_EXTENDED_BYTES} bytes in all"
        )
    return extended


def _skip(stream: io.BufferedIOBase | gzip.GzipFile, count: int) -> None:
    while count > 0:
        chunk = stream.read(min(count, _CHUNK))
        if not chunk:
            return
        count -= len(chunk)


def _tar_entries(data: bytes) -> tuple[tarfile.TarFile, list[_Entry]]:
    """Read the headers; stop at the first entry over a limit (before inflating its data)."""
    entries: list[_Entry] = []
    total = 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as raw:
            check_tar_headers(raw)
    except (OSError, EOFError, zlib.error) as error:
        raise ArchiveError(f"not a readable tar.gz archive: {error}") from None
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


def _unpack_tar(data: bytes, target: Path) -> list[_Entry]:
    archive, entries = _tar_entries(data)
    _check_totals(entries)
    with archive, _Writer(target) as writer:
        for entry in entries:
            source = None
            if entry.kind == "file":
                source = archive.extractfile(entry.member)  # type: ignore[arg-type]
            writer.write(entry, source)
    return [entry for entry in entries if entry.kind == "symlink"]


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


def _unpack_zip(data: bytes, target: Path) -> list[_Entry]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive, _Writer(target) as writer:
            entries = _zip_entries(archive)
            _check_totals(entries)
            for entry in entries:
                source = archive.open(entry.member) if entry.kind == "file" else None  # type: ignore[arg-type]
                writer.write(entry, source)
        return [entry for entry in entries if entry.kind == "symlink"]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError) as error:
        raise ArchiveError(f"not a readable zip archive: {error}") from None
    except RuntimeError as error:  # encrypted entries
        raise ArchiveError(f"zip archive cannot be read: {error}") from None


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class _Writer:
    """Makes entries under ``target``, each relative to its parent directory's descriptor.

    Every parent is opened with ``O_NOFOLLOW | O_DIRECTORY`` from the one
    above it and every file is created ``O_EXCL | O_NOFOLLOW``: a link on
    disk, wherever it came from, makes the write fail instead of being
    followed.
    """

    def __init__(self, target: Path) -> None:
        self.root = os.open(target, _DIR_FLAGS)

    def __enter__(self) -> _Writer:
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self.root)

    def _parent(self, parts: list[str], name: str) -> int:
        """A descriptor of the directory ``parts`` (made when missing), never through a link."""
        fd = os.dup(self.root)
        try:
            for part in parts:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    raise ArchiveError(
                        f"entry {name!r}: {part!r} on its path is not a directory (a link?);"
                        " nothing is unpacked through a link"
                    ) from None
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def write(self, entry: _Entry, source: io.BufferedIOBase | object | None) -> None:
        if not entry.name:
            return
        *parents, leaf = entry.name.split("/")
        parent = self._parent(parents if entry.kind != "dir" else [*parents, leaf], entry.name)
        try:
            if entry.kind == "dir":
                return
            if entry.kind == "symlink":
                try:
                    os.symlink(entry.link, leaf, dir_fd=parent)
                except FileExistsError:
                    raise ArchiveError(f"entry {entry.name!r}: the path exists already") from None
                return
            self._file(parent, leaf, entry, source)
        finally:
            os.close(parent)

    @staticmethod
    def _file(parent: int, leaf: str, entry: _Entry, source: object | None) -> None:
        mode = 0o755 if _executable(entry) else 0o644
        try:
            fd = os.open(leaf, _FILE_FLAGS, 0o600, dir_fd=parent)
        except OSError as error:
            raise ArchiveError(
                f"entry {entry.name!r}: cannot be created ({error.strerror})"
            ) from None
        with os.fdopen(fd, "wb") as out:
            written = 0
            while source is not None:
                chunk = _read_entry(source, entry.name)
                if not chunk:
                    break
                written += len(chunk)
                if written > max(entry.size, 0) or written > MAX_FILE_BYTES:
                    raise ArchiveTooLargeError(f"entry {entry.name!r} unpacks larger than it says")
                out.write(chunk)
            os.fchmod(out.fileno(), mode)


_DATA_ERRORS = (zlib.error, lzma.LZMAError, OSError, EOFError, tarfile.TarError)
"""What inflating an entry's data raises when it is corrupt (bz2 says OSError): the source is
in memory, so none of them is the disk's."""


def _read_entry(source: object, name: str) -> bytes:
    """The next chunk of an entry's unpacked data; ArchiveError when it cannot be inflated."""
    try:
        return source.read(_CHUNK)  # type: ignore[attr-defined, no-any-return]
    except _DATA_ERRORS as error:
        raise ArchiveError(f"entry {name!r}: its data is corrupt ({error})") from None


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
