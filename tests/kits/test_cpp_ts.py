"""What only the C++ and TypeScript starter kits promise (the protocol, a sandboxed
match and reproducible rebuilds of every kit are in test_kits.py).

The C++ binary must need nothing of the host: no dynamic section at all, and
it plays in a sandbox whose root holds only the bot and the referee's socket.
The TypeScript bot ships its runtime packages only, not the compiler.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.sample_bots.scripted_referee import TOKEN, ScriptedServer

from .building import kit
from .conftest import built

MAX_FILE_BYTES = 16 * 1024 * 1024  # the per-file limit of an upload (arena/bots/archive.py)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # builds: C++ takes ~30 s of CPU


def test_cpp_bot_is_one_static_stripped_binary() -> None:
    binary = built(kit("cpp_random")).directory / "bot"
    assert binary.stat().st_size < MAX_FILE_BYTES
    headers = subprocess.run(["readelf", "-lSdW", str(binary)], capture_output=True, text=True)
    assert headers.returncode == 0, headers.stderr
    assert "There is no dynamic section in this file." in headers.stdout
    assert "INTERP" not in headers.stdout  # no loader, so no shared library at all
    assert ".symtab" not in headers.stdout  # stripped


def test_cpp_bot_plays_with_nothing_of_the_host_visible() -> None:
    """A root holding only the bot and the socket: no /usr, /lib, libgrpc++ or libc."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap is not installed")
    directory = built(kit("cpp_random")).directory
    with ScriptedServer() as server:
        socket_dir = Path(server.target.removeprefix("unix://")).parent
        done = subprocess.run(
            [bwrap, "--unshare-all", "--die-with-parent", "--tmpfs", "/",
             "--ro-bind", str(directory), "/bot", "--bind", str(socket_dir), "/run/kahuna",
             "--chdir", "/bot", "--clearenv",
             "--setenv", "KAHUNA_REFEREE", "unix:///run/kahuna/referee.sock",
             "--setenv", "KAHUNA_TOKEN", TOKEN, "./bot"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert server.conversation.finished.wait(5)
    if "Operation not permitted" in done.stderr or "No permissions" in done.stderr:
        pytest.skip(f"bwrap cannot make namespaces here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert [r.WhichOneof("kind") for r in server.conversation.received] == [
        "hello", "action_reply",
    ]  # fmt: skip


def test_ts_bot_ships_no_build_only_packages() -> None:
    directory = built(kit("ts_random")).directory
    assert (directory / "dist" / "bot.js").is_file()
    assert (directory / "node_modules" / "@grpc" / "grpc-js").is_dir()
    assert not (directory / "node_modules" / "typescript").exists()
