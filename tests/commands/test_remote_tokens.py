"""`arena remote token create | list | revoke`: the pure parts, then the admin away from the
server against a real `arena serve` process, printing what `arena token` prints there."""

from __future__ import annotations

import argparse
import io
import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from arena.cli import main
from arena.commands import remote
from arena.commands.tokens import token_json, token_lines
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.server.convert import token_pb
from arena.store import Store, create_token, list_tokens, revoke_tokens

# ------------------------------------------------------------------ pure parts


def test_a_listed_token_prints_as_the_local_list_prints_it(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "data")
    try:
        create_token(store, "ann")
        revoke_tokens(store, user="ann")
        create_token(store, "bob", "admin")
        rows = list_tokens(store)
    finally:
        store.close()
    local = [token_json(row) for row in rows]
    remote_rows = [remote.remote_token_json(token_pb(row)) for row in rows]
    assert remote_rows == local
    assert token_lines(remote_rows) == token_lines(local)


@pytest.mark.parametrize(
    ("token_id", "words"),
    [(0, "got 0"), (-3, "got -3"), (2**63, f"at most {2**63 - 1}, got {2**63}")],
)
def test_an_id_no_call_can_carry_is_refused_before_any_call(token_id: int, words: str) -> None:
    with pytest.raises(remote.RemoteError) as refused:
        remote.revoke_request(argparse.Namespace(id=token_id, user=None))
    assert refused.value.status == remote.EXIT_USAGE
    assert refused.value.message.startswith("ID must be a positive token id") and words in (
        refused.value.message
    )


@pytest.mark.parametrize("words", [["token", "revoke"], ["remote", "token", "revoke"]])
@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("alice", "'alice' is not a token id (the number `list` shows); every token of a user:"
                  " --user alice"),
        ("3x", "'3x' is not a token id"),
    ],
)  # fmt: skip
def test_a_name_given_as_the_id_says_to_use_user(
    capsys: pytest.CaptureFixture[str], words: list[str], given: str, message: str
) -> None:
    with pytest.raises(SystemExit) as ended:
        main([*words, given])
    assert ended.value.code == 2
    assert f"error: argument id: {message}" in capsys.readouterr().err


@pytest.mark.parametrize("words", [["token", "revoke"], ["remote", "token", "revoke"]])
@pytest.mark.parametrize(
    ("given", "message"),
    [
        (str(2**63), f"{2**63} is past the largest token id, {2**63 - 1}"),
        ("9" * 60, f"a number of 60 digits is past the largest token id, {2**63 - 1}"),
    ],
    ids=["one-past", "sixty-digits"],
)  # fmt: skip
def test_an_id_past_the_largest_is_refused_naming_the_limit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, words: list[str], given: str,
    message: str,
) -> None:  # fmt: skip
    """The store's ids are SQLite's 64-bit integers: a larger number is no token's."""
    with pytest.raises(SystemExit) as ended:
        main([*words, given, *(["--data-dir", str(tmp_path)] if words[0] == "token" else [])])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument id: {message}" in err and "Traceback" not in err, err


# ------------------------------------------------------------------ a real arena serve


@dataclass
class Serve:
    port: int
    data: Path
    admin: str


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    data = tmp_path / "data"
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--data-dir", str(data),
         "--no-cpu-pinning"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        port = admin = None
        for _ in range(20):
            line = process.stdout.readline()
            if found := re.search(r"listening on 127\.0\.0\.1:(\d+)", line):
                port = int(found.group(1))
            if found := re.search(r"admin token: (\S+)", line):
                admin = Path(found.group(1)).read_text().strip()
            if port is not None and admin is not None:
                break
        assert port is not None and admin is not None, "arena serve printed no port or token"
        yield Serve(port, data, admin)
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)


@dataclass
class Run:
    status: int
    out: str
    err: str


def _arena(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str,
           stdin: str = "") -> Run:  # fmt: skip
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    capsys.readouterr()
    status = main(list(argv))
    captured = capsys.readouterr()
    return Run(status, captured.out, captured.err)


@pytest.mark.slow
def test_the_admin_away_from_the_server_lists_and_revokes_a_stolen_token(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Through `arena remote` only: make a user's token, see it listed as `arena token list`
    shows it on the server (never the token), revoke it: its open stream ends, saying so;
    the admin's own login is never revoked; a user may do none of it."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    def arena(*argv: str, stdin: str = "") -> Run:
        return _arena(capsys, monkeypatch, *argv, stdin=stdin)

    def refused(result: Run, status: int, words: str) -> None:
        assert result.status == status, result
        assert result.err.startswith("arena remote: ") and words in result.err, result.err

    url = f"grpc://127.0.0.1:{serve.port}"
    assert arena("remote", "login", url, stdin=serve.admin + "\n").status == 0
    made = arena("remote", "token", "create", "ann", "--expires-in", "30d")
    assert made.status == 0, made
    ann = made.out.strip()
    for flags in ([], ["--json"]):  # what the server's own list prints, to the character
        listed = arena("remote", "token", "list", *flags)
        local = arena("token", "list", "--data-dir", str(serve.data), *flags)
        assert listed.status == 0 and listed.out == local.out, (listed, local)
        assert ann not in listed.out and serve.admin not in listed.out
    [row] = json.loads(arena("remote", "token", "list", "--user", "ann", "--json").out)
    assert row["user"] == "ann" and row["state"] == "active" and row["expires_at"]

    with grpc.insecure_channel(f"127.0.0.1:{serve.port}") as channel:
        stub = pb_grpc.ArenaServiceStub(channel)
        as_ann = (("authorization", f"Bearer {ann}"),)
        stub.RegisterRemoteBot(pb.RegisterRemoteBotRequest(name="ann_remote"), metadata=as_ann)
        seats = stub.WaitForSeats(pb.WaitForSeatsRequest(bot="ann_remote"), metadata=as_ann,
                                  timeout=30)  # fmt: skip

        refused(arena("remote", "token", "revoke", "1"), remote.EXIT_REFUSED,
                "token 1 is the token of this call")  # fmt: skip
        refused(arena("remote", "token", "revoke", "--user", "admin"), remote.EXIT_REFUSED,
                "token 1 is the token of this call")  # fmt: skip
        refused(arena("remote", "token", "revoke", "99"), remote.EXIT_NOT_FOUND, "no token 99")
        revoked = arena("remote", "token", "revoke", str(row["id"]))
        assert revoked.status == 0 and revoked.out == f"revoked token {row['id']} of ann (user)\n"
        with pytest.raises(grpc.RpcError) as ended:  # within the 5 s an open stream is given
            next(seats)
        assert ended.value.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
        assert ended.value.details().startswith("token revoked at ")  # type: ignore[attr-defined]
    again = arena("remote", "token", "revoke", "--user", "ann")
    assert again.status == 0 and again.out == "already revoked: nothing changed\n"

    bob = arena("remote", "token", "create", "bob").out.strip()
    assert arena("remote", "login", url, stdin=bob + "\n").status == 0
    for argv in (["list"], ["revoke", "--user", "bob"], ["create", "eve"]):
        refused(arena("remote", "token", *argv), remote.EXIT_PERMISSION,
                "this call needs the admin token")  # fmt: skip
