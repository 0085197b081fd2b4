"""Hostile programs are contained: memory and fork bombs, TCP, daemons, CPU hogs."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from arena.sandbox import HostReport, SandboxLimits
from arena.sandbox.running import BotProcess
from arena.testing.waiting import assert_stays, wait_until

from .conftest import Harness, lines_of, marked_pids

pytestmark = pytest.mark.slow  # every test here starts a process or a server

MEMORY_BOMB = (
    "chunks = []\n"
    "while True:\n"
    "    chunks.append(bytearray(1 << 20))\n"
)


def test_memory_bomb_is_killed_by_the_cgroup(harness: Harness) -> None:
    bot, _ = harness.launch(MEMORY_BOMB, lang="python", limits=SandboxLimits(memory_mb=64))
    status = bot.wait(20)
    assert status == 128 + 9  # SIGKILL from the OOM killer, reported by bwrap
    assert "memory" in bot.limits_hit()
    peak_mb = bot.memory_peak_mb()
    assert peak_mb is not None and 32 <= peak_mb <= 64 + 1


FORK_BOMB = "bomb() { bomb | bomb & }; bomb; sleep 30"


def test_fork_bomb_is_capped_by_the_pids_limit(harness: Harness) -> None:
    limits = SandboxLimits(max_processes=16)
    bot, _ = harness.launch(FORK_BOMB, limits=limits)
    wait_until(lambda: "processes" in bot.limits_hit(), "the pids limit hit", 10,
               state=bot.limits_hit)  # fmt: skip
    assert len(marked_pids(harness.marker)) <= limits.max_processes
    bot.kill()
    assert bot.poll() is not None


@pytest.fixture
def tcp_listener() -> Iterator[socket.socket]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.2)
    yield listener
    listener.close()


CONNECT = (
    "import socket, sys\n"
    "try:\n"
    "    s = socket.create_connection(('127.0.0.1', int(sys.argv[2])), timeout=2)\n"
    "    print('CONNECTED')\n"
    "except OSError as exc:\n"
    "    print('refused', exc.errno)\n"
)

NO_SECCOMP = HostReport(namespaces=True, cgroup_version=1, seccomp=False, missing=("seccomp",))


@pytest.mark.parametrize(
    ("share_net", "host", "expected"),
    [
        pytest.param(False, None, "refused 97", id="net-namespace-and-seccomp"),
        pytest.param(True, None, "refused 97", id="seccomp-alone"),  # EAFNOSUPPORT
        pytest.param(False, NO_SECCOMP, "refused 111", id="net-namespace-alone"),  # own lo only
        pytest.param(True, NO_SECCOMP, "CONNECTED", id="control-neither-layer"),
    ],
)
def test_tcp_connect_to_host_listener(
    harness: Harness,
    tcp_listener: socket.socket,
    share_net: bool,
    host: HostReport | None,
    expected: str,
) -> None:
    port = tcp_listener.getsockname()[1]
    bot, output = harness.launch(
        CONNECT.replace("sys.argv[2]", str(port)),
        lang="python",
        share_net=share_net,
        host=host,
        unsafe=host is not None,
    )
    assert bot.wait(20) == 0, output.read_text()
    assert lines_of(output.read_text())[-1] == expected
    try:
        accepted, _ = tcp_listener.accept()
        accepted.close()
        reached = True
    except TimeoutError:
        reached = False
    assert reached == (expected == "CONNECTED")


DAEMON = (
    "import os, sys, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        print('daemon', os.getpid(), flush=True)\n"
    "        time.sleep(300)\n"
    "    os._exit(0)\n"
    "time.sleep(float(os.environ['MAIN_SLEEP_S']))\n"
)


@pytest.mark.parametrize(
    "main_sleep_s",
    [pytest.param("300", id="main-still-running"), pytest.param("0.3", id="main-exited")],
)
def test_double_forked_daemon_dies_with_the_bot(harness: Harness, main_sleep_s: str) -> None:
    bot, output = harness.launch(DAEMON, lang="python", env={"MAIN_SLEEP_S": main_sleep_s})
    wait_until(lambda: "daemon" in output.read_text(), "the daemon's line", 10,
               state=output.read_text)  # fmt: skip
    bot.wait(1.0)
    bot.kill()
    assert marked_pids(harness.marker) == []


def test_cpu_time_is_accounted_for_the_whole_tree(harness: Harness) -> None:
    # only the two background children burn CPU; the main shell just waits
    script = "for i in 1 2; do (while :; do :; done) & done; sleep 300"
    bot, _ = harness.launch(script, limits=SandboxLimits(cpu_cores=2.0))
    # a loaded machine gives the loops less CPU
    wait_until(lambda: (bot.cpu_time_ms() or 0.0) >= 200, "200 ms of CPU", 15, interval_s=0.05,
               state=bot.cpu_time_ms)  # fmt: skip
    cpu_ms = bot.cpu_time_ms()
    assert cpu_ms is not None
    bot.kill()
    final_ms = bot.cpu_time_ms()
    assert final_ms is not None and final_ms >= cpu_ms


def test_cpu_quota_caps_a_busy_loop(harness: Harness) -> None:
    bot, _ = harness.launch("while :; do :; done", limits=SandboxLimits(cpu_cores=0.1))
    wait_until(lambda: (bot.cpu_time_ms() or 0.0) > 0, "the loop running", 15,
               state=bot.cpu_time_ms)  # fmt: skip
    start_ms = bot.cpu_time_ms() or 0.0
    # 0.1 of a core for 1 s: about 100 ms; an uncapped loop would use close to 1000 ms
    assert_stays(lambda: (bot.cpu_time_ms() or 0.0) - start_ms < 400, 1.0,
                 "under 400 ms of CPU in 1 s", state=bot.cpu_time_ms)  # fmt: skip
    cpu_ms = bot.cpu_time_ms()
    bot.kill()
    assert cpu_ms is not None and cpu_ms > start_ms  # control: it ran in the window


def _frozen(bot: BotProcess) -> None:
    """Freeze ``bot`` and wait until the kernel says every task stopped. ``freeze`` says
    True when that happened within the referee's 50 ms; on a loaded machine a task stops
    when it is next scheduled, later (the freeze goes on in the kernel)."""
    bot.freeze(True)
    wait_until(lambda: bot.frozen_state() == "FROZEN", "the tree frozen", 10,
               state=bot.frozen_state)  # fmt: skip


def test_a_frozen_bot_gets_no_cpu_until_thawed_and_still_dies(harness: Harness) -> None:
    """``freeze`` stops the whole tree (children included), ``freeze(False)`` lets it
    run again, and a frozen bot is still killed."""
    script = "for i in 1 2; do (while :; do :; done) & done; sleep 300"
    bot, _ = harness.launch(script, limits=SandboxLimits(cpu_cores=2.0))
    wait_until(lambda: (bot.cpu_time_ms() or 0.0) >= 50, "50 ms of CPU", 15,
               state=bot.cpu_time_ms)  # fmt: skip
    _frozen(bot)
    frozen_at = bot.cpu_time_ms()
    assert frozen_at is not None
    assert_stays(lambda: (bot.cpu_time_ms() or 0.0) - frozen_at < 5, 0.5,
                 "no CPU while frozen", state=bot.cpu_time_ms)  # fmt: skip
    after = bot.cpu_time_ms()
    assert after is not None
    assert bot.freeze(False)
    assert bot.frozen_state() == "THAWED"
    wait_until(lambda: (bot.cpu_time_ms() or 0.0) >= after + 50, "CPU again once thawed", 15,
               state=bot.cpu_time_ms)  # fmt: skip
    _frozen(bot)
    bot.kill()
    assert marked_pids(harness.marker) == []
    assert not bot.freeze(False)  # released: nothing left to thaw
