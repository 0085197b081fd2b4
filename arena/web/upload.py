"""A record posted to /replay: size limit, form or raw JSON, parsed once, errors named."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs

from arena.kahuna import MalformedRecordError, Record, parse_record

MAX_UPLOAD_BYTES = 2 * 1024 * 1024  # a full game record is about 10 KB


class UploadError(ValueError):
    """A posted record we cannot show; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Upload:
    record: Record
    bots: tuple[str, str]
    result_text: str


def form_text(text: str) -> str:
    """What to put back in the form's text area: the record field of a form post."""
    if "record=" in text[:200]:
        return parse_qs(text).get("record", [""])[0]
    return text


def record_from_upload(body: bytes, content_type: str) -> Upload:
    """The record in a form post (field ``record``) or a raw JSON body."""
    if len(body) > MAX_UPLOAD_BYTES:
        raise UploadError(413, f"the record is {len(body)} bytes; the limit is {MAX_UPLOAD_BYTES}")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UploadError(400, f"the record is not UTF-8 text (byte {err.start})") from None
    media_type = content_type.split(";")[0].strip().lower()
    if media_type == "application/x-www-form-urlencoded":
        text = parse_qs(text).get("record", [""])[0]
    if not text.strip():
        raise UploadError(400, "no record: paste a kahuna-record/1 JSON object or choose a file")
    try:
        record = parse_record(text)
    except MalformedRecordError as err:
        raise UploadError(400, f"not a valid kahuna-record/1: {err}") from None
    return Upload(record, bots_of(record), result_of(record))


def bots_of(record: Record) -> tuple[str, str]:
    """Bot names from the referee's match metadata (``extra["match"]["bots"]``), else seats."""
    return bots_in(record.extra)


def bots_in(extra: Mapping[str, object]) -> tuple[str, str]:
    """Bot names from a record's (or its head's) ``match.bots``, else "seat 0", "seat 1"."""
    names = ["seat 0", "seat 1"]
    match = extra.get("match")
    bots = match.get("bots") if isinstance(match, dict) else None
    if isinstance(bots, list):
        for entry in bots:
            if isinstance(entry, dict) and entry.get("seat") in (0, 1):
                name = entry.get("name")
                if isinstance(name, str) and name:
                    names[int(entry["seat"])] = name
    return (names[0], names[1])


def result_of(record: Record) -> str:
    if record.result is None:
        return "no result recorded"
    winner = record.result.winner
    who = "draw" if winner is None else f"seat {winner} won"
    points = record.result.points
    return f"{who} ({record.result.termination}), points {points[0]}-{points[1]}"
