"""An audit bundle as a file: read part by part, written part by part.

A saved bundle (`arena remote audit --save FILE`, read by `arena audit --bundle FILE`)
is the one JSON object that docs/reference/VERIFY.md describes. A long tournament's
can be gigabytes, and one from a stranger can be anything, so it is never read
whole: ``read_parts`` walks the object's structure and decodes one value at a time
(the head's fields, then each match's fields and each game), none larger than
``MAX_PART_CHARS``, and hands on the parts as
``arena.tournament.policy.audit_bundle.bundle_parts`` gives them. Its matches come
last in the object and each match's games last in the match (as the arena writes
them): the head, secret included, is known before any game is read. A key given
twice is refused, not left for the last one to win: two checkers must not read
two different bundles from one file.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

from arena.tournament.policy.audit_bundle import BundlePart

MAX_PART_CHARS = 16 * 1024 * 1024
"""The most characters of JSON one value of a saved bundle may take (a game with its
record, or one field of the head or of a match), and the head or a match without
its games in all."""

MAX_OBJECT_KEYS = 1000
"""The most keys the bundle's object, or a match's, may have (they hold about ten)."""

_READ_CHARS = 1 << 20
_BLANKS = re.compile(r"[ \t\r\n]*")
_ARCHIVES = (
    (0, b"PK\x03\x04", "a zip archive"), (0, b"\x1f\x8b", "gzip-compressed"),
    (0, b"BZh", "bzip2-compressed"), (0, b"\xfd7zXZ\x00", "xz-compressed"),
    (0, b"\x28\xb5\x2f\xfd", "zstd-compressed"), (257, b"ustar", "a tar archive"),
)  # fmt: skip


class BundleReadError(Exception):
    """A saved bundle that is not one: the message names the problem and where."""


def read_parts(stream: BinaryIO) -> Iterator[BundlePart]:
    """The parts of the bundle ``stream`` holds (BundleReadError, raised as it is met,
    when it holds no bundle)."""
    scanner = _Scanner(stream)
    if scanner.peek() != "{":
        if scanner.peek() == "":
            raise BundleReadError("empty: not an audit bundle (a JSON object)")
        scanner.value("the bundle")  # names what the JSON is not
        raise BundleReadError("not a JSON object")
    head: dict[str, Any] = {}
    start = scanner.tell()
    for key in scanner.members("the bundle", head):
        if key == "matches":
            yield "head", head
            yield from _matches(scanner)
            if scanner.peek() != "}":
                raise scanner.error("the bundle", '"matches" must be its last key')
        else:
            head[key] = scanner.value(f"the bundle's {key!r}")
            scanner.within(start, "the bundle without its matches")
    if not scanner.saw_matches:
        yield "head", head
    if scanner.peek() != "":
        raise scanner.error("the bundle", "more text after its end")


def _matches(scanner: _Scanner) -> Iterator[BundlePart]:
    scanner.saw_matches = True
    for number in scanner.elements("the bundle's matches"):
        what = f"match {number} (counting from 1)"
        match: dict[str, Any] = {}
        start = scanner.tell()
        played = False
        for key in scanner.members(what, match):
            if played:
                raise scanner.error(what, f'{key!r} after "played": "played" must be its last key')
            if key == "played":
                played = True
                yield "match", match
                for game in scanner.elements(f"{what}'s games"):
                    part = scanner.value(f"game {game} of {what}")
                    if not isinstance(part, dict):
                        raise scanner.error(f"game {game} of {what}", "not a JSON object")
                    yield "game", part
            else:
                match[key] = scanner.value(f"{what}'s {key!r}")
                scanner.within(start, f"{what} without its games")
        if not played:
            yield "match", match


def _refuse_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _TwiceError(key)
        out[key] = value
    return out


class _TwiceError(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    """Python's reader takes NaN, Infinity and -Infinity; JSON has none of them, and a
    checker with a strict reader would refuse the file this one audits."""
    raise ValueError(f"{name} is not JSON")


def loads_once(text: str) -> Any:
    """``json.loads``, a key given twice in an object refused (ValueError naming it), and
    NaN or Infinity too, which JSON does not have."""
    try:
        return json.loads(text, object_pairs_hook=_refuse_twice, parse_constant=_refuse_constant)
    except _TwiceError as error:
        raise ValueError(f"key {str(error)[:80]!r} given twice") from None


class _Scanner:
    """The text of a stream, decoded as UTF-8 a window at a time."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.utf8 = codecs.getincrementaldecoder("utf-8-sig")()  # a leading BOM: skipped
        self.json = json.JSONDecoder(
            object_pairs_hook=_refuse_twice, parse_constant=_refuse_constant
        )
        self.buf = ""
        self.pos = 0
        self.offset = 0  # characters before buf[0]
        self.eof = False
        self.first = True
        self.saw_matches = False

    def tell(self) -> int:
        return self.offset + self.pos

    def error(self, what: str, problem: str) -> BundleReadError:
        where = "" if what == "the bundle" else f"{what}: "
        return BundleReadError(f"{where}{problem} (at character {self.tell()})")

    def within(self, start: int, what: str) -> None:
        if self.tell() - start > MAX_PART_CHARS:
            raise BundleReadError(f"{what} (from character {start}) takes more than"
                                  f" {MAX_PART_CHARS} characters, the most the audit reads for"
                                  " one part (MAX_PART_CHARS)")  # fmt: skip

    def _more(self, at_least: int = 0) -> None:
        data = self.stream.read(max(_READ_CHARS, at_least))
        if self.first:
            self.first = False
            for at, magic, kind in _ARCHIVES:
                if data[at:at + len(magic)] == magic:
                    raise BundleReadError(f"{kind}, not an audit bundle (a JSON text):"
                                          " unpack it and give the JSON file")  # fmt: skip
        try:
            text = self.utf8.decode(data, final=not data)
        except UnicodeDecodeError as error:
            raise BundleReadError(f"not UTF-8 text ({error.reason} near character"
                                  f" {self.offset + len(self.buf)})") from None  # fmt: skip
        self.eof = not data
        self.offset += self.pos
        self.buf = self.buf[self.pos:] + text
        self.pos = 0

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end), not consumed."""
        while True:
            self.pos = _BLANKS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf) or self.eof:
                return self.buf[self.pos:self.pos + 1]
            self._more()

    def expect(self, char: str, what: str) -> None:
        got = self.peek()
        if got != char:
            raise self.error(what, f"expected {char!r}, found {got or 'the end'!r}")
        self.pos += 1

    def value(self, what: str) -> Any:
        """The JSON value that starts here, at most MAX_PART_CHARS long."""
        self.peek()
        while True:
            try:
                value, end = self.json.raw_decode(self.buf, self.pos)
            except _TwiceError as error:
                raise self.error(what, f"key {str(error)[:80]!r} given twice") from None
            except json.JSONDecodeError as error:
                if self.eof or not _cut_short(error, len(self.buf)):
                    at = self.offset + error.pos
                    where = "" if what == "the bundle" else f"{what}: "
                    raise BundleReadError(f"{where}not JSON ({error.msg} at character {at})"
                                          ) from None  # fmt: skip
            except RecursionError:
                raise self.error(what, "JSON nested too deeply") from None
            except ValueError as error:  # an integer past Python's digits limit, say
                raise self.error(what, f"not JSON ({str(error).split(':')[0][:120]})") from None
            else:
                if self.eof or not _may_go_on(value, len(self.buf) - end):
                    if end - self.pos > MAX_PART_CHARS:
                        raise self._too_long(what)
                    self.pos = end
                    return value
            if len(self.buf) - self.pos > MAX_PART_CHARS:
                raise self._too_long(what)
            self._more(len(self.buf) - self.pos)

    def _too_long(self, what: str) -> BundleReadError:
        return BundleReadError(f"{what} (from character {self.tell()}) takes more than"
                               f" {MAX_PART_CHARS} characters, the most the audit reads for"
                               " one part (MAX_PART_CHARS)")  # fmt: skip

    def members(self, what: str, seen: dict[str, Any]) -> Iterator[str]:
        """The keys of the object that starts here; the caller reads each one's value."""
        self.expect("{", what)
        if self.peek() == "}":
            self.pos += 1
            return
        keys: set[str] = set()
        while True:
            key = self.value(f"a key of {what}")
            if not isinstance(key, str):
                raise self.error(what, "a key is not a string")
            if key in keys or key in seen:
                raise self.error(what, f"key {key[:80]!r} given twice")
            if len(keys) == MAX_OBJECT_KEYS:
                raise self.error(what, f"more than {MAX_OBJECT_KEYS} keys, the most the audit"
                                       " reads in one object (MAX_OBJECT_KEYS)")  # fmt: skip
            keys.add(key)
            self.expect(":", what)
            yield key
            following = self.peek()
            self.pos += 1
            if following == "}":
                return
            if following != ",":
                self.pos -= 1
                raise self.error(what, f"expected ',' or '}}', found {following or 'the end'!r}")

    def elements(self, what: str) -> Iterator[int]:
        """1, 2, ... for the elements of the array that starts here, each read by the caller."""
        self.expect("[", what)
        if self.peek() == "]":
            self.pos += 1
            return
        number = 0
        while True:
            number += 1
            yield number
            following = self.peek()
            self.pos += 1
            if following == "]":
                return
            if following != ",":
                self.pos -= 1
                raise self.error(what, f"expected ',' or ']', found {following or 'the end'!r}")


