"""Who the bot is and what it can see and write: uid, rlimits, private filesystem."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.sandbox import SANDBOX_SOCKET, SandboxLimits
from arena.sandbox.uids import configured_pool
from arena.testing.waiting import wait_until

from .conftest import Harness, lines_of, marked_pids

pytestmark = pytest.mark.slow  # every test here starts a process or a server


def test_bot_runs_unprivileged_with_core_dumps_off(harness: Harness) -> None:
    bot, output_path = harness.launch(
        "id -u; id -g; id -un; ulimit -c; ulimit -n;"
        " grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; hostname; pwd",
        limits=SandboxLimits(max_open_files=100),
    )
    status = bot.wait(20)
    bot.kill()
    output = output_path.read_text()
    pool = configured_pool()
    assert status == 0, output
    assert bot.uid is not None and pool.first <= bot.uid <= pool.last
    assert lines_of(output) == [
        str(bot.uid),
        str(bot.uid),
        "bot",  # the generated /etc/passwd names the pool uid
        "0",
        "100",
        "CapEff:\t0000000000000000",
        "NoNewPrivs:\t1",
        "kahuna-bot",
        "/bot",
    ]


def test_a_crash_leaves_no_core_and_the_limit_cannot_be_raised(harness: Harness) -> None:
    status, output = harness.run(
        "ulimit -c unlimited 2>/dev/null && echo RAISED; cd /tmp;"
        " python3 -c 'import os; os.abort()'; echo abort=$?; ls /tmp | grep -c core",
        runtime="python",
    )
    assert status == 1, output  # grep -c found nothing
    assert lines_of(output)[-2:] == ["abort=134", "0"]  # SIGABRT, and no core file
    assert "RAISED" not in output


def test_bot_has_its_pool_uid_on_the_host_too(harness: Harness) -> None:
    bot, _ = harness.launch("sleep 300; : $0")
    bot_pids: list[int] = wait_until(lambda: [
        pid for pid in marked_pids(harness.marker)
        if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"/bin/sh\0-c\0sleep")
    ], "the bot's shell", 10)  # fmt: skip
    status = Path(f"/proc/{bot_pids[0]}/status").read_text()
    uid_line = next(line for line in status.splitlines() if line.startswith("Uid:"))
    assert bot.uid is not None
    assert uid_line.split()[1:] == [str(bot.uid)] * 4  # real, effective, saved, filesystem
    bot.kill()


def test_bot_sees_only_its_own_pid_namespace(harness: Harness) -> None:
    status, output = harness.run("ls /proc | grep -c '^[0-9]'")
    assert status == 0, output
    # bwrap's init, the shell, ls and grep: nothing of the host's processes
    assert int(lines_of(output)[-1]) <= 5


WRITES_REFUSED = [
    pytest.param("echo x > /bot/new.txt", id="bot-dir-new-file"),
    pytest.param("echo x >> /bot/bot.txt", id="bot-dir-own-file"),
    pytest.param("echo x > /usr/new.txt", id="usr"),
    pytest.param("echo x > /etc/passwd", id="etc-passwd"),
    pytest.param("mkdir /newdir", id="root-dir"),
    pytest.param("echo x > /run/kahuna/other", id="socket-dir"),
    pytest.param("echo x > /dev/new", id="dev"),
]


@pytest.mark.parametrize("command", WRITES_REFUSED)
def test_writes_outside_tmp_are_refused(harness: Harness, command: str) -> None:
    status, output = harness.run(f"{command} && echo WROTE")
    assert "WROTE" not in output
    assert status != 0


def test_tmp_is_private_writable_and_size_limited(harness: Harness) -> None:
    status, output = harness.run(
        "echo hello > /tmp/a && cat /tmp/a;"
        " head -c 3145728 /dev/zero > /tmp/big || echo TMP_FULL",
        limits=SandboxLimits(tmp_size_mb=2),
    )
    assert status == 0, output
    assert lines_of(output)[0] == "hello"
    assert "TMP_FULL" in output
    assert not (harness.root / "a").exists()


def test_file_size_rlimit_stops_large_writes(harness: Harness) -> None:
    status, output = harness.run(
        "head -c 2097152 /dev/zero > /tmp/big; echo status=$?; wc -c < /tmp/big",
        limits=SandboxLimits(max_file_size_mb=1, tmp_size_mb=8),
    )
    assert status == 0, output
    words = lines_of(output)
    assert words[-1] == "1048576"  # cut at the limit (SIGXFSZ killed head)
    assert words[-2] != "status=0"


def test_output_files_are_capped_too(harness: Harness) -> None:
    # the bot's stderr is a pipe to a drainer that stops at max_file_size_mb: no disk filling
    bot, output = harness.launch(
        "head -c 3145728 /dev/zero >&2", limits=SandboxLimits(max_file_size_mb=1)
    )
    assert bot.wait(20) == 128 + 13  # SIGPIPE once the drainer has copied its 1 MiB
    assert output.stat().st_size == 1024 * 1024


def test_open_files_rlimit(harness: Harness) -> None:
    script = (
        "import os\n"
        "fds = []\n"
        "try:\n"
        "    while True: fds.append(os.open('/dev/null', os.O_RDONLY))\n"
        "except OSError as exc: print('refused', exc.errno, len(fds))\n"
    )
    status, output = harness.run(script, lang="python", limits=SandboxLimits(max_open_files=64))
    assert status == 0, output
    word, errno_value, opened = lines_of(output)[-1].split()
    assert (word, errno_value) == ("refused", "24")  # EMFILE
    assert int(opened) < 64


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/root", id="root-home"),
        pytest.param("/work", id="work"),
        pytest.param("/home", id="home"),
        pytest.param("/var", id="var"),
        pytest.param("/etc/shadow", id="shadow"),
        pytest.param("/sys/fs/cgroup", id="cgroupfs"),
    ],
)
def test_host_paths_are_not_visible(harness: Harness, path: str) -> None:
    status, output = harness.run(f"ls {path} >/dev/null 2>&1 && echo VISIBLE || echo hidden")
    assert status == 0, output
    assert lines_of(output) == ["hidden"]


def test_other_bots_directory_and_host_tmp_are_not_visible(harness: Harness) -> None:
    other = harness.root / "other_bot"
    other.mkdir(mode=0o755)
    (other / "secret.txt").write_text("opponent's secret\n")
    (other / "secret.txt").chmod(0o644)
    status, output = harness.run(
        f"cat {other}/secret.txt; cat {harness.socket_path.parent}/*; ls /tmp; cat /bot/bot.txt"
    )
    assert status == 0, output
    assert "opponent's secret" not in output
    assert lines_of(output)[-1] == "the bot's own file"


def test_referee_socket_is_reachable_inside(harness: Harness) -> None:
    script = (
        "import socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        f"s.connect({SANDBOX_SOCKET!r})\n"
        "s.sendall(sys.argv[1].encode())\n"
    )
    bot, _ = harness.launch(script, lang="python")
    harness.listener.settimeout(20)
    connection, _ = harness.listener.accept()
    with connection:
        assert connection.recv(100) == harness.marker.encode()
    assert bot.wait(20) == 0


def test_extra_read_only_bind(harness: Harness) -> None:
    sdk = harness.root / "sdk"
    sdk.mkdir(mode=0o755)
    (sdk / "kahuna_sdk.py").write_text("NAME = 'sdk'\n")
    (sdk / "kahuna_sdk.py").chmod(0o644)
    status, output = harness.run(
        "import kahuna_sdk, os\n"
        "print(kahuna_sdk.NAME)\n"
        "try:\n    open('/opt/sdk/x', 'w')\nexcept OSError as exc: print('refused', exc.errno)\n",
        lang="python",
        env={"PYTHONPATH": "/opt/sdk"},
        extra_ro_binds=[(sdk, "/opt/sdk")],
    )
    assert status == 0, output
    assert lines_of(output)[-2:] == ["sdk", "refused 30"]  # EROFS


def test_python_runtime_has_the_arenas_grpc(harness: Harness) -> None:
    status, output = harness.run(
        "import grpc, google.protobuf, sys; print(sys.version_info[:2] >= (3, 11), grpc.__name__)",
        lang="python",
    )
    assert status == 0, output
    assert lines_of(output)[-1] == "True grpc"


def test_node_runtime(harness: Harness) -> None:
    bot, output_path = harness.launch(
        "console.log('node ' + process.getuid() + ' ' + process.argv[1])", lang="node"
    )
    status = bot.wait(20)
    bot.kill()
    output = output_path.read_text()
    assert status == 0, output
    assert lines_of(output)[-1] == f"node {bot.uid} {harness.marker}"
