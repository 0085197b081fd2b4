"""Remote bots: bot versions without files, and the seat offers that let them play.

A remote bot version has runtime ``"remote"``: its owner hosts it and the
arena launches nothing for it. When a match seats it, the match worker makes
the seat's token as for any bot and the runner publishes a *seat offer*: the
token's SHA-256 (never the token), the seat's private referee socket and a
deadline. The `arena serve` gateway takes the offer when the bot says Hello
with that token (once: a taken, closed or expired offer is refused) and
proxies the stream to the socket. Nothing is written when an offer is refused.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import tempfile
import time
from pathlib import Path

from arena.quoting import quoted
from arena.referee.botdir import NAME_PATTERN, REMOTE_RUNTIME, content_hash
from arena.referee.types import BotSpec
from arena.store.bots import add_bot_version
from arena.store.db import NotFoundError, Store, StoreError, utc_now
from arena.store.models import BotVersionRow, SeatOfferRow

MAX_DESCRIPTION_CHARS = 500

__all__ = [
    "REMOTE_RUNTIME",
    "SeatRefusedError",
    "add_seat_offer",
    "close_seat_offers",
    "get_seat_offer",
    "now_ms",
    "open_seat_offers",
    "register_remote_bot",
    "take_seat_offer",
    "token_digest",
]


class SeatRefusedError(StoreError):
    """A seat token that cannot be used now; the message says why."""


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def register_remote_bot(
    store: Store, name: str, *, owner: str | None, description: str = ""
) -> tuple[BotVersionRow, bool]:
    """Store bot ``name`` as a remote bot owned by ``owner``: (version row, is new).

    The version is the hash of the generated ``bot.toml`` (name, runtime,
    description), so registering again unchanged is the same version.
    StoreError for a bad name or description; NotOwnerError for a bot of another user.
    """
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise StoreError(
            f"bot name {quoted(name)}: use 1-40 letters, digits, '-', '_' or '.', "
            "starting with a letter or digit"
        )
    if len(description) > MAX_DESCRIPTION_CHARS or "\0" in description:
        raise StoreError(f"description: at most {MAX_DESCRIPTION_CHARS} characters, no NUL")
    toml = (f'name = "{name}"\nruntime = "{REMOTE_RUNTIME}"\n'
            f'description = "{_toml_text(description)}"\n')  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="kahuna-remote-") as work:
        directory = Path(work) / name
        directory.mkdir()
        (directory / "bot.toml").write_text(toml, encoding="utf-8")
        spec = BotSpec(
            name=name, version=content_hash(directory), directory=directory, command=(),
            runtime=REMOTE_RUNTIME, description=description,
        )  # fmt: skip
        return add_bot_version(store, spec, owner=owner)


def _toml_text(text: str) -> str:
    """``text`` as the inside of a TOML basic string: a control character TOML refuses
    there (all but tab) is escaped, so the stored bot.toml loads as it reads."""
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return _TOML_REFUSED.sub(lambda found: f"\\u{ord(found.group()):04X}", text)


_TOML_REFUSED = re.compile("[\x00-\x08\x0a-\x1f\x7f]")


def add_seat_offer(
    store: Store,
    *,
    bot: str,
    version: str,
    token: str,
    match_id: int | None,
    referee_match: str,
    slot: int,
    socket_path: str,
    expires_at_ms: int,
) -> SeatOfferRow:
    """Publish an open seat for remote bot version ``bot``/``version`` (hash of ``token`` only).

    An offer of the same seat of the same match still open is withdrawn: the seat is
    offered again (after a failure), and only the newest token may open it.
    """
    if slot not in (0, 1):
        raise StoreError(f"slot must be 0 or 1, got {slot!r}")
    with store.transaction() as db:
        version_row = db.execute(
            "SELECT v.id, v.runtime FROM bot_versions v JOIN bots b ON b.id = v.bot_id"
            " WHERE b.name = ? AND v.version = ?",
            (bot, version),
        ).fetchone()
        if version_row is None:
            raise NotFoundError(f"no bot {quoted(bot)} version {quoted(version)} in the store")
        if version_row["runtime"] != REMOTE_RUNTIME:
            raise StoreError(f"bot {bot!r} is not a remote bot")
        if match_id is not None:
            db.execute(
                "UPDATE seat_offers SET state = 'closed'"
                " WHERE match_id = ? AND slot = ? AND state = 'open'",
                (match_id, slot),
            )
        offer_id = db.execute(
            "INSERT INTO seat_offers (token_sha256, bot_version_id, match_id, referee_match,"
            " slot, socket_path, created_at, expires_at_ms, state)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'open')",
            (token_digest(token), version_row["id"], match_id, referee_match, slot,
             socket_path, utc_now(), expires_at_ms),
        ).lastrowid  # fmt: skip
    assert offer_id is not None
    return get_seat_offer(store, offer_id)


_OFFER_COLUMNS = """
    o.id, b.name AS bot, v.version, b.owner, o.match_id, o.referee_match, o.slot,
    o.socket_path, o.created_at, o.expires_at_ms, o.state
