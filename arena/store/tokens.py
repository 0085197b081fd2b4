"""Bearer tokens for `arena serve`: only their SHA-256 is stored.

A token may expire (``expires_at``, set when it is made) and the admin may
revoke it; either way it is refused from then on (a revocation by another
process within ``AUTH_CACHE_S``), with a message saying which
(``TokenRefusedError``), by every path that takes a token.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from arena.quoting import quoted
from arena.store.db import NotFoundError, Store, StoreError, utc_now
from arena.store.kept import KeptAnswers
from arena.store.models import Principal
from arena.store.paths import ADMIN_TOKEN_NAME

USER_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,39}")
ROLES = ("admin", "user")
ADMIN_USER = "admin"
"""The admin's user name (``ensure_admin_token``): no user token is ever made for it."""
MAX_LIFETIME = timedelta(days=3650)
SHOWN_DIGEST_CHARS = 12
"""How many hex digits of a token's SHA-256 a list shows (`arena token list`, the API)."""


class TokenRefusedError(StoreError):
    """A token that is unknown, revoked or expired; the message says which."""


class SparedTokenError(StoreError):
    """A revocation that would take the one token it must spare (the caller's own)."""


@dataclass(frozen=True, slots=True)
class TokenRow:
    """A stored token (never the token itself: ``digest`` is its SHA-256, for telling
    tokens apart: ``sha256sum`` of a token one holds starts the same)."""

    id: int
    user: str
    role: str
    created_at: str
    expires_at: str | None
    revoked_at: str | None
    digest: str

    @property
    def shown_digest(self) -> str:
        """The start of ``digest`` that lists show: enough to tell a user's tokens apart."""
        return self.digest[:SHOWN_DIGEST_CHARS]

    def state(self, now: str | None = None) -> str:
        """``active``, ``revoked`` or ``expired`` (at ``now``, ISO UTC; default: now)."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= (now or utc_now()):
            return "expired"
        return "active"


def token_digest(token: str) -> str:
    """The SHA-256 (hex) of ``token``: what the store keeps of it (``TokenRow.digest``)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


_digest = token_digest


def check_user_name(user: object, what: str = "user name") -> None:
    """Refuse (StoreError) anything that cannot be a user's name: no token could carry it."""
    if not isinstance(user, str) or not USER_PATTERN.fullmatch(user):
        raise StoreError(f"{what} {quoted(user)}: use 1-40 letters, digits, - _ .")


def create_token(
    store: Store, user: str, role: str = "user", *, lifetime: timedelta | None = None
) -> str:
    """A new random token for ``user``; returned once, stored only as a hash.

    ``lifetime``: it expires that long from now (None: never).
    """
    check_user_name(user)
    if role not in ROLES:
        raise StoreError(f"role must be admin or user, got {role!r}")
    expires_at = None
    if lifetime is not None:
        if not timedelta(0) < lifetime <= MAX_LIFETIME:
            raise StoreError(
                f"a token's lifetime must be more than 0 and at most {MAX_LIFETIME.days} days"
            )
        expires_at = (datetime.now(UTC) + lifetime).isoformat(timespec="milliseconds")
    if role == "user" and user.lower() == ADMIN_USER:
        raise StoreError(
            f"user name {user!r} is the admin's: a user token for it would own the admin's"
            " bots; choose another name"
        )
    return _insert_token(store, user, role, expires_at)


def _insert_token(store: Store, user: str, role: str, expires_at: str | None) -> str:
    """Store a new token's hash for ``user`` in ``role``: one name, one role, one spelling.

    Bots, games and limits belong to a user by name, so a name another role holds, or
    one that differs from a user's only in case, would share or mimic what is theirs.
    """
    token = secrets.token_urlsafe(32)
    with store.transaction() as db:
        for other, other_role in db.execute(
            "SELECT DISTINCT user, role FROM tokens WHERE lower(user) = lower(?)", (user,)
        ):
            if other != user:
                raise StoreError(
                    f"user name {user!r} differs only in case from the user {other!r}:"
                    " choose another name (or give that user a token)"
                )
            if other_role != role:
                raise StoreError(
                    f"{user!r} already holds {other_role} tokens; a name has one role:"
                    f" a {role} token for it would own what is theirs; choose another name"
                )
        db.execute(
            "INSERT INTO tokens (token_sha256, user, role, created_at, expires_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (_digest(token), user, role, utc_now(), expires_at),
        )
    _answers.forget()
    return token


AUTH_CACHE_S = 2.0
"""How long an answer of ``authenticate`` is kept in memory: a flood of calls with one
token reads the store once per AUTH_CACHE_S. This process's token writes clear it (an
answer read before such a write is not kept, even by a call that read it meanwhile);
another process's (`arena token revoke`) apply within AUTH_CACHE_S."""
_answers: KeptAnswers[tuple[str, str], Principal | str] = KeptAnswers(AUTH_CACHE_S)


