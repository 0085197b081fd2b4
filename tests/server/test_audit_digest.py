"""A finished tournament's audit bundle is the same bytes to every user, every time, and
after a restart; every place that shows its digest (each user's `arena remote audit`,
`tournament show`, `arena audit` on a saved copy or on the data directory) shows one."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest

from arena.cli import main
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.server.app import create_server
from arena.store import Store, TournamentConfig, create_token
from arena.testing.demo_data import finished_round_robin

BOTS = ("alpha", "beta", "gamma")
NAME = "same-for-all"


@contextmanager
def _served(data: Path) -> Iterator[int]:
    """A real arena server on the data directory ``data``, on a port of its own."""
    store = Store.open(data)
    server, port = create_server("127.0.0.1:0", store=store)
    server.start()
    try:
        yield port
    finally:
        server.stop(grace=None)
        store.close()


def _stream_bytes(port: int, token: str) -> bytes:
    """GetAuditBundle's messages as received, each serialized and length-prefixed."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.ArenaServiceStub(channel)
        replies = stub.GetAuditBundle(pb.GetAuditBundleRequest(name=NAME),
                                      metadata=(("authorization", f"Bearer {token}"),))  # fmt: skip
        return b"".join(len(m := r.SerializeToString()).to_bytes(4, "big") + m for r in replies)


def _cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str,
         stdin: str = "") -> str:  # fmt: skip
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    capsys.readouterr()
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert status == 0, (argv, out, err)
    return out


@pytest.mark.slow
def test_every_user_gets_the_same_bundle_bytes_and_digest_before_and_after_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    with Store.open(data) as store:
        config = TournamentConfig(games_per_match=2, seed=9)
        finished_round_robin(store, tmp_path / "bots", NAME, BOTS, config)
        tokens = {user: create_token(store, user) for user in ("alice", "bob")}
    monkeypatch.delenv("COLUMNS", raising=False)
    digests: set[str] = set()
    saved: dict[str, bytes] = {}
    streams: list[bytes] = []
    for run in ("first", "restarted"):
        with _served(data) as port:
            for user, token in tokens.items():
                streams.append(_stream_bytes(port, token))
                monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / f"{user}-config"))
                _cli(capsys, monkeypatch, "remote", "login", f"grpc://127.0.0.1:{port}",
                     stdin=token + "\n")  # fmt: skip
                path = tmp_path / f"{user}-{run}.json"
                verdict = json.loads(_cli(capsys, monkeypatch, "remote", "audit", NAME,
                                          "--save", str(path), "--json"))  # fmt: skip
                assert verdict["ok"], verdict
                saved[path.name] = path.read_bytes()
                shown = json.loads(_cli(capsys, monkeypatch, "remote", "tournament", "show",
                                        NAME, "--json"))  # fmt: skip
                text = _cli(capsys, monkeypatch, "remote", "tournament", "show", NAME)
                digests |= {verdict["digest"], shown["audit_digest"]}
                assert f"audit bundle digest {verdict['digest']}" in text
                held = _cli(capsys, monkeypatch, "remote", "audit", NAME, "--expect-digest",
                            verdict["digest"].upper())  # fmt: skip
                assert f"the bundle's digest is {verdict['digest']}" in held
    assert len(set(streams)) == 1 and len(streams) == 4
    assert len(set(saved.values())) == 1, "two users, or a restart, got other bytes"
    offline = json.loads(_cli(capsys, monkeypatch, "audit", "--bundle",
                              str(tmp_path / "bob-restarted.json"), "--json"))  # fmt: skip
    stored = json.loads(_cli(capsys, monkeypatch, "audit", NAME, "--data-dir", str(data),
                             "--json"))  # fmt: skip
    digests |= {offline["digest"], stored["digest"]}
    assert len(digests) == 1 and None not in digests, digests
