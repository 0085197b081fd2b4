"""The arena API against a real server on port 0: auth, ownership, archives, requests."""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import sqlite3
import tarfile
import tempfile
import threading
import urllib.request
import uuid
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.bots.submission import SubmissionCheck, check_submission
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.referee import load_bot
from arena.referee.seeds import seed_commitment
from arena.server.app import create_server
from arena.server.arena_service import ServiceOptions
from arena.store import (
    Store,
    add_bot_version,
    create_token,
    ensure_admin_token,
    get_tournament,
    tournament_secret,
)
from arena.testing.demo_data import play_demo_tournament
from arena.testing.waiting import assert_stays, wait_until
from arena.tournament.policy.audit import AuditReport, audit_tournament
from arena.web import create_web_server
from tests.store.lease_holder import kill_9, lease_holding_process

pytestmark = pytest.mark.slow
Code = grpc.StatusCode


@dataclass
class Arena:
    stub: pb_grpc.ArenaServiceStub
    channel: grpc.Channel
    store: Store
    admin: str
    alice: str
    bob: str
    sources: Path

    def snapshot(self) -> list[object]:
        """Everything stored: every table's rows and every stored file."""
        db = sqlite3.connect(self.store.data_dir / "arena.db")
        rows: list[object] = []
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            rows += [(table, *r) for r in db.execute(f"SELECT * FROM {table} ORDER BY rowid")]
        files = sorted(
            str(p.relative_to(self.store.data_dir)) for p in self.store.bots_dir.rglob("*")
        )
        return [*rows, *files]


