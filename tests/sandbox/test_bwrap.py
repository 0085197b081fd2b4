"""The bwrap command line: its shape for each mode, and the unprivileged mode for real."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.sandbox import SANDBOX_SOCKET, SandboxLimits
from arena.sandbox.bwrap import (
    GROUP_TEXT,
    PASSWD_TEXT,
    SETPRIV,
    SandboxFds,
    SandboxPlan,
    bwrap_argv,
)
from arena.sandbox.process import data_fd
from arena.testing.waiting import wait_until

from .conftest import marked_pids

FDS = SandboxFds(passwd=7, group=8, seccomp=9)


def plan(**overrides: object) -> SandboxPlan:
    fields: dict[str, object] = {
        "bot_dir": Path("/srv/bots/a"),
        "command": ("./bot", "--fast"),
        "runtime": "native",
        "env": {"KAHUNA_TOKEN": "t", "HOME": "/bot"},
        "socket_path": Path("/run/arena/a.sock"),
        "limits": SandboxLimits(tmp_size_mb=3),
        **overrides,
    }
    return SandboxPlan(**fields)  # type: ignore[arg-type]


def pairs(argv: list[str], option: str) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, word in enumerate(argv) if word == option]


@pytest.mark.parametrize(
    ("as_root", "share_net", "present", "absent"),
    [
        pytest.param(True, False, ["--unshare-net", SETPRIV, "--cap-add"], ["--unshare-user"],
                     id="root"),
        pytest.param(False, False, ["--unshare-user", "--unshare-net"], [SETPRIV, "--cap-add"],
                     id="unprivileged"),
        pytest.param(True, True, [SETPRIV], ["--unshare-net"], id="root-shared-net"),
    ],
)
def test_namespaces_and_uid_switch_per_mode(
    as_root: bool, share_net: bool, present: list[str], absent: list[str]
) -> None:
    argv = bwrap_argv(plan(as_root=as_root, share_net=share_net), FDS)
    for word in present:
        assert word in argv
    for word in absent:
        assert word not in argv
    assert argv[-2:] == ["./bot", "--fast"]
    for word in ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
                 "--new-session"):
        assert word in argv


def test_mounts_env_and_data_fds() -> None:
    argv = bwrap_argv(plan(as_root=True), FDS)
    binds = pairs(argv, "--ro-bind")
    assert ("/usr", "/usr") in binds
    assert ("/srv/bots/a", "/bot") in binds
    assert ("/run/arena/a.sock", SANDBOX_SOCKET) in binds
    assert pairs(argv, "--ro-bind-data") == [("7", "/etc/passwd"), ("8", "/etc/group")]
    assert argv[argv.index("--seccomp") + 1] == "9"
    assert argv[argv.index("--tmpfs") - 1] == str(3 * 1024 * 1024)
    env = dict(pairs(argv, "--setenv"))
    assert env["HOME"] == "/bot"  # the bot's env wins over the defaults
    assert env["KAHUNA_TOKEN"] == "t" and env["TMPDIR"] == "/tmp"
    assert argv[argv.index("--chdir") + 1] == "/bot"
    assert "--clearenv" in argv


def test_bind_parents_are_made_world_readable() -> None:
    argv = bwrap_argv(plan(extra_ro_binds=((Path("/opt/sdk"), "/opt/kahuna/sdk"),)), FDS)
    dirs = [argv[i + 1] for i, word in enumerate(argv) if word == "--dir"]
    assert "/opt" in dirs and "/opt/kahuna" in dirs and "/run/kahuna" in dirs
    for i, word in enumerate(argv):
        if word == "--dir":
            assert argv[i - 2 : i] == ["--perms", "0755"]
    assert dirs.index("/opt") < dirs.index("/opt/kahuna")


def test_python_runtime_binds_the_interpreter_tree() -> None:
    argv = bwrap_argv(plan(runtime="python"), FDS)
    prefix = str(Path(sys.base_prefix).resolve())
    if not prefix.startswith("/usr"):
        assert (prefix, prefix) in pairs(argv, "--ro-bind")
    assert dict(pairs(argv, "--setenv"))["PATH"].startswith(f"{Path(sys.prefix).resolve()}/bin:")


@pytest.fixture
def world_readable_dir() -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix="ksbx-", dir="/tmp"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="switches to uid 65534 to run bwrap unprivileged")
def test_unprivileged_mode_for_real(world_readable_dir: Path) -> None:
    bot_dir = world_readable_dir / "bot"
    bot_dir.mkdir(mode=0o755)
    socket_path = world_readable_dir / "ref.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(socket_path))
    socket_path.chmod(0o666)
    marker = f"kahuna-unpriv-{os.getpid()}-{world_readable_dir.name}"
    # the shell waits for a line on stdin, sent once the test has seen it on the host
    script = "id -u; touch /bot/x 2>/dev/null || echo read-only; read go; : $0"
    argv = bwrap_argv(plan(bot_dir=bot_dir, socket_path=socket_path, as_root=False,
                           command=("/bin/sh", "-c", script, marker)),
                      SandboxFds(data_fd(PASSWD_TEXT), data_fd(GROUP_TEXT), None))
    fds = tuple(int(argv[i + 1]) for i, word in enumerate(argv) if word == "--ro-bind-data")
    try:
        proc = subprocess.Popen(argv, user=65534, group=65534, extra_groups=[], pass_fds=fds,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip

        def host_uids_seen() -> set[str]:
            assert proc.poll() is None, "the sandbox ended before the test saw its processes"
            return {uid_on_host(pid) for pid in marked_pids(marker)} - {""}

        try:
            host_uids = wait_until(host_uids_seen, "the sandbox's processes on the host", 30)
        finally:
            stdout, stderr = proc.communicate("go\n", timeout=30)
    finally:
        for fd in fds:
            os.close(fd)
        listener.close()
    assert proc.returncode == 0, stderr
    assert stdout.split() == ["65534", "read-only"]
    assert host_uids == {"65534"}  # the bot is uid 65534 on the host too, not a mapped root


def uid_on_host(pid: int) -> str:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return ""
    return next(line.split()[1] for line in status.splitlines() if line.startswith("Uid:"))
