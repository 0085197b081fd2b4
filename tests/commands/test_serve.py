"""`arena serve` as a real process: port 0, the admin token file, SIGTERM."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import grpc
import pytest

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow


def _read_line(process: subprocess.Popen[str], pattern: str) -> re.Match[str]:
    assert process.stdout is not None
    for _ in range(10):
        line = process.stdout.readline()
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError(f"no line matching {pattern!r}")


def test_serve_prints_its_ports_keeps_an_admin_token_and_stops_on_sigterm(tmp_path: Path) -> None:
    data = tmp_path / "data"
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--web-port", "0",
         "--data-dir", str(data)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        port = int(_read_line(process, r"listening on 127\.0\.0\.1:(\d+)").group(1))
        web_port = int(_read_line(process, r"http://127\.0\.0\.1:(\d+)/").group(1))
        token_path = Path(_read_line(process, r"admin token: (\S+)").group(1))
        assert token_path == data / "admin.token"
        assert token_path.stat().st_mode & 0o777 == 0o600
        token = token_path.read_text().strip()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ArenaServiceStub(channel)
            metadata = (("authorization", f"Bearer {token}"),)
            created = stub.CreateUserToken(pb.CreateUserTokenRequest(user="ann"), metadata=metadata)
            assert (
                stub.ListBots(
                    pb.ListBotsRequest(), metadata=(("authorization", f"Bearer {created.token}"),)
                ).bots
                == []
            )
        with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/", timeout=10) as page:
            assert page.status == 200
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)


def test_serve_refuses_a_bad_port_by_name(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "serve", "--port", "70000", "--data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 1 and "--port must be a port number" in done.stderr