def _bot_dir(root: Path, name: str, body: str | None = None) -> Path:
    target = root / name
    shutil.copytree(SAMPLE_RANDOM_BOT, target, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (target / "bot.toml").read_text().replace('name = "python_random"', f'name = "{name}"')
    (target / "bot.toml").write_text(toml)
    if body is not None:
        (target / "bot.py").write_text(body)
    return target


def _tar_of(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(directory, arcname=directory.name)
    return buffer.getvalue()


def _zip_of(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(directory.rglob("*")):
            archive.write(path, path.relative_to(directory.parent).as_posix())
    return buffer.getvalue()


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    root = tmp_path_factory.mktemp("arena")
    store = Store.open(root / "data")
    opponent = load_bot(SAMPLE_RANDOM_BOT)
    options = ServiceOptions(
        concurrency=2, smoke_check=lambda d: check_submission(load_bot(d), opponent)
    )
    server, port = create_server("127.0.0.1:0", store=store, options=options)
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    arena = Arena(
        pb_grpc.ArenaServiceStub(channel),
        channel,
        store,
        ensure_admin_token(store),
        create_token(store, "alice"),
        create_token(store, "bob"),
        root / "sources",
    )
    arena.stub.SubmitBot(
        pb.SubmitBotRequest(archive=_tar_of(_bot_dir(arena.sources, "alice_bot"))),
        metadata=_auth(arena.alice),
    )
    arena.stub.SubmitBot(
        pb.SubmitBotRequest(archive=_zip_of(_bot_dir(arena.sources, "bob_bot"))),
        metadata=_auth(arena.bob),
    )
    yield arena
    channel.close()
    server.stop(grace=None)
    store.close()


def _code(call: Callable[[], object]) -> tuple[Code, str]:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    error = caught.value
    return error.code(), error.details()  # type: ignore[attr-defined]


CALLS: dict[str, Callable[[pb_grpc.ArenaServiceStub, tuple[tuple[str, str], ...]], object]] = {
    "SubmitBot": lambda s, m: s.SubmitBot(pb.SubmitBotRequest(archive=b"x"), metadata=m),
    "ListBots": lambda s, m: s.ListBots(pb.ListBotsRequest(), metadata=m),
    "GetBotFiles": lambda s, m: s.GetBotFiles(pb.GetBotFilesRequest(name="alice_bot"), metadata=m),
    "CreateTournament": lambda s, m: s.CreateTournament(pb.CreateTournamentRequest(), metadata=m),
    "StartTournament": lambda s, m: s.StartTournament(
        pb.StartTournamentRequest(name="x"), metadata=m
    ),
    "WatchTournament": lambda s, m: list(
        s.WatchTournament(pb.WatchTournamentRequest(name="x"), metadata=m)
    ),
    "GetLeaderboard": lambda s, m: s.GetLeaderboard(pb.GetLeaderboardRequest(), metadata=m),
    "GetGameRecord": lambda s, m: s.GetGameRecord(pb.GetGameRecordRequest(game_id=1), metadata=m),
    "CreateUserToken": lambda s, m: s.CreateUserToken(
        pb.CreateUserTokenRequest(user="eve"), metadata=m
    ),
}


@pytest.mark.parametrize("rpc", sorted(CALLS))
@pytest.mark.parametrize(
    "metadata",
    [
        (),
        (("authorization", "Bearer wrong-token"),),
        (("authorization", "Token abc"),),
        (("authorization", "Bearer "),),
    ],
    ids=["missing", "wrong", "not-bearer", "empty"],
)
def test_every_call_needs_a_valid_token(
    arena: Arena, rpc: str, metadata: tuple[tuple[str, str], ...]
) -> None:
    before = arena.snapshot()
    code, _ = _code(lambda: CALLS[rpc](arena.stub, metadata))
    assert code is Code.UNAUTHENTICATED
    assert arena.snapshot() == before


@pytest.mark.parametrize("rpc", ["CreateTournament", "StartTournament", "CreateUserToken"])
def test_admin_calls_refuse_users(arena: Arena, rpc: str) -> None:
    before = arena.snapshot()
    code, details = _code(lambda: CALLS[rpc](arena.stub, _auth(arena.alice)))
    assert code is Code.PERMISSION_DENIED and "admin" in details
    assert arena.snapshot() == before


def test_a_user_gets_their_own_bot_files_and_never_another_users(arena: Arena) -> None:
    mine = arena.stub.GetBotFiles(
        pb.GetBotFilesRequest(name="alice_bot"), metadata=_auth(arena.alice)
    )
    with tarfile.open(fileobj=io.BytesIO(mine.archive)) as archive:
        assert "alice_bot/bot.toml" in archive.getnames()
    code, details = _code(
        lambda: arena.stub.GetBotFiles(
            pb.GetBotFilesRequest(name="alice_bot"), metadata=_auth(arena.bob)
        )
    )
    assert code is Code.PERMISSION_DENIED and "another user" in details
    admin = arena.stub.GetBotFiles(
        pb.GetBotFilesRequest(name="bob_bot"), metadata=_auth(arena.admin)
    )
    assert admin.version
    code, _ = _code(
        lambda: arena.stub.GetBotFiles(
            pb.GetBotFilesRequest(name="nobody"), metadata=_auth(arena.bob)
        )
    )
    assert code is Code.NOT_FOUND


def test_a_user_cannot_submit_a_version_of_another_users_bot(arena: Arena) -> None:
    before = arena.snapshot()
    hijack = _bot_dir(arena.sources / "hijack", "alice_bot", "raise SystemExit(0)\n")
    code, details = _code(
        lambda: arena.stub.SubmitBot(
            pb.SubmitBotRequest(archive=_tar_of(hijack)), metadata=_auth(arena.bob)
        )
    )
    assert code is Code.PERMISSION_DENIED and "another user" in details
    assert arena.snapshot() == before


def test_resubmitting_the_same_bot_is_the_same_version(arena: Arena) -> None:
    again = arena.stub.SubmitBot(
        pb.SubmitBotRequest(archive=_zip_of(arena.sources / "alice_bot")),
        metadata=_auth(arena.alice),
    )
    assert not again.created and again.bot.owner == "alice"
    assert not again.HasField("conformance")  # nothing was played again


def _flat_zip_of(directory: Path) -> bytes:
    """What ``cd DIR && zip -r ../b.zip .`` makes: no top-level folder."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(directory.rglob("*")):
            archive.write(path, path.relative_to(directory).as_posix())
    return buffer.getvalue()


def _flat_tar_of(directory: Path) -> bytes:
    """What ``tar czf ../b.tgz -C DIR .`` makes: every name under ``./``."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(directory, arcname=".")
    return buffer.getvalue()


@pytest.mark.parametrize("fmt", ["zip", "tar"])
def test_a_bot_archived_without_a_top_level_folder_is_accepted(arena: Arena, fmt: str) -> None:
    directory = _bot_dir(arena.sources / f"flat-{fmt}", f"flat_{fmt}_bot")
    data = (_flat_zip_of if fmt == "zip" else _flat_tar_of)(directory)
    response = arena.stub.SubmitBot(
        pb.SubmitBotRequest(archive=data), metadata=_auth(arena.alice)
    )  # the smoke match runs the bot in the sandbox: its files must be readable there
    assert response.created and response.bot.name == f"flat_{fmt}_bot"
    found = response.conformance  # what the conformance check found, reported
    names = [scenario.name for scenario in found.scenarios]
    assert names[0] == "hello" and "hand_of_five" in names and names[-1] == "match_over_exit"
    assert all(scenario.passed for scenario in found.scenarios)
    assert found.launches == 2 and found.decisions > 0
    assert found.HasField("decision_ms_p99") and found.HasField("launch_ms_median")


def test_resubmitting_a_stored_version_does_not_play_the_smoke_match_again(
    tmp_path: Path,
) -> None:
    smoked: list[Path] = []

    def smoke_check(directory: Path) -> SubmissionCheck:
        smoked.append(directory)
        return SubmissionCheck()

    store = Store.open(tmp_path / "data")
    server, port = create_server(
        "127.0.0.1:0", store=store, options=ServiceOptions(concurrency=1, smoke_check=smoke_check)
    )
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ArenaServiceStub(channel)
            auth = _auth(create_token(store, "carol"))
            data = _tar_of(_bot_dir(tmp_path, "carol_bot"))
            first = stub.SubmitBot(pb.SubmitBotRequest(archive=data), metadata=auth)
            again = stub.SubmitBot(pb.SubmitBotRequest(archive=data), metadata=auth)
            changed = _bot_dir(tmp_path / "v2", "carol_bot", "print('v2')\n")
            newer = stub.SubmitBot(pb.SubmitBotRequest(archive=_tar_of(changed)), metadata=auth)
    finally:
        server.stop(None)
        store.close()
    assert (first.created, again.created, newer.created) == (True, False, True)
    assert again.bot.version == first.bot.version != newer.bot.version
    assert len(smoked) == 2  # the first and the changed version, not the resubmission


def test_a_bot_that_cannot_pass_its_checks_is_refused(arena: Arena) -> None:
    before = arena.snapshot()
    crasher = _bot_dir(arena.sources / "crash", "crasher", "raise SystemExit(3)\n")
    code, details = _code(
        lambda: arena.stub.SubmitBot(
            pb.SubmitBotRequest(archive=_tar_of(crasher)), metadata=_auth(arena.bob)
        )
    )
    assert code is Code.FAILED_PRECONDITION
    assert "conformance check failed: hello: crash before its Hello" in details
    assert arena.snapshot() == before


def test_a_smoke_refusal_shows_the_submitting_owner_their_bots_stderr(arena: Arena) -> None:
    secret = f"secret-{uuid.uuid4().hex}"
    body = f"import sys\nprint('cannot load {secret}', file=sys.stderr)\nraise SystemExit(3)\n"
    crasher = _bot_dir(arena.sources / "crash-loud", "loud_crasher", body)
    code, details = _code(
        lambda: arena.stub.SubmitBot(
            pb.SubmitBotRequest(archive=_tar_of(crasher)), metadata=_auth(arena.bob)
        )
    )
    assert code is Code.FAILED_PRECONDITION
    assert "process exited with status 3" in details and f"cannot load {secret}" in details


# ------------------------------------------------------------- malformed archives


def _tar(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def _info(
    name: str, kind: bytes = tarfile.REGTYPE, size: int = 0, link: str = ""
) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, size, link
    return info


TOML = b'name = "evil"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'


def _file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    return _info(name, size=len(data)), data


def _zip(*entries: tuple[str, bytes, int]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def _long_name_bomb(size: int) -> bytes:
    """A GNU long-name header declaring ``size`` bytes, and that many bytes after it, gzipped."""
    header = _info("././@LongLink", tarfile.GNUTYPE_LONGNAME, size=size).tobuf(tarfile.USTAR_FORMAT)
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [packer.compress(header)]
    out += [packer.compress(b"a" * (1 << 20)) for _ in range(size >> 20)]
    return b"".join([*out, packer.compress(bytes(1024)), packer.flush()])


BIG = 17 * 1024 * 1024
MALFORMED: dict[str, tuple[bytes, Code, str]] = {
    "zip-slip": (
        _zip(("bot.toml", TOML, 0o100644), ("../evil.txt", b"x", 0o100644)),
        Code.INVALID_ARGUMENT,
        "'..'",
    ),
    "tar-dotdot": (
        _tar(_file("bot.toml", TOML), _file("a/../../evil.txt", b"x")),
        Code.INVALID_ARGUMENT,
        "'..'",
    ),
    "absolute": (
        _tar(_file("bot.toml", TOML), _file("/tmp/evil.txt", b"x")),
        Code.INVALID_ARGUMENT,
        "absolute",
    ),
    "symlink-out": (
        _tar(_file("bot.toml", TOML), (_info("bot.py", tarfile.SYMTYPE, link="/etc/passwd"), None)),
        Code.INVALID_ARGUMENT,
        "outside",
    ),
    "symlink-up": (
        _tar(_file("bot.toml", TOML), (_info("d/x", tarfile.SYMTYPE, link="../../secret"), None)),
        Code.INVALID_ARGUMENT,
        "outside",
    ),
    "zip-symlink-out": (
        _zip(("bot.toml", TOML, 0o100644), ("bot.py", b"/etc/passwd", 0o120777)),
        Code.INVALID_ARGUMENT,
        "outside",
    ),
    "hard-link": (
        _tar(_file("bot.toml", TOML), (_info("h", tarfile.LNKTYPE, link="bot.toml"), None)),
        Code.INVALID_ARGUMENT,
        "hard link",
    ),
    "device": (
        _tar(_file("bot.toml", TOML), (_info("dev", tarfile.CHRTYPE), None)),
        Code.INVALID_ARGUMENT,
        "devices",
    ),
    "fifo": (
        _tar(_file("bot.toml", TOML), (_info("pipe", tarfile.FIFOTYPE), None)),
        Code.INVALID_ARGUMENT,
        "devices",
    ),
    "huge-file": (
        _tar(_file("bot.toml", TOML), _file("big.bin", bytes(BIG))),
        Code.RESOURCE_EXHAUSTED,
        "limit",
    ),
    "zip-huge-file": (
        _zip(("bot.toml", TOML, 0o100644), ("big.bin", bytes(BIG), 0o100644)),
        Code.RESOURCE_EXHAUSTED,
        "limit",
    ),
    "too-many-entries": (
        _tar(*[_file(f"f{i}", b"") for i in range(2001)]),
        Code.RESOURCE_EXHAUSTED,
        "entries",
    ),
    "gnu-longname-64mib": (
        _long_name_bomb(64 << 20),
        Code.RESOURCE_EXHAUSTED,
        f"GNU long name declares {64 << 20} bytes; the limit is 4096",
    ),
    "over-upload-limit": (bytes(9 * 1024 * 1024), Code.RESOURCE_EXHAUSTED, ""),
    "not-an-archive": (b"hello, this is not an archive", Code.INVALID_ARGUMENT, "first bytes"),
    "truncated-gzip": (_tar(_file("bot.toml", TOML))[:20], Code.INVALID_ARGUMENT, "tar.gz"),
    "no-bot-toml": (_tar(_file("bot.py", b"print(1)\n")), Code.INVALID_ARGUMENT, "bot.toml"),
    "bad-bot-toml": (_tar(_file("bot.toml", b"name = 5\n")), Code.INVALID_ARGUMENT, "name"),
    "deep-bot-toml": (
        _tar(_file("bot.toml", TOML + b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n")),
        Code.INVALID_ARGUMENT,
        "bot.toml: not valid TOML: nested too deeply",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_archives_are_refused_and_nothing_is_stored(arena: Arena, case: str) -> None:
    data, expected, words = MALFORMED[case]
    before = arena.snapshot()
    code, details = _code(
        lambda: arena.stub.SubmitBot(pb.SubmitBotRequest(archive=data), metadata=_auth(arena.alice))
    )
    assert code is expected, details
    assert words in details
    assert arena.snapshot() == before


def _chain_archives(leaf: str) -> dict[str, bytes]:
    """A link ``x -> .``, a link ``y -> x/..``, then the file ``y/LEAF``: tar and zip."""
    tar = _tar(
        _file("bot.toml", TOML), (_info("x", tarfile.SYMTYPE, link="."), None),
        (_info("y", tarfile.SYMTYPE, link="x/.."), None), _file(f"y/{leaf}", b"pwned"),
    )  # fmt: skip
    zipped = _zip(
        ("bot.toml", TOML, 0o100644), ("x", b".", 0o120777), ("y", b"x/..", 0o120777),
        (f"y/{leaf}", b"pwned", 0o100644),
    )  # fmt: skip
    return {"tar": tar, "zip": zipped}


@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_an_upload_never_writes_through_a_link(arena: Arena, fmt: str) -> None:
    leaf = f"escaped-{fmt}-{os.getpid()}"
    data = _chain_archives(leaf)[fmt]
    before = arena.snapshot()
    code, details = _code(
        lambda: arena.stub.SubmitBot(pb.SubmitBotRequest(archive=data), metadata=_auth(arena.alice))
    )
    assert code is Code.INVALID_ARGUMENT, details
    assert f"entry 'y/{leaf}': its path runs through the link 'y'" in details
    assert not (Path(tempfile.gettempdir()) / leaf).exists()  # above the upload directory
    assert arena.snapshot() == before


def test_a_declared_format_that_does_not_match_is_refused(arena: Arena) -> None:
    data = _tar_of(arena.sources / "alice_bot")
    code, _ = _code(
        lambda: arena.stub.SubmitBot(
            pb.SubmitBotRequest(archive=data, format=pb.ARCHIVE_FORMAT_ZIP),
            metadata=_auth(arena.alice),
        )
    )
    assert code is Code.INVALID_ARGUMENT


# ------------------------------------------------------------- malformed requests


REQUESTS: dict[str, tuple[Callable[[pb_grpc.ArenaServiceStub, object], object], Code]] = {
    "game-id-zero": (
        lambda s, m: s.GetGameRecord(pb.GetGameRecordRequest(game_id=0), metadata=m),
        Code.INVALID_ARGUMENT,
    ),
    "game-missing": (
        lambda s, m: s.GetGameRecord(pb.GetGameRecordRequest(game_id=999999), metadata=m),
        Code.NOT_FOUND,
    ),
    "no-format": (
        lambda s, m: s.CreateTournament(
            pb.CreateTournamentRequest(name="t", bots=["alice_bot", "bob_bot"]), metadata=m
        ),
        Code.INVALID_ARGUMENT,
    ),
    "unknown-bot": (
        lambda s, m: s.CreateTournament(
            pb.CreateTournamentRequest(name="t", format=1, bots=["alice_bot", "ghost"]), metadata=m
        ),
        Code.NOT_FOUND,
    ),
    "bad-name": (
        lambda s, m: s.CreateTournament(
            pb.CreateTournamentRequest(name="a b", format=1, bots=["alice_bot", "bob_bot"]),
            metadata=m,
        ),
        Code.INVALID_ARGUMENT,
    ),
    "negative-games": (
        lambda s, m: s.CreateTournament(
            pb.CreateTournamentRequest(
                name="t", format=1, bots=["alice_bot", "bob_bot"], games_per_match=-2
            ),
            metadata=m,
        ),
        Code.INVALID_ARGUMENT,
    ),
    "negative-seed": (
        lambda s, m: s.CreateTournament(
            pb.CreateTournamentRequest(name="t", format=2, bots=["alice_bot", "bob_bot"], seed=-1),
            metadata=m,
        ),
        Code.INVALID_ARGUMENT,
    ),
    "one-bot": (
        lambda s, m: s.CreateTournament(
            pb.CreateTournamentRequest(name="t", format=1, bots=["alice_bot"]), metadata=m
        ),
        Code.INVALID_ARGUMENT,
    ),
    "huge-name": (
        lambda s, m: s.CreateTournament(
            pb.CreateTournamentRequest(name="\u00e9" * 100_000, format=1, bots=["alice_bot"]),
            metadata=m,
        ),
        Code.INVALID_ARGUMENT,
    ),
    "files-huge-name": (
        lambda s, m: s.GetBotFiles(pb.GetBotFilesRequest(name="x" * 100_000), metadata=m),
        Code.NOT_FOUND,
    ),
    "start-unknown": (
        lambda s, m: s.StartTournament(pb.StartTournamentRequest(name="ghost"), metadata=m),
        Code.NOT_FOUND,
    ),
    "start-empty": (
        lambda s, m: s.StartTournament(pb.StartTournamentRequest(), metadata=m),
        Code.INVALID_ARGUMENT,
    ),
    "watch-unknown": (
        lambda s, m: list(s.WatchTournament(pb.WatchTournamentRequest(name="ghost"), metadata=m)),
        Code.NOT_FOUND,
    ),
    "token-bad-user": (
        lambda s, m: s.CreateUserToken(pb.CreateUserTokenRequest(user="../x"), metadata=m),
        Code.INVALID_ARGUMENT,
    ),
    "empty-archive": (
        lambda s, m: s.SubmitBot(pb.SubmitBotRequest(), metadata=m),
        Code.INVALID_ARGUMENT,
    ),
    "bad-archive-format": (
        lambda s, m: s.SubmitBot(pb.SubmitBotRequest(archive=b"x", format=7), metadata=m),
        Code.INVALID_ARGUMENT,
    ),
}


@pytest.mark.parametrize("case", sorted(REQUESTS))
def test_malformed_requests_are_refused_with_the_right_status(arena: Arena, case: str) -> None:
    call, expected = REQUESTS[case]
    before = arena.snapshot()
    code, details = _code(lambda: call(arena.stub, _auth(arena.admin)))
    assert code is expected, details
    assert details
    assert arena.snapshot() == before


@pytest.mark.parametrize(
    ("bank_ms", "stored"), [(None, 30_000), (0, 0), (5_000, 5_000)], ids=["unset", "none", "5s"]
)
def test_a_tournament_has_the_bank_asked_for_a_bank_of_0_included(
    arena: Arena, bank_ms: int | None, stored: int
) -> None:
    name = f"bank-{bank_ms}"
    arena.stub.CreateTournament(
        pb.CreateTournamentRequest(name=name, format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN,
                                   bots=["alice_bot", "bob_bot"], bank_ms=bank_ms),
        metadata=_auth(arena.admin),
    )  # fmt: skip
    assert get_tournament(arena.store, name).config.time_control.bank_ms == stored


def test_a_tournament_runs_streams_progress_and_serves_records(arena: Arena) -> None:
    created = arena.stub.CreateTournament(
        pb.CreateTournamentRequest(
            name="api-rr",
            format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN,
            bots=["alice_bot", "bob_bot"],
            games_per_match=2,
            start=True,
        ),
        metadata=_auth(arena.admin),
    )
    assert created.tournament.games_scheduled == 2
    assert created.tournament.status in ("running", "finished")  # started: not 'created'
    events = list(
        arena.stub.WatchTournament(
            pb.WatchTournamentRequest(name="api-rr"), metadata=_auth(arena.alice), timeout=60
        )
    )
    assert events[-1].tournament.status == "finished"
    assert events[-1].tournament.games_played == 2
    assert sum(s.points for s in events[-1].standings) == 2
    duplicate, _ = _code(
        lambda: arena.stub.CreateTournament(
            pb.CreateTournamentRequest(name="api-rr", format=1, bots=["alice_bot", "bob_bot"]),
            metadata=_auth(arena.admin),
        )
    )
    assert duplicate is Code.ALREADY_EXISTS
    game_ids = [e.game_id for e in events if e.game_id]
    record = arena.stub.GetGameRecord(
        pb.GetGameRecordRequest(game_id=game_ids[0]), metadata=_auth(arena.bob)
    )
    assert json.loads(record.record_json)["format"] == "kahuna-record/1"
    board = arena.stub.GetLeaderboard(pb.GetLeaderboardRequest(), metadata=_auth(arena.bob))
    assert {e.bot.name for e in board.entries} >= {"alice_bot", "bob_bot"}
    assert all(e.bot.games == 2 for e in board.entries if e.bot.name in ("alice_bot", "bob_bot"))
    token = arena.stub.CreateUserToken(
        pb.CreateUserTokenRequest(user="carol"), metadata=_auth(arena.admin)
    )
    assert arena.stub.ListBots(pb.ListBotsRequest(), metadata=_auth(token.token)).bots


def test_audits_run_one_at_a_time_and_a_flood_of_one_costs_one_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An audit replays every game of a tournament (CPU-bound): a user's calls in flight
    each running one at once made the admin's calls wait seconds. They run one at a
    time, each answer kept for the tournament as it was, while the admin is answered."""
    store = Store.open(tmp_path / "data")
    for name in ("cup-a", "cup-b"):
        play_demo_tournament(store, tmp_path / "bots", name=name, bots=("ann", "bob"))
    gate, lock = threading.Event(), threading.Lock()
    running, ran, most = [0], [0], [0]

    def held_audit(store_: Store, ref: int | str) -> AuditReport:
        with lock:
            running[0] += 1
            ran[0] += 1
            most[0] = max(most[0], running[0])
        gate.wait(20)
        with lock:
            running[0] -= 1
        return audit_tournament(store_, ref)

    monkeypatch.setattr("arena.server.arena_service.audit_tournament", held_audit)
    admin, user = ensure_admin_token(store), create_token(store, "mallory")
    server, port = create_server("127.0.0.1:0", store=store)
    server.start()
    answers: list[pb.AuditTournamentResponse] = []
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ArenaServiceStub(channel)
            futures = [
                stub.AuditTournament.future(pb.AuditTournamentRequest(name=name),
                                            metadata=_auth(user), timeout=30)
                for name in ["cup-a", "cup-b"] * 6
            ]  # fmt: skip
            wait_until(lambda: ran[0] >= 1, "the first audit to start")
            listed = stub.ListTournaments(pb.ListTournamentsRequest(), metadata=_auth(admin))
            assert len(listed.tournaments) == 2  # the admin is answered meanwhile
            assert_stays(lambda: ran[0] == 1, 0.3, "one audit running, the others waiting")
            gate.set()
            answers = [future.result() for future in futures]
    finally:
        gate.set()
        server.stop(grace=None)
        store.close()
    assert most[0] == 1 and ran[0] == 2, (most, ran)  # one at a time, once per tournament
    # (the demo's games are made up: each audit fails, naming its tournament)
    assert [a.text.split(":")[0] for a in answers] == ["audit of cup-a", "audit of cup-b"] * 6


def test_the_deal_seed_is_committed_at_creation_and_revealed_only_once_finished(
    arena: Arena,
) -> None:
    """Before the last game no API answer holds the deal secret (in any encoding we
    publish it); at creation the commitment is public; after the finish the secret is
    revealed and the audit passes."""
    created = arena.stub.CreateTournament(
        pb.CreateTournamentRequest(
            name="sealed", format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN,
            bots=["alice_bot", "bob_bot"], games_per_match=2,
        ),
        metadata=_auth(arena.admin),
    )  # fmt: skip
    secret = tournament_secret(arena.store, created.tournament.id)
    forms = (secret, secret.hex().encode(), secret.hex().upper().encode())
    commitment = created.tournament.seed_commitment
    assert len(commitment) == 64 and created.tournament.revealed_seed == ""
    parameters = created.tournament.committed_parameters  # public from creation
    assert [name for name, _ in json.loads(parameters)["entrants"]] == ["alice_bot", "bob_bot"]
    before = [
        created,
        arena.stub.ListTournaments(pb.ListTournamentsRequest(), metadata=_auth(arena.bob)),
        arena.stub.AuditTournament(
            pb.AuditTournamentRequest(name="sealed"), metadata=_auth(arena.bob)
        ),
    ]
    for answer in before:
        wire = answer.SerializeToString()
        assert not any(form in wire for form in forms), type(answer).__name__
    assert not before[2].ok and before[2].revealed_seed == ""
    (listed,) = [t for t in before[1].tournaments if t.name == "sealed"]
    assert listed.committed_parameters == parameters  # to any user, before play
    arena.stub.StartTournament(
        pb.StartTournamentRequest(name="sealed"), metadata=_auth(arena.admin)
    )
    events = list(
        arena.stub.WatchTournament(
            pb.WatchTournamentRequest(name="sealed"), metadata=_auth(arena.bob), timeout=60
        )
    )
    for event in events[:-1]:
        assert not any(form in event.SerializeToString() for form in forms)
    final = events[-1].tournament
    assert final.status == "finished" and final.seed_commitment == commitment
    assert final.revealed_seed == secret.hex()
    assert final.committed_parameters == parameters
    assert seed_commitment(bytes.fromhex(final.revealed_seed), parameters.encode()) == commitment
    audit = arena.stub.AuditTournament(
        pb.AuditTournamentRequest(name="sealed"), metadata=_auth(arena.bob)
    )
    assert audit.ok and audit.games == 2 and audit.revealed_seed == secret.hex(), audit.text


def test_a_tournament_run_elsewhere_is_refused_and_shown_interrupted_once_its_runner_dies(
    arena: Arena,
) -> None:
    admin = _auth(arena.admin)
    created = arena.stub.CreateTournament(
        pb.CreateTournamentRequest(name="api-held", format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN,
                                   bots=["alice_bot", "bob_bot"], games_per_match=2),
        metadata=admin,
    )  # fmt: skip

    def watch() -> list[pb.WatchTournamentResponse]:
        request = pb.WatchTournamentRequest(name="api-held")
        return list(arena.stub.WatchTournament(request, metadata=admin, timeout=60))

    with lease_holding_process(arena.store.data_dir, created.tournament.id) as runner:
        before = arena.snapshot()
        code, details = _code(
            lambda: arena.stub.StartTournament(
                pb.StartTournamentRequest(name="api-held"), metadata=admin
            )
        )
        assert code is Code.FAILED_PRECONDITION
        assert f"tournament 'api-held' is already being run by process {runner.pid}" in details
        assert arena.snapshot() == before
        followed: list[pb.WatchTournamentResponse] = []
        request = pb.WatchTournamentRequest(name="api-held")
        stream = arena.stub.WatchTournament(request, metadata=admin, timeout=60)
        watcher = threading.Thread(target=lambda: [followed.append(w) for w in stream])
        watcher.start()
        wait_until(lambda: followed, "the watch's first event", 20)
        assert followed[0].tournament.status == "running"
        assert f"running in another process (pid {runner.pid})" in followed[0].message
        kill_9(runner)
        watcher.join(20)  # the watch follows the other process until it is gone
    assert [w.tournament.status for w in followed][-1] == "interrupted"
    seen = watch()
    assert {w.tournament.status for w in seen} == {"interrupted"}
    assert "arena tournament resume api-held" in seen[-1].message
    started = arena.stub.StartTournament(pb.StartTournamentRequest(name="api-held"), metadata=admin)
    assert started.tournament.status == "running"
    final = watch()[-1]
    assert (final.tournament.status, final.tournament.games_played) == ("finished", 2)


def test_health_and_reflection_are_on(arena: Arena) -> None:
    health = health_pb2_grpc.HealthStub(arena.channel)
    for service in ("", "kahuna.v1.ArenaService"):
        reply = health.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    reflect = reflection_pb2_grpc.ServerReflectionStub(arena.channel)
    replies = reflect.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")])
    )
    names = {s.name for r in replies for s in r.list_services_response.service}
    assert {"kahuna.v1.ArenaService", "grpc.health.v1.Health"} <= names


LEAKY_BOT = '''import os
import sys

from kahuna_bot import run


def choose(observation, legal_actions):
    if len(observation.history) > 4:
        print("my plans: SECRET", file=sys.stderr, flush=True)
        os._exit(1)
    return legal_actions[0]


if __name__ == "__main__":
    raise SystemExit(run(choose, name="leaky_bot", version="1"))
'''


def test_a_crashed_bots_stderr_reaches_its_owner_and_the_admin_only(arena: Arena) -> None:
    secret = f"secret-{uuid.uuid4().hex}"
    # Stored directly: such a bot could never pass the smoke match that SubmitBot runs.
    source = _bot_dir(arena.sources / "leaky", "leaky_bot", LEAKY_BOT.replace("SECRET", secret))
    add_bot_version(arena.store, load_bot(source), owner="alice")
    arena.stub.CreateTournament(
        pb.CreateTournamentRequest(
            name="leaky-rr", format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN,
            bots=["leaky_bot", "bob_bot"], games_per_match=2, start=True,
        ),
        metadata=_auth(arena.admin),
    )  # fmt: skip
    events = list(
        arena.stub.WatchTournament(
            pb.WatchTournamentRequest(name="leaky-rr"), metadata=_auth(arena.bob), timeout=60
        )
    )
    assert events[-1].tournament.status == "finished"
    game_ids = [e.game_id for e in events if e.game_id]
    assert len(game_ids) == 2
    web, port = create_web_server(arena.store, "127.0.0.1", 0)
    try:
        for game_id in game_ids:
            request = pb.GetGameRecordRequest(game_id=game_id)
            as_bob = arena.stub.GetGameRecord(request, metadata=_auth(arena.bob))
            failures = json.loads(as_bob.record_json)["match"]["failures"]
            assert [(f["bot"], f["status"]) for f in failures] == [("leaky_bot", "crash")]
            assert failures[0]["detail"] == "process exited with status 1"
            assert secret not in str(as_bob) and not as_bob.stderr
            for token in (arena.alice, arena.admin):
                mine = arena.stub.GetGameRecord(request, metadata=_auth(token))
                assert secret not in mine.record_json
                [tail] = mine.stderr
                assert tail.bot == "leaky_bot" and f"my plans: {secret}" in tail.text
                assert mine.record_json == as_bob.record_json
            for path in (f"/games/{game_id}", f"/api/games/{game_id}",
                         f"/api/games/{game_id}/record", "/bots/leaky_bot", "/api/bots/leaky_bot"):
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as page:
                    body = page.read().decode()
                assert "leaky_bot" in body and secret not in body, path  # fmt: skip
    finally:
        web.stop()


def test_an_sprt_test_streams_its_llr_bounds_and_decision(arena: Arena) -> None:
    """A test capped at 3 pairs: every event carries the SPRT state, the LLR history grows
    pair by pair, and the end is inconclusive at the cap (two random bots rarely decide)."""
    settings = pb.SprtSettings(elo0=0.0, elo1=300.0, model="logistic", max_pairs=3)
    created = arena.stub.CreateTournament(
        pb.CreateTournamentRequest(name="api-sprt", format=pb.TOURNAMENT_FORMAT_SPRT,
                                   bots=["alice_bot", "bob_bot"], sprt=settings, start=True),
        metadata=_auth(arena.admin),
    )  # fmt: skip
    assert created.tournament.format == pb.TOURNAMENT_FORMAT_SPRT
    assert created.tournament.sprt.upper_bound == pytest.approx(math.log(0.95 / 0.05))
    events = list(
        arena.stub.WatchTournament(
            pb.WatchTournamentRequest(name="api-sprt"), metadata=_auth(arena.bob), timeout=120
        )
    )
    lengths = [len(e.tournament.sprt.llr_history) for e in events]
    assert lengths == sorted(lengths) and lengths[-1] == events[-1].tournament.sprt.pairs_complete
    final = events[-1].tournament.sprt
    assert events[-1].tournament.status == "finished"
    assert (final.elo0, final.elo1, final.model, final.max_pairs) == (0.0, 300.0, "logistic", 3)
    assert sum(final.pentanomial) == final.pairs_complete == final.pairs_scheduled
    assert final.lower_bound < 0 < final.upper_bound
    if final.decided_at:
        assert final.verdict in ("H0 accepted", "H1 accepted")
        assert not final.lower_bound < final.llr_history[final.decided_at - 1] < final.upper_bound
    else:
        assert final.verdict == "inconclusive" and final.pairs_complete == 3


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (pb.SprtSettings(elo0=0.0), "needs elo0 and elo1"),
        (pb.SprtSettings(elo0=0.0, elo1=500.0), "elo1 must lie within [-200, 200]"),
        (pb.SprtSettings(preset="fast"), "sprt must be one of nonreg, gain"),
        (pb.SprtSettings(preset="gain", alpha=0.9), "alpha must lie"),
    ],
    ids=["one-bound", "too-far", "preset", "alpha"],
)
def test_bad_sprt_settings_are_refused_and_store_nothing(
    arena: Arena, settings: pb.SprtSettings, message: str
) -> None:
    before = arena.snapshot()
    request = pb.CreateTournamentRequest(
        name="bad-sprt", format=pb.TOURNAMENT_FORMAT_SPRT, bots=["alice_bot", "bob_bot"],
        sprt=settings,
    )
    code, details = _code(
        lambda: arena.stub.CreateTournament(request, metadata=_auth(arena.admin))
    )
    assert code is Code.INVALID_ARGUMENT and message in details, details
    assert arena.snapshot() == before


def test_a_play_game_s_tournament_is_not_started_over_the_api(tmp_path: Path) -> None:
    """Its runner refuses it (tests/tournament/test_play_pool.py): the caller is told so."""
    from arena.store import (
        PlannedMatch,
        PlannedRound,
        TournamentConfig,
        TournamentStatus,
        add_bot_version,
        latest_version_ids,
        register_remote_bot,
        set_status,
    )
    from arena.store.play import PLAY_NOT_RESUMED, PlaySeat, insert_play_tournament

    with Store.open(tmp_path / "data") as store:
        add_bot_version(store, load_bot(SAMPLE_RANDOM_BOT))
        register_remote_bot(store, "human-ann", owner="ann")
        entrants = latest_version_ids(store, ["human-ann", "python_random"])
        row = insert_play_tournament(
            store, "play-ann-0123abcd", entrants, TournamentConfig(games_per_match=1),
            [PlannedRound(1, (PlannedMatch("human-ann", "python_random", 1, 0),))],
            PlaySeat("ann", entrants["python_random"], 0, "unrated"),
        )  # fmt: skip
        set_status(store, row.id, TournamentStatus.RUNNING)  # its server stopped mid-game
        server, port = create_server("127.0.0.1:0", store=store)
        server.start()
        try:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = pb_grpc.ArenaServiceStub(channel)
                code, details = _code(lambda: stub.StartTournament(
                    pb.StartTournamentRequest(name=row.name),
                    metadata=_auth(ensure_admin_token(store))))  # fmt: skip
                watch = stub.WatchTournament(pb.WatchTournamentRequest(name=row.name),
                                             metadata=_auth(ensure_admin_token(store)),
                                             timeout=20)  # fmt: skip
                status = next(iter(watch)).message
                watch.cancel()
        finally:
            server.stop(grace=None)
    assert code is Code.FAILED_PRECONDITION and "person's game at /play" in details, details
    assert status == f"tournament is interrupted: no process is running it; {PLAY_NOT_RESUMED}"
