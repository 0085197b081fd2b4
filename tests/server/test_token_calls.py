"""ListUserTokens and RevokeUserToken against a real server on port 0: the admin's only,
never a token's secret, never the token of the call itself."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import grpc
import pytest

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.server.app import create_server
from arena.store import Store, create_token, ensure_admin_token

pytestmark = pytest.mark.slow
Code = grpc.StatusCode


@dataclass
class Arena:
    stub: pb_grpc.ArenaServiceStub
    store: Store
    admin: str
    alice: str
    bob: str

    def tokens(self) -> list[tuple[object, ...]]:
        """The stored tokens, every column: what a refused call must leave as it was."""
        db = sqlite3.connect(self.store.data_dir / "arena.db")
        try:
            return list(db.execute("SELECT rowid, * FROM tokens ORDER BY rowid"))
        finally:
            db.close()

    def id_of(self, token: str) -> int:
        digest = hashlib.sha256(token.encode()).hexdigest()
        return next(int(row[0]) for row in self.tokens() if digest in row)


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@pytest.fixture
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    store = Store.open(tmp_path_factory.mktemp("tokens") / "data")
    server, port = create_server("127.0.0.1:0", store=store)
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield Arena(pb_grpc.ArenaServiceStub(channel), store, ensure_admin_token(store),
                    create_token(store, "alice"), create_token(store, "bob"))  # fmt: skip
    finally:
        channel.close()
        server.stop(grace=None).wait(10)
        store.close()


def _refused(call: Callable[[], object]) -> tuple[Code, str]:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    error = caught.value
    assert isinstance(error, grpc.Call)
    return error.code(), error.details() or ""


CALLS: dict[str, Callable[[pb_grpc.ArenaServiceStub, tuple[tuple[str, str], ...]], object]] = {
    "ListUserTokens": lambda s, m: s.ListUserTokens(pb.ListUserTokensRequest(), metadata=m),
    "RevokeUserToken": lambda s, m: s.RevokeUserToken(
        pb.RevokeUserTokenRequest(user="bob"), metadata=m
    ),
}


@pytest.mark.parametrize("rpc", sorted(CALLS))
@pytest.mark.parametrize(
    ("who", "code", "words"),
    [
        ("alice", Code.PERMISSION_DENIED, "this call needs the admin token"),
        ("nobody", Code.UNAUTHENTICATED, "unknown token"),
    ],
)
def test_only_the_admin_lists_and_revokes_tokens(
    arena: Arena, rpc: str, who: str, code: Code, words: str
) -> None:
    before = arena.tokens()
    token = arena.alice if who == "alice" else "not-a-token"
    assert _refused(lambda: CALLS[rpc](arena.stub, _auth(token))) == (code, words)
    assert arena.tokens() == before


def test_the_list_shows_every_token_but_never_one_itself(arena: Arena) -> None:
    listed = arena.stub.ListUserTokens(pb.ListUserTokensRequest(), metadata=_auth(arena.admin))
    assert [(t.user, t.role, t.state) for t in listed.tokens] == [
        ("admin", "admin", "active"), ("alice", "user", "active"), ("bob", "user", "active"),
    ]  # fmt: skip
    for token, shown in zip((arena.admin, arena.alice, arena.bob), listed.tokens, strict=True):
        assert shown.sha256_prefix == hashlib.sha256(token.encode()).hexdigest()[:12]
        assert shown.id == arena.id_of(token) and shown.created_at and not shown.revoked_at
        assert token not in str(shown) and shown.expires_at == ""
    bob = arena.stub.ListUserTokens(pb.ListUserTokensRequest(user="bob"),
                                    metadata=_auth(arena.admin))  # fmt: skip
    assert [t.user for t in bob.tokens] == ["bob"]
    assert _refused(lambda: arena.stub.ListUserTokens(
        pb.ListUserTokensRequest(user="../x"), metadata=_auth(arena.admin)
    )) == (Code.INVALID_ARGUMENT, "user name '../x': use 1-40 letters, digits, - _ .")  # fmt: skip


REFUSALS: list[tuple[str, Callable[[Arena], pb.RevokeUserTokenRequest], Code, str]] = [
    ("neither id nor user", lambda a: pb.RevokeUserTokenRequest(), Code.INVALID_ARGUMENT,
     "name the token to revoke: its id (ListUserTokens) or a user"),
    ("id 0", lambda a: pb.RevokeUserTokenRequest(id=0), Code.NOT_FOUND, "no token 0"),
    ("a negative id", lambda a: pb.RevokeUserTokenRequest(id=-4), Code.NOT_FOUND, "no token -4"),
    ("an unknown id", lambda a: pb.RevokeUserTokenRequest(id=99), Code.NOT_FOUND, "no token 99"),
    ("an unknown user", lambda a: pb.RevokeUserTokenRequest(user="carol"), Code.NOT_FOUND,
     "no token of user 'carol'"),
    ("a bad user name", lambda a: pb.RevokeUserTokenRequest(user="../x"),
     Code.INVALID_ARGUMENT, "user name '../x': use 1-40 letters, digits, - _ ."),
    ("the token of the call, by id",
     lambda a: pb.RevokeUserTokenRequest(id=a.id_of(a.admin)), Code.FAILED_PRECONDITION,
     "token 1 is the token of this call: revoked, it would lock you out; revoke it from"
     " another admin token, or on the server (`arena token revoke 1`)"),
    ("the token of the call, by its user", lambda a: pb.RevokeUserTokenRequest(user="admin"),
     Code.FAILED_PRECONDITION, "token 1 is the token of this call"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("make", "code", "words"), [case[1:] for case in REFUSALS], ids=[c[0] for c in REFUSALS]
)
def test_a_refused_revocation_names_why_and_revokes_nothing(
    arena: Arena, make: Callable[[Arena], pb.RevokeUserTokenRequest], code: Code, words: str
) -> None:
    before = arena.tokens()
    request = make(arena)
    got = _refused(lambda: arena.stub.RevokeUserToken(request, metadata=_auth(arena.admin)))
    assert got[0] == code and got[1].startswith(words), got
    assert arena.tokens() == before


@pytest.mark.parametrize("by", ["id", "user"])
def test_a_revoked_token_is_refused_at_once_and_a_second_revocation_changes_nothing(
    arena: Arena, by: str
) -> None:
    second = create_token(arena.store, "alice")
    request = (pb.RevokeUserTokenRequest(id=arena.id_of(arena.alice)) if by == "id"
               else pb.RevokeUserTokenRequest(user="alice"))  # fmt: skip
    reply = arena.stub.RevokeUserToken(request, metadata=_auth(arena.admin))
    revoked = [arena.alice] if by == "id" else [arena.alice, second]
    assert [t.id for t in reply.revoked] == [arena.id_of(token) for token in revoked]
    assert all(t.state == "revoked" and t.revoked_at and t.user == "alice" for t in reply.revoked)
    for token in revoked:  # this process's answers are forgotten: refused from the next call
        code, details = _refused(lambda t=token: arena.stub.ListBots(pb.ListBotsRequest(),
                                                                    metadata=_auth(t)))  # fmt: skip
        assert code is Code.UNAUTHENTICATED and details.startswith("token revoked at "), details
    if by == "id":
        arena.stub.ListBots(pb.ListBotsRequest(), metadata=_auth(second))  # still live
    arena.stub.ListBots(pb.ListBotsRequest(), metadata=_auth(arena.bob))
    again = arena.stub.RevokeUserToken(request, metadata=_auth(arena.admin))
    assert list(again.revoked) == []


def test_another_admin_token_may_revoke_the_admin_token(arena: Arena) -> None:
    """Only the token of the call is spared: a second admin token (`arena token create ops
    --admin`) revokes a stolen admin.token, and the admin calls go on with it."""
    ops = create_token(arena.store, "ops", "admin")
    reply = arena.stub.RevokeUserToken(pb.RevokeUserTokenRequest(user="admin"),
                                       metadata=_auth(ops))  # fmt: skip
    assert [t.user for t in reply.revoked] == ["admin"]
    code, _ = _refused(lambda: arena.stub.ListUserTokens(pb.ListUserTokensRequest(),
                                                         metadata=_auth(arena.admin)))  # fmt: skip
    assert code is Code.UNAUTHENTICATED
    listed = arena.stub.ListUserTokens(pb.ListUserTokensRequest(), metadata=_auth(ops))
    assert [(t.user, t.state) for t in listed.tokens] == [("admin", "revoked"), ("alice", "active"),
                                                          ("bob", "active"), ("ops", "active")]


PAST_LIFETIME = "expires_in_s must be at most 315360000 (3650 days), got "


@pytest.mark.parametrize(
    ("expires_in_s", "words"),
    [
        (-1, "expires_in_s must be 0 or more"),
        (3650 * 86_400 + 1, PAST_LIFETIME),
        (10**14, PAST_LIFETIME),
        (2**63 - 1, PAST_LIFETIME),  # past any timedelta (an OverflowError, not INTERNAL)
    ],
)
def test_a_lifetime_past_the_limit_is_refused_naming_it(
    arena: Arena, expires_in_s: int, words: str
) -> None:
    before = arena.tokens()
    request = pb.CreateUserTokenRequest(user="carol", expires_in_s=expires_in_s)
    got = _refused(lambda: arena.stub.CreateUserToken(request, metadata=_auth(arena.admin)))
    assert got[0] is Code.INVALID_ARGUMENT and got[1].startswith(words), got
    assert arena.tokens() == before