def authenticate(store: Store, token: str) -> Principal:
    """Who ``token`` belongs to; TokenRefusedError saying why not (unknown, revoked, expired)."""

    def read() -> Principal | str:
        try:
            return _authenticate(store, token)
        except TokenRefusedError as refused:
            return str(refused)

    answer = _answers.get((str(store.data_dir), _digest(token)), read)
    if isinstance(answer, str):
        raise TokenRefusedError(answer)
    return answer


def _authenticate(store: Store, token: str) -> Principal:
    with store.reading() as db:
        row = db.execute(
            "SELECT user, role, expires_at, revoked_at FROM tokens WHERE token_sha256 = ?",
            (_digest(token),),
        ).fetchone()
    if row is None:
        raise TokenRefusedError("unknown token")
    if row["revoked_at"] is not None:
        raise TokenRefusedError(
            f"token revoked at {row['revoked_at']} (ask the admin for a new one)"
        )
    if row["expires_at"] is not None and row["expires_at"] <= utc_now():
        raise TokenRefusedError(
            f"token expired at {row['expires_at']} (ask the admin for a new one)"
        )
    return Principal(row["user"], row["role"])


def check_token(store: Store, token: str) -> Principal | None:
    """Who ``token`` belongs to, or None (unknown, revoked or expired: ``authenticate`` says)."""
    try:
        return authenticate(store, token)
    except TokenRefusedError:
        return None


def user_has_live_token(store: Store, user: str) -> bool:
    """Whether ``user`` holds a token that is neither revoked nor expired."""
    with store.reading() as db:
        row = db.execute(
            "SELECT 1 FROM tokens WHERE user = ? AND revoked_at IS NULL"
            " AND (expires_at IS NULL OR expires_at > ?) LIMIT 1",
            (user, utc_now()),
        ).fetchone()
    return row is not None


def list_tokens(store: Store, user: str | None = None) -> list[TokenRow]:
    """Every stored token (of ``user``), oldest first."""
    where, params = ("WHERE user = ?", (user,)) if user is not None else ("", ())
    with store.reading() as db:
        rows = db.execute(
            "SELECT rowid AS id, user, role, created_at, expires_at, revoked_at, token_sha256"
            f" FROM tokens {where} ORDER BY rowid",
            params,
        ).fetchall()
    return [
        TokenRow(r["id"], r["user"], r["role"], r["created_at"], r["expires_at"],
                 r["revoked_at"], r["token_sha256"])
        for r in rows
    ]  # fmt: skip


def revoke_tokens(
    store: Store, *, token_id: int | None = None, user: str | None = None,
    spare: str | None = None,
) -> list[TokenRow]:  # fmt: skip
    """Revoke one token (by id) or every token of ``user``; the tokens revoked now.

    NotFoundError when the id or the user names no token; one already revoked stays as it was.
    ``spare``: the digest of a token that must stay live (the caller's own, whose loss
    would lock the caller out): SparedTokenError, and nothing revoked, when it is among them.
    """
    if (token_id is None) == (user is None):
        raise StoreError("revoke needs exactly one of a token id and a user")
    column, value = ("rowid", token_id) if user is None else ("user", user)
    with store.transaction() as db:
        found = db.execute(f"SELECT COUNT(*) FROM tokens WHERE {column} = ?", (value,)).fetchone()
        if found[0] == 0:
            raise NotFoundError(
                f"no token {token_id}" if user is None else f"no token of user {quoted(user)}"
            )
        live = db.execute(
            f"SELECT rowid, token_sha256 FROM tokens WHERE {column} = ? AND revoked_at IS NULL",
            (value,),
        ).fetchall()
        for row_id, digest in live:
            if spare is not None and digest == spare:
                raise SparedTokenError(
                    f"token {row_id} is the token of this call: revoked, it would lock you"
                    " out; revoke it from another admin token, or on the server"
                    f" (`arena token revoke {row_id}`)"
                )
        ids = [row_id for row_id, _ in live]
        db.executemany(
            "UPDATE tokens SET revoked_at = ? WHERE rowid = ?", [(utc_now(), i) for i in ids]
        )
    _answers.forget()
    return [row for row in list_tokens(store) if row.id in ids]


def ensure_admin_token(store: Store) -> str:
    """The admin token kept in ``DATA_DIR/admin.token`` (mode 0600), created on first use."""
    path = store.data_dir / ADMIN_TOKEN_NAME
    if path.exists():
        token = path.read_text(encoding="utf-8").strip()
        principal = check_token(store, token)
        if principal is not None and principal.is_admin:
            return token
    token = _insert_token(store, ADMIN_USER, "admin", None)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token
