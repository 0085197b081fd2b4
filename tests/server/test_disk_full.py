"""A full disk under the data directory: a real small tmpfs, a real server and runner.

The data directory lives on a tmpfs mounted for the test (root only: skipped
where mount is not permitted) and is filled to the last byte with a file.
The API then answers RESOURCE_EXHAUSTED naming no server path, and works
again once the file is gone; a running tournament stops at once (interrupted,
saying why), and resuming it once there is space plays every game exactly once.
"""

from __future__ import annotations

import contextlib
import errno
import io
import sqlite3
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.referee import load_bot
from arena.server.app import create_server
from arena.server.faults import DISK_FULL_MESSAGE
from arena.store import Store, add_bot_version, create_token, ensure_admin_token
from arena.testing.waiting import wait_until

pytestmark = pytest.mark.slow
Code = grpc.StatusCode
REPO = Path(__file__).resolve().parents[2]
BOTS = ("python_random", "python_greedy")
GAMES = 40
STOP_WITHIN_S = 60.0


class SmallDisk:
    """A tmpfs of a few MiB at ``root``, and a file that can fill it to the last byte."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.filler = root / "filler"

    def fill(self) -> None:
        with open(self.filler, "ab", buffering=0) as handle:
            for size in (1 << 20, 1 << 16, 1 << 12, 1):  # then whatever bytes are left
                try:
                    while True:
                        handle.write(b"\0" * size)
                except OSError as error:
                    assert error.errno == errno.ENOSPC, error

    def free(self) -> None:
        self.filler.unlink()


@contextlib.contextmanager
def small_disk(root: Path, size: str = "16m", mode: str | None = "0700") -> Iterator[SmallDisk]:
    """A tmpfs of ``size`` (16 MiB) mounted at ``root`` (made here) while in use, its root
    of ``mode`` (tmpfs's own 1777 with None); the test is skipped where mount is not
    permitted."""
    root.mkdir()
    options = f"size={size}" + ("" if mode is None else f",mode={mode}")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(root)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield SmallDisk(root)
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[SmallDisk]:
    with small_disk(tmp_path / "small") as mounted:
        yield mounted


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def _archive(name: str) -> bytes:
    buffer = io.BytesIO()
    toml = f'name = "{name}"\nruntime = "python"\ncommand = ["python3", "bot.py"]\n'.encode()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for member, data in (("bot.toml", toml), ("bot.py", b"print('hi')\n" * 20_000)):
            info = tarfile.TarInfo(f"{name}/{member}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _refused(call: object) -> tuple[Code, str]:
    with pytest.raises(grpc.RpcError) as caught:
        call()  # type: ignore[operator]
    error = caught.value
    assert isinstance(error, grpc.Call)
    return error.code(), error.details() or ""


def test_the_api_says_resource_exhausted_without_paths_and_recovers(disk: SmallDisk) -> None:
    store = Store.open(disk.root / "data")
    admin, alice = ensure_admin_token(store), create_token(store, "alice")
    server, port = create_server("127.0.0.1:0", store=store)
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = pb_grpc.ArenaServiceStub(channel)
    try:
        disk.fill()
        calls = {
            "CreateUserToken": lambda: stub.CreateUserToken(
                pb.CreateUserTokenRequest(user="bob"), metadata=_auth(admin), timeout=30
            ),
            "SubmitBot": lambda: stub.SubmitBot(
                pb.SubmitBotRequest(archive=_archive("big_bot")), metadata=_auth(alice), timeout=30
            ),
            "RegisterRemoteBot": lambda: stub.RegisterRemoteBot(
                pb.RegisterRemoteBotRequest(name="far_bot"), metadata=_auth(alice), timeout=30
            ),
        }
        for name, call in calls.items():
            code, details = _refused(call)
            assert (name, code, details) == (name, Code.RESOURCE_EXHAUSTED, DISK_FULL_MESSAGE)
            assert str(disk.root) not in details
        listed = stub.ListBots(pb.ListBotsRequest(), metadata=_auth(alice), timeout=30)
        assert list(listed.bots) == []  # reads still work; nothing half stored
        disk.free()
        for call in calls.values():  # the same requests, once there is space
            call()
        names = {b.name for b in stub.ListBots(pb.ListBotsRequest(), metadata=_auth(alice)).bots}
        assert names == {"big_bot", "far_bot"}
    finally:
        channel.close()
        server.stop(grace=None).wait(10)
        store.close()


def _cli(data: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", *args, "--data-dir", str(data)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _games(data: Path) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(f"file:{data / 'arena.db'}?mode=ro", uri=True)) as db:
        return db.execute(
            "SELECT id, match_id, game_index, seat0_id, winner_seat, reason FROM games"
            " ORDER BY match_id, game_index"
        ).fetchall()


def test_a_full_disk_stops_the_runner_and_resume_finishes_once_there_is_space(
    disk: SmallDisk,
) -> None:
    data = disk.root / "data"
    with Store.open(data) as store:
        for bot in BOTS:
            add_bot_version(store, load_bot(REPO / "sample_bots" / bot))
    created = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "create", "cup", *BOTS,
         "--games", str(GAMES), "--data-dir", str(data)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    runner = _cli(data, "resume", "cup", "--no-progress", "--concurrency", "2")
    try:
        def two_games() -> bool:
            assert runner.poll() is None, runner.stderr.read() if runner.stderr else ""
            return len(_games(data)) >= 2

        wait_until(two_games, "two games stored", 120, interval_s=0.1)
        disk.fill()
        full_at = time.monotonic()
        _, stderr = runner.communicate(timeout=STOP_WITHIN_S)
        stopped_in = time.monotonic() - full_at
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == 1, stderr
    assert "tournament cup is interrupted: the arena's data directory has no space left" in stderr
    assert stopped_in < STOP_WITHIN_S / 2  # at once, not after the matches being played
    before = _games(data)
    assert 2 <= len(before) < GAMES
    status = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "list", "--data-dir", str(data)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert "interrupted" in status.stdout, (status.stdout, status.stderr)
    # the store took no write: the reason stayed in the runner's lease file
    assert "no process is running it (the arena's data directory has no space left" in status.stdout
    disk.free()
    resumed = _cli(data, "resume", "cup", "--no-progress", "--concurrency", "2")
    _, stderr = resumed.communicate(timeout=240)
    assert resumed.returncode == 0, stderr
    after = _games(data)
    assert [(g[1], g[2]) for g in after] == sorted({(g[1], g[2]) for g in after})  # each once
    assert len(after) == GAMES
    assert set(before) <= set(after)  # what was stored before stays as it was
