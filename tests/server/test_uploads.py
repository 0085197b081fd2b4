"""UploadBot (arena.server.uploads) and the API port's small message limit, on a real server."""

from __future__ import annotations

import io
import os
import random
import shutil
import sqlite3
import tarfile
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest

from arena.bots.archive import MAX_ARCHIVE_BYTES, UPLOAD_CHUNK_BYTES, UPLOAD_PREFIX
from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.bots.submission import SubmissionCheck
from arena.commands.remote_grpc import upload_requests
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.server import arena_service
from arena.server.app import ApiServer, create_server
from arena.server.arena_service import ServiceOptions
from arena.server.limits import StreamLimits
from arena.server.uploads import MAX_REQUEST_BYTES
from arena.store import Store, create_token, ensure_admin_token
from arena.testing.waiting import wait_until

pytestmark = pytest.mark.slow
Code = grpc.StatusCode
PER_TOKEN = 3


@dataclass
class Arena:
    stub: pb_grpc.ArenaServiceStub
    channel: grpc.Channel
    server: ApiServer
    store: Store
    admin: str
    alice: str
    sources: Path
    checked: list[Path] = field(default_factory=list)

    def snapshot(self) -> list[object]:
        """Every table's rows and every stored file."""
        db = sqlite3.connect(self.store.data_dir / "arena.db")
        rows: list[object] = []
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            rows += [(table, *r) for r in db.execute(f"SELECT * FROM {table} ORDER BY rowid")]
        data = self.store.data_dir
        files = sorted(str(p.relative_to(data)) for p in self.store.bots_dir.rglob("*"))
        return [*rows, *files]


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def _uploads_left() -> list[str]:
    """This process's (the server's) upload directories still in the temp dir."""
    prefix = f"{UPLOAD_PREFIX}{os.getpid()}-"
    temp = Path(tempfile.gettempdir())
    return sorted(p.name for p in temp.iterdir() if p.name.startswith(prefix))


