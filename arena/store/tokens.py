"""Bearer tokens for `arena serve`: only their SHA-256 is stored."""

from __future__ import annotations

import hashlib
import os
import re
import secrets

from arena.store.db import Store, StoreError, utc_now
from arena.store.models import Principal
from arena.store.paths import ADMIN_TOKEN_NAME

USER_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,39}")
ROLES = ("admin", "user")


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_user_name(user: object, what: str = "user name") -> None:
    """Refuse (StoreError) anything that cannot be a user's name: no token could carry it."""
    if not isinstance(user, str) or not USER_PATTERN.fullmatch(user):
        raise StoreError(f"{what} {user!r}: use 1-40 letters, digits, - _ .")


def create_token(store: Store, user: str, role: str = "user") -> str:
    """A new random token for ``user``; returned once, stored only as a hash."""
    check_user_name(user)
    if role not in ROLES:
        raise StoreError(f"role must be admin or user, got {role!r}")
    token = secrets.token_urlsafe(32)
    with store.transaction() as db:
        db.execute(
            "INSERT INTO tokens (token_sha256, user, role, created_at) VALUES (?, ?, ?, ?)",
            (_digest(token), user, role, utc_now()),
        )
    return token


def check_token(store: Store, token: str) -> Principal | None:
    """Who ``token`` belongs to, or None."""
    with store.reading() as db:
        row = db.execute(
            "SELECT user, role FROM tokens WHERE token_sha256 = ?", (_digest(token),)
        ).fetchone()
    return None if row is None else Principal(row["user"], row["role"])


def ensure_admin_token(store: Store) -> str:
    """The admin token kept in ``DATA_DIR/admin.token`` (mode 0600), created on first use."""
    path = store.data_dir / ADMIN_TOKEN_NAME
    if path.exists():
        token = path.read_text(encoding="utf-8").strip()
        principal = check_token(store, token)
        if principal is not None and principal.is_admin:
            return token
    token = create_token(store, "admin", "admin")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token