def _may_go_on(value: Any, left: int) -> bool:
    """Whether ``value``, read with ``left`` characters of the window after it, may be the
    start of a longer number: the window may end inside ``1.5e-3`` after ``1``, ``1.`` or
    ``1.5e-`` (the decoder then reads ``1`` and leaves up to two characters)."""
    return left <= 2 and isinstance(value, int | float) and not isinstance(value, bool)


def _cut_short(error: json.JSONDecodeError, length: int) -> bool:
    """Whether ``error`` may be the window ending inside a value (more text may mend it)."""
    return length - error.pos <= 16 or error.msg.startswith("Unterminated string")


def bundle_text(parts: Iterable[BundlePart]) -> Iterator[str]:
    """The JSON text of the bundle ``parts`` make up, a piece at a time (a line a game)."""
    text = BundleText()
    for kind, part in parts:
        yield text.piece(kind, part)
    yield text.end()


class BundleText:
    """A bundle's JSON text, written as its parts come: the one object
    docs/reference/VERIFY.md describes, matches last, each match's games last in it."""

    def __init__(self) -> None:
        self.started = self.in_match = self.first_game = False
        self.first_match = True

    def piece(self, kind: str, part: dict[str, Any]) -> str:
        if kind == "head" and not self.started:
            self.started = True
            return _opened(part, "matches")
        if kind == "match" and self.started:
            closed = "\n]}" if self.in_match else ""
            comma = "" if self.first_match else ","
            self.in_match, self.first_match, self.first_game = True, False, True
            return f"{closed}{comma}\n{_opened(part, 'played')}"
        if kind == "game" and self.in_match:
            comma = "" if self.first_game else ","
            self.first_game = False
            return f"{comma}\n{json.dumps(part)}"
        raise ValueError(f"a bundle's {kind} out of order")

    def end(self) -> str:
        if not self.started:
            raise ValueError("a bundle without its head")
        return ("\n]}" if self.in_match else "") + "\n]}\n"


def _opened(part: dict[str, Any], key: str) -> str:
    """``part`` as JSON, left open at the start of its list ``key``."""
    text = json.dumps(part)
    return text[:-1] + (", " if part else "") + json.dumps(key) + ": ["