def _bot_archive(root: Path, name: str, padding: int) -> bytes:
    """A sample bot named ``name`` with ``padding`` random bytes in a data file, as tar.gz."""
    target = root / name
    shutil.copytree(SAMPLE_RANDOM_BOT, target, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (target / "bot.toml").read_text().replace('name = "python_random"', f'name = "{name}"')
    (target / "bot.toml").write_text(toml)
    (target / "data.bin").write_bytes(random.Random(name).randbytes(padding))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(target, arcname=name)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    root = tmp_path_factory.mktemp("uploads")
    store = Store.open(root / "data")
    checked: list[Path] = []

    def smoke_check(directory: Path) -> SubmissionCheck:
        checked.append(directory)
        return SubmissionCheck()

    server, port = create_server(
        "127.0.0.1:0", store=store, options=ServiceOptions(smoke_check=smoke_check),
        limits=StreamLimits(per_token=PER_TOKEN),
    )  # fmt: skip
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    yield Arena(
        pb_grpc.ArenaServiceStub(channel), channel, server, store, ensure_admin_token(store),
        create_token(store, "alice"), root / "sources", checked,
    )  # fmt: skip
    channel.close()
    server.stop(grace=None).wait(30)
    store.close()


def _refused(call: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as raised:
        call()
    error = raised.value
    assert isinstance(error, grpc.Call)
    return error.code(), error.details() or ""


class Held:
    """An upload's messages: the start and ``chunks`` chunks, then nothing until released."""

    def __init__(self, chunks: int = 0) -> None:
        self.chunks = chunks
        self.released = threading.Event()

    def __iter__(self) -> Iterator[pb.UploadBotRequest]:
        yield pb.UploadBotRequest(start=pb.UploadBotStart(format=pb.ARCHIVE_FORMAT_TAR_GZ))
        for _ in range(self.chunks):
            yield pb.UploadBotRequest(chunk=bytes(UPLOAD_CHUNK_BYTES))
        self.released.wait(30)


def test_an_upload_in_chunks_is_stored_as_submit_bot_stores_it(arena: Arena) -> None:
    data = _bot_archive(arena.sources, "chunked_bot", 3 * UPLOAD_CHUNK_BYTES)
    assert len(data) > 3 * UPLOAD_CHUNK_BYTES
    request = pb.SubmitBotRequest(archive=data, format=pb.ARCHIVE_FORMAT_TAR_GZ)
    uploaded = arena.stub.UploadBot(upload_requests(request), metadata=_auth(arena.alice))
    assert uploaded.created and uploaded.bot.name == "chunked_bot" and uploaded.bot.owner == "alice"
    assert len(arena.checked) == 1  # the smoke check ran on it, as on SubmitBot's
    again = arena.stub.SubmitBot(request, metadata=_auth(arena.alice))
    assert not again.created  # the same files: SubmitBot finds the version UploadBot stored
    assert again.bot == uploaded.bot
    stored = arena.store.bots_dir / "chunked_bot"
    (version_dir,) = [p for p in stored.iterdir() if p.is_dir()]
    assert (version_dir / "data.bin").read_bytes() == random.Random("chunked_bot").randbytes(
        3 * UPLOAD_CHUNK_BYTES
    )
    assert _uploads_left() == []


def _chunks(total: int) -> Iterator[pb.UploadBotRequest]:
    while total > 0:
        yield pb.UploadBotRequest(chunk=bytes(min(total, UPLOAD_CHUNK_BYTES)))
        total -= UPLOAD_CHUNK_BYTES


OVERSIZED: dict[str, tuple[int, int]] = {  # declared size, bytes sent
    "sent": (0, MAX_ARCHIVE_BYTES + UPLOAD_CHUNK_BYTES),
    "declared": (MAX_ARCHIVE_BYTES + 1, 0),
}


@pytest.mark.parametrize("case", sorted(OVERSIZED))
def test_an_upload_over_the_archive_limit_is_refused_naming_it(arena: Arena, case: str) -> None:
    declared, sent = OVERSIZED[case]
    before = arena.snapshot()

    def requests() -> Iterator[pb.UploadBotRequest]:
        yield pb.UploadBotRequest(start=pb.UploadBotStart(size=declared))
        yield from _chunks(sent)

    code, details = _refused(
        lambda: arena.stub.UploadBot(requests(), metadata=_auth(arena.alice), timeout=30)
    )
    assert code is Code.RESOURCE_EXHAUSTED, details
    assert f"the limit is {MAX_ARCHIVE_BYTES}" in details
    assert arena.snapshot() == before
    wait_until(lambda: _uploads_left() == [], "the upload directory removed", state=_uploads_left)


def test_an_upload_past_the_users_stored_bytes_is_refused_naming_it(arena: Arena) -> None:
    before = arena.snapshot()
    arena.server.quotas.set("stored_bytes", 200_000, "alice")  # type: ignore[union-attr]
    try:
        code, details = _refused(
            lambda: arena.stub.UploadBot(
                iter([pb.UploadBotRequest(start=pb.UploadBotStart()), *_chunks(1_000_000)]),
                metadata=_auth(arena.alice), timeout=30,
            )
        )  # fmt: skip
    finally:
        arena.server.quotas.set("stored_bytes", None, "alice")  # type: ignore[union-attr]
    assert code is Code.RESOURCE_EXHAUSTED, details
    assert "limit stored_bytes" in details and "the limit is 200000" in details
    assert arena.snapshot() == before
    wait_until(lambda: _uploads_left() == [], "the upload directory removed", state=_uploads_left)


def test_a_bad_token_is_refused_before_any_chunk_is_read(arena: Arena) -> None:
    held = Held(chunks=1)
    try:
        code, details = _refused(
            lambda: arena.stub.UploadBot(iter(held), metadata=_auth("not-a-token"), timeout=20)
        )
        assert not held.released.is_set()  # answered while the client still held its chunks
    finally:
        held.released.set()
    assert code is Code.UNAUTHENTICATED and "unknown token" in details
    assert _uploads_left() == []


def test_a_client_that_stops_mid_upload_leaves_nothing(arena: Arena) -> None:
    before = arena.snapshot()
    held = Held(chunks=3)
    call = arena.stub.UploadBot.future(iter(held), metadata=_auth(arena.alice), timeout=30)
    try:

        def spooled() -> bool:
            return any(
                (Path(tempfile.gettempdir()) / name / "archive.upload").stat().st_size
                >= 3 * UPLOAD_CHUNK_BYTES
                for name in _uploads_left()
                if (Path(tempfile.gettempdir()) / name / "archive.upload").exists()
            )

        wait_until(spooled, "the chunks written to the upload file", state=_uploads_left)
        call.cancel()
    finally:
        held.released.set()
    wait_until(lambda: _uploads_left() == [], "the upload directory removed", state=_uploads_left)
    assert arena.snapshot() == before
    # the user's upload is over: the next one is admitted (checks_per_user)
    small = _bot_archive(arena.sources, "after_cancel", 10)
    request = pb.SubmitBotRequest(archive=small)
    assert arena.stub.UploadBot(upload_requests(request), metadata=_auth(arena.alice)).created


def test_an_upload_slower_than_its_deadline_ends_naming_it(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arena_service, "UPLOAD_DEADLINE_S", 0.5)
    held = Held(chunks=1)
    try:
        code, details = _refused(
            lambda: arena.stub.UploadBot(iter(held), metadata=_auth(arena.alice), timeout=20)
        )
    finally:
        held.released.set()
    assert code is Code.DEADLINE_EXCEEDED and "UPLOAD_DEADLINE_S" in details, details
    wait_until(lambda: _uploads_left() == [], "the upload directory removed", state=_uploads_left)


def test_the_per_token_stream_limit_counts_uploads(arena: Arena) -> None:
    helds = [Held() for _ in range(PER_TOKEN)]
    calls = [
        arena.stub.UploadBot.future(iter(h), metadata=_auth(arena.admin), timeout=30)
        for h in helds
    ]
    try:
        wait_until(
            lambda: sum(arena.server.counter.open.values()) == PER_TOKEN,
            "the uploads counted as streams", state=lambda: arena.server.counter.open,
        )  # fmt: skip
        code, details = _refused(
            lambda: arena.stub.UploadBot(iter(Held()), metadata=_auth(arena.admin), timeout=10)
        )
    finally:
        for held in helds:
            held.released.set()
        for call in calls:
            call.cancel()
    assert code is Code.RESOURCE_EXHAUSTED
    assert f"the limit is {PER_TOKEN} streams per token" in details
    wait_until(lambda: not arena.server.counter.open, "the streams released")


def test_a_second_upload_of_one_user_at_once_is_refused_naming_the_limit(arena: Arena) -> None:
    held = Held()
    call = arena.stub.UploadBot.future(iter(held), metadata=_auth(arena.alice), timeout=30)
    try:
        wait_until(lambda: _uploads_left() != [], "the first upload under way")
        code, details = _refused(
            lambda: arena.stub.UploadBot(iter(Held()), metadata=_auth(arena.alice), timeout=10)
        )
    finally:
        held.released.set()
        call.cancel()
    assert code is Code.RESOURCE_EXHAUSTED and "limit checks_per_user" in details, details


def _with_padding(message: bytes, size: int) -> bytes:
    """``message`` and an unknown field of ``size`` bytes: a valid request of that size."""
    tag, length, out = bytes([(15 << 3) | 2]), size, bytearray()
    while True:
        byte = length & 0x7F
        length >>= 7
        out.append(byte | (0x80 if length else 0))
        if not length:
            break
    return message + tag + bytes(out) + bytes(size)


REQUESTS_OVER_THE_LIMIT = ["ListBots", "SubmitBot", "GetLeaderboard"]


@pytest.mark.parametrize("method", REQUESTS_OVER_THE_LIMIT)
def test_a_unary_request_over_the_message_limit_is_refused_naming_it(
    arena: Arena, method: str
) -> None:
    call = arena.channel.unary_unary(f"/kahuna.v1.ArenaService/{method}")
    fits = _with_padding(b"", MAX_REQUEST_BYTES - 1024)
    if method != "SubmitBot":
        call(fits, metadata=_auth(arena.alice), timeout=10)  # within the limit: answered
    code, details = _refused(
        lambda: call(_with_padding(b"", MAX_REQUEST_BYTES + 1), metadata=_auth(arena.alice),
                     timeout=10)
    )  # fmt: skip
    assert code is Code.RESOURCE_EXHAUSTED
    assert f"vs. {MAX_REQUEST_BYTES}" in details


def _raw(message: pb.UploadBotRequest) -> bytes:
    return message.SerializeToString()


START = _raw(pb.UploadBotRequest(start=pb.UploadBotStart()))
BAD_UPLOADS: dict[str, tuple[list[bytes], str]] = {  # messages sent, words of the refusal
    "not a message": ([START, b"\xff\xff\xff"], "the request is not a valid message"),
    "chunk first": ([_raw(pb.UploadBotRequest(chunk=b"x"))], "first message must be its start"),
    "nothing": ([], "first message must be its start"),
    "second start": ([START, START], "one start, then only chunks"),
    "chunk too large": (
        [START, _raw(pb.UploadBotRequest(chunk=bytes(UPLOAD_CHUNK_BYTES + 1)))],
        f"the limit is {UPLOAD_CHUNK_BYTES}",
    ),
    "unknown format": (
        [_raw(pb.UploadBotRequest(start=pb.UploadBotStart(format=7)))], "unknown archive format 7"
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_UPLOADS))
def test_a_malformed_upload_is_refused_in_one_line(arena: Arena, case: str) -> None:
    messages, words = BAD_UPLOADS[case]
    call = arena.channel.stream_unary("/kahuna.v1.ArenaService/UploadBot")
    code, details = _refused(
        lambda: call(iter(messages), metadata=_auth(arena.alice), timeout=10)
    )
    assert code is Code.INVALID_ARGUMENT, details
    assert words in details and "\n" not in details
    wait_until(lambda: _uploads_left() == [], "the upload directory removed", state=_uploads_left)


def test_a_user_past_the_hourly_limit_is_refused_before_any_chunk(arena: Arena) -> None:
    arena.server.quotas.set("submissions_per_hour", 0, "alice")  # type: ignore[union-attr]
    held = Held(chunks=1)
    try:
        code, details = _refused(
            lambda: arena.stub.UploadBot(iter(held), metadata=_auth(arena.alice), timeout=20)
        )
        assert not held.released.is_set()  # answered while the client still held its chunks
    finally:
        held.released.set()
        arena.server.quotas.set("submissions_per_hour", None, "alice")  # type: ignore[union-attr]
    assert code is Code.RESOURCE_EXHAUSTED and "limit submissions_per_hour" in details, details
    assert _uploads_left() == []
