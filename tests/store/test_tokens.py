"""Tokens: hashes only, expiry, revocation by id or user, and the reason each refusal names."""

from __future__ import annotations

import sqlite3
import threading
from datetime import timedelta
from typing import Any

import pytest

from arena.store import (
    NotFoundError,
    Principal,
    Store,
    StoreError,
    TokenRefusedError,
    authenticate,
    check_token,
    create_token,
    list_tokens,
    revoke_tokens,
    tokens,
    user_has_live_token,
)
from arena.testing.waiting import wait_until


def _expire_now(store: Store, token_id: int) -> None:
    """Move a token's expiry into the past (as time passing would)."""
    db = sqlite3.connect(store.data_dir / "arena.db")
    with db:
        db.execute(
            "UPDATE tokens SET expires_at = '2000-01-01T00:00:00.000+00:00' WHERE rowid = ?",
            (token_id,),
        )
    db.close()


def test_a_token_is_listed_by_hash_only_and_authenticates_its_user(store: Store) -> None:
    token = create_token(store, "alice", lifetime=timedelta(days=30))
    [row] = list_tokens(store)
    assert (row.user, row.role, row.state(), row.revoked_at) == ("alice", "user", "active", None)
    assert row.expires_at is not None and row.expires_at > row.created_at
    assert token not in repr(list_tokens(store))
    assert authenticate(store, token) == Principal("alice", "user")


def test_a_revoked_token_is_refused_saying_so_and_others_still_work(store: Store) -> None:
    first, second = create_token(store, "alice"), create_token(store, "alice")
    other = create_token(store, "bob")
    [revoked] = revoke_tokens(store, token_id=list_tokens(store, "alice")[0].id)
    assert revoked.state() == "revoked"
    with pytest.raises(TokenRefusedError, match=r"token revoked at \d{4}-"):
        authenticate(store, first)
    assert check_token(store, first) is None
    assert authenticate(store, second).user == "alice"
    assert revoke_tokens(store, user="alice")[0].user == "alice"  # the one still active
    assert revoke_tokens(store, user="alice") == []  # revoking again changes nothing
    assert not user_has_live_token(store, "alice")
    assert authenticate(store, other).user == "bob" and user_has_live_token(store, "bob")


def test_a_token_revoked_while_a_call_reads_it_is_refused_from_the_next_call_on(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call's check reads the token as valid; a revoke in this process lands before
    the check keeps its answer. The check's answer stands for that call, but the next
    call is refused: no answer read before a token write of this process is kept.

    The race, forced: the check's read of the store is held until the revoke is done."""
    token = create_token(store, "mallory")
    read = tokens._authenticate
    have_read, revoked = threading.Event(), threading.Event()

    def held(*args: Any) -> Principal:
        answer = read(*args)
        have_read.set()
        assert revoked.wait(30), "the revoke never came"
        return answer

    monkeypatch.setattr(tokens, "_authenticate", held)
    answers: list[object] = []
    call = threading.Thread(target=lambda: answers.append(authenticate(store, token)))
    call.start()
    wait_until(have_read.is_set, "the call's check read the token", 10)
    revoke_tokens(store, user="mallory")
    revoked.set()
    call.join(10)
    assert answers == [Principal("mallory", "user")]  # read before the revoke
    with pytest.raises(TokenRefusedError, match=r"token revoked at \d{4}-"):
        authenticate(store, token)


def test_an_expired_token_is_refused_saying_so(store: Store) -> None:
    token = create_token(store, "alice", lifetime=timedelta(hours=1))
    _expire_now(store, list_tokens(store)[0].id)
    with pytest.raises(TokenRefusedError, match=r"token expired at 2000-01-01"):
        authenticate(store, token)
    assert list_tokens(store)[0].state() == "expired"
    assert not user_has_live_token(store, "alice")


def test_an_unknown_token_is_refused_as_unknown(store: Store) -> None:
    with pytest.raises(TokenRefusedError, match=r"^unknown token$"):
        authenticate(store, "not-a-token")


@pytest.mark.parametrize(
    "lifetime", [timedelta(0), timedelta(seconds=-5), timedelta(days=3651)],
    ids=["zero", "negative", "past-ten-years"],
)  # fmt: skip
def test_a_lifetime_out_of_range_is_refused_and_nothing_is_stored(
    store: Store, lifetime: timedelta
) -> None:
    with pytest.raises(StoreError, match="lifetime"):
        create_token(store, "alice", lifetime=lifetime)
    assert list_tokens(store) == []


def test_revoking_what_does_not_exist_is_named(store: Store) -> None:
    create_token(store, "alice")
    with pytest.raises(NotFoundError, match="no token 99"):
        revoke_tokens(store, token_id=99)
    with pytest.raises(NotFoundError, match="no token of user 'bob'"):
        revoke_tokens(store, user="bob")
    with pytest.raises(StoreError, match="exactly one"):
        revoke_tokens(store)
    assert list_tokens(store)[0].state() == "active"


@pytest.mark.parametrize(
    ("before", "user", "role", "refusal"),
    [
        ([], "admin", "user", "is the admin's"),
        ([], "ADMIN", "user", "is the admin's"),
        ([("carol", "admin")], "carol", "user", "already holds admin tokens"),
        ([("dave", "user")], "dave", "admin", "already holds user tokens"),
        ([("alice", "user")], "Alice", "user", "differs only in case from the user 'alice'"),
        ([("Bob", "admin")], "bob", "admin", "differs only in case from the user 'Bob'"),
    ],
    ids=["admin-name", "admin-name-cased", "admin-as-user", "user-as-admin", "case", "case-admin"],
)  # fmt: skip
def test_a_name_has_one_role_and_one_spelling(
    store: Store, before: list[tuple[str, str]], user: str, role: str, refusal: str
) -> None:
    """Bots and games belong to a user by name: a token that would share another role's
    name, or mimic a user's in another case, is refused, and nothing is stored."""
    for name, its_role in before:
        create_token(store, name, its_role)
    with pytest.raises(StoreError, match=refusal):
        create_token(store, user, role)
    assert [(row.user, row.role) for row in list_tokens(store)] == before


def test_a_revoked_name_keeps_its_role_and_more_tokens_of_one_role_are_fine(
    store: Store,
) -> None:
    create_token(store, "carol", "admin")
    revoke_tokens(store, user="carol")
    with pytest.raises(StoreError, match="already holds admin tokens"):
        create_token(store, "carol")
    create_token(store, "carol", "admin")
    create_token(store, "alice")
    create_token(store, "alice")
    assert [row.user for row in list_tokens(store)] == ["carol", "carol", "alice", "alice"]


def test_the_admin_token_is_made_for_the_admin_name(store: Store) -> None:
    token = tokens.ensure_admin_token(store)
    assert authenticate(store, token) == Principal(tokens.ADMIN_USER, "admin")
    with pytest.raises(StoreError, match="is the admin's"):
        create_token(store, tokens.ADMIN_USER)