"""
_OFFER_JOIN = (
    "seat_offers o JOIN bot_versions v ON v.id = o.bot_version_id JOIN bots b ON b.id = v.bot_id"
)


def _offer_row(row: sqlite3.Row) -> SeatOfferRow:
    return SeatOfferRow(
        id=row["id"], bot=row["bot"], version=row["version"], owner=row["owner"],
        match_id=row["match_id"], referee_match=row["referee_match"], slot=row["slot"],
        socket_path=row["socket_path"], created_at=row["created_at"],
        expires_at_ms=row["expires_at_ms"], state=row["state"],
    )  # fmt: skip


def get_seat_offer(store: Store, offer_id: int) -> SeatOfferRow:
    with store.reading() as db:
        row = db.execute(
            f"SELECT {_OFFER_COLUMNS} FROM {_OFFER_JOIN} WHERE o.id = ?", (offer_id,)
        ).fetchone()
    if row is None:
        raise NotFoundError(f"no seat offer {offer_id}")
    return _offer_row(row)


def take_seat_offer(store: Store, token: str, *, at_ms: int | None = None) -> SeatOfferRow:
    """Mark the open offer of ``token`` taken and return it (the state it had before).

    SeatRefusedError names why otherwise: no such token, already used, withdrawn
    (the match ended, its tournament was stopped or the seat was offered again),
    expired, or a bot whose owner's tokens are all revoked or expired.
    A refusal writes nothing.
    """
    at_ms = now_ms() if at_ms is None else at_ms
    with store.transaction() as db:
        row = db.execute(
            f"SELECT {_OFFER_COLUMNS} FROM {_OFFER_JOIN} WHERE o.token_sha256 = ?",
            (token_digest(token),),
        ).fetchone()
        if row is None:
            raise SeatRefusedError("unknown seat token")
        if row["state"] == "taken":
            raise SeatRefusedError("this seat token was already used")
        if row["state"] == "closed":
            raise SeatRefusedError("this seat is no longer offered (the match moved on)")
        if at_ms > row["expires_at_ms"]:
            raise SeatRefusedError("this seat token expired (no Hello in time)")
        if row["owner"] is not None and _tokens_all_dead(db, row["owner"]):
            raise SeatRefusedError(
                f"the bot's owner {row['owner']!r} holds no live token (every one revoked or"
                " expired): its seats are refused"
            )
        db.execute(
            "UPDATE seat_offers SET state = 'taken', taken_at = ? WHERE id = ?",
            (utc_now(), row["id"]),
        )
    return _offer_row(row)


def _tokens_all_dead(db: sqlite3.Connection, user: str) -> bool:
    """Whether ``user`` has tokens and every one is revoked or expired."""
    row = db.execute(
        "SELECT COUNT(*) AS held, COALESCE(SUM(revoked_at IS NULL AND"
        " (expires_at IS NULL OR expires_at > ?)), 0) AS live FROM tokens WHERE user = ?",
        (utc_now(), user),
    ).fetchone()
    return bool(row["held"] > 0 and row["live"] == 0)


def close_seat_offers(
    store: Store,
    *,
    match_id: int | None = None,
    offer_id: int | None = None,
    tournament_id: int | None = None,
) -> int:
    """Withdraw the open offers of a match, of one offer, or of every match of a
    tournament (its runner stopped); the number withdrawn."""
    given = [(where, value) for where, value in (
        ("match_id = ?", match_id), ("id = ?", offer_id),
        ("match_id IN (SELECT id FROM matches WHERE tournament_id = ?)", tournament_id),
    ) if value is not None]  # fmt: skip
    if len(given) != 1:
        raise StoreError("close_seat_offers needs exactly one of match_id, offer_id, tournament_id")
    ((where, value),) = given
    with store.transaction() as db:
        cursor = db.execute(
            f"UPDATE seat_offers SET state = 'closed' WHERE {where} AND state = 'open'", (value,)
        )
    return cursor.rowcount


def open_seat_offers(
    store: Store, *, owner: str | None = None, bot: str | None = None, at_ms: int | None = None
) -> list[SeatOfferRow]:
    """Open, unexpired offers (of ``owner``'s bots / of bot ``bot`` when given), oldest first."""
    at_ms = now_ms() if at_ms is None else at_ms
    where = ["o.state = 'open'", "o.expires_at_ms >= ?"]
    params: list[object] = [at_ms]
    if owner is not None:
        where.append("b.owner = ?")
        params.append(owner)
    if bot is not None:
        where.append("b.name = ?")
        params.append(bot)
    with store.reading() as db:
        rows = db.execute(
            f"SELECT {_OFFER_COLUMNS} FROM {_OFFER_JOIN} WHERE {' AND '.join(where)} ORDER BY o.id",
            params,
        ).fetchall()
    return [_offer_row(r) for r in rows]
