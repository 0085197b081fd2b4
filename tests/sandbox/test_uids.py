"""A host uid per bot: per-user kernel limits are not shared between bots."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from arena.sandbox import BotProcess, HostReport, SandboxLimits, SandboxUnavailableError, uids
from arena.sandbox.uids import (
    UID_DIR_ENV,
    UID_RANGE_ENV,
    UidPool,
    configured_pool,
    uid_is_held,
)
from arena.testing.crowd import Crowd
from arena.testing.waiting import wait_until

from .conftest import Harness, lines_of

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the uid pool needs root")
LAUNCHERS = 4

INOTIFY_HOG = """
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
held = []
while True:
    fd = libc.inotify_init1(0)
    if fd < 0:
        break
    held.append(fd)
print("held", len(held), ctypes.get_errno(), flush=True)
time.sleep(120)
"""

INOTIFY_VICTIM = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
fds = [libc.inotify_init1(0) for _ in range(8)]
print("victim", sum(fd >= 0 for fd in fds), flush=True)
"""

# POSIX message queues: their bytes count against the owner uid's RLIMIT_MSGQUEUE
# (819200 by default: nine queues of the default size), across IPC namespaces.
MQUEUE_HOG = """
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
n = 0
while libc.mq_open(b"/q%d" % n, os.O_CREAT | os.O_RDWR, 0o600, None) >= 0:
    n += 1
print("held", n, ctypes.get_errno(), flush=True)
time.sleep(float(sys.argv[1]))
"""

# Processes count against their real uid's RLIMIT_NPROC. The hog runs 30 processes,
# then shows that the limit bites for its own uid (a fork under a limit of 20 fails:
# the control that the check below can fail); the victim, under the same limit of
# 20, must be able to fork as if the hog were not there.
NPROC_HOG = """
import errno, os, resource, subprocess, time
children = [subprocess.Popen(["sleep", "120"]) for _ in range(30)]
resource.setrlimit(resource.RLIMIT_NPROC, (20, 20))
try:
    pid = os.fork()
except OSError as error:
    control = errno.errorcode[error.errno]
else:
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    control = "forked"
print("held", len(children) + 1, control, flush=True)
time.sleep(120)
"""

NPROC_VICTIM = """
import os, resource
resource.setrlimit(resource.RLIMIT_NPROC, (20, 20))
forked = 0
for _ in range(3):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    forked += 1
print("victim", forked, flush=True)
"""


# Another arena process (a second match, e.g. a tournament worker) launching its own bot.
OTHER_MATCH = """
import pathlib, sys
from arena.sandbox import HostReport, SandboxLimits, launch_bot
bot_dir, socket_path, output = map(pathlib.Path, sys.argv[1:4])
options = {"host": HostReport(True, 1, False, ("seccomp",)), "unsafe": True} if sys.argv[6:] else {}
bot = launch_bot(bot_dir=bot_dir, command=["python3", "-c", sys.argv[4], sys.argv[5]],
                 runtime="python", env={}, socket_path=socket_path, limits=SandboxLimits(),
                 stderr_path=output, **options)
print("uid", bot.uid, flush=True)
status = bot.wait(30)
bot.kill()
print("status", status, flush=True)
"""


NO_FILTER: dict[str, Any] = {"host": HostReport(True, 1, False, ("seccomp",)), "unsafe": True}
"""Launch options for the sandbox without its seccomp filter (a control)."""


def _wait_for_line(path: Path, prefix: str, timeout_s: float = 20.0) -> str:
    def line() -> str | None:
        text = path.read_text() if path.exists() else ""
        return next((x for x in lines_of(text) if x.startswith(prefix)), None)

    return wait_until(line, f"a {prefix!r} line in {path}", timeout_s, interval_s=0.05)


@pytest.mark.slow
def test_inotify_hog_leaves_opponent_and_other_match_their_instances(harness: Harness) -> None:
    """Run without the seccomp filter, which refuses inotify (tests/sandbox/test_seccomp.py):
    the uid pool alone keeps one bot's per-user count from another's."""
    limit = int(Path("/proc/sys/fs/inotify/max_user_instances").read_text())
    hog, hog_output = harness.launch(
        INOTIFY_HOG, lang="python", limits=SandboxLimits(max_open_files=limit + 64), **NO_FILTER
    )
    held = _wait_for_line(hog_output, "held").split()
    assert int(held[1]) == limit and int(held[2]) == 24, held  # EMFILE: the per-uid maximum
    # its opponent in the same match
    status, output = harness.run(INOTIFY_VICTIM, lang="python", **NO_FILTER)
    assert status == 0 and lines_of(output)[-1] == "victim 8", output
    # a bot of a concurrently running match, launched by another arena process
    other_output = harness.root / "other-match.txt"
    result = subprocess.run(
        [sys.executable, "-c", OTHER_MATCH, str(harness.bot_dir), str(harness.socket_path),
         str(other_output), INOTIFY_VICTIM, harness.marker, "no-filter"],
        capture_output=True, text=True, timeout=60, env={**os.environ},
    )
    assert result.returncode == 0, result.stderr
    assert lines_of(result.stdout)[-1] == "status 0", result.stdout
    assert lines_of(other_output.read_text())[-1] == "victim 8"
    other_uid = int(lines_of(result.stdout)[0].split()[1])
    assert hog.poll() is None  # the hog still holds its instances throughout
    assert other_uid != hog.uid
    hog.kill()


@pytest.mark.slow
def test_mqueue_hog_leaves_its_opponent_the_same_queues(harness: Harness) -> None:
    hog, hog_output = harness.launch(MQUEUE_HOG.replace("sys.argv[1]", "120"), lang="python")
    held = _wait_for_line(hog_output, "held").split()
    assert int(held[1]) > 0 and int(held[2]) == 24, held  # EMFILE: RLIMIT_MSGQUEUE reached
    status, output = harness.run(MQUEUE_HOG.replace("sys.argv[1]", "0"), lang="python")
    assert status == 0, output
    assert lines_of(output)[-1].split()[:2] == ["held", held[1]]  # as many as the hog
    hog.kill()


@pytest.mark.slow
def test_process_hog_leaves_its_opponent_room_under_rlimit_nproc(harness: Harness) -> None:
    hog, hog_output = harness.launch(NPROC_HOG, lang="python")
    held = _wait_for_line(hog_output, "held").split()
    assert held == ["held", "31", "EAGAIN"], held  # the limit counts the hog's uid
    status, output = harness.run(NPROC_VICTIM, lang="python")
    assert status == 0 and lines_of(output)[-1] == "victim 3", output
    assert hog.poll() is None
    hog.kill()


@pytest.mark.slow
def test_bots_launched_at_once_have_different_uids(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four launches from four threads at once, over a pool of four uids: each bot its own.

    The race, forced: every launcher starts its search at the pool's first uid (a random
    start makes launchers rarely meet), and each is held just past its first attempt at a
    uid file's lock until all four have made theirs: all four contend for the same file
    together, whatever happens between a look at a lock and its taking."""
    monkeypatch.setenv(UID_RANGE_ENV, "300020-300023")
    monkeypatch.setenv(UID_DIR_ENV, str(tmp_path / "uids"))
    monkeypatch.setattr(uids, "secrets", SimpleNamespace(randbelow=lambda n: 0))
    crowd = Crowd(LAUNCHERS, "past the first attempt at a uid file's lock")
    flags = {name: getattr(fcntl, name) for name in ("LOCK_EX", "LOCK_SH", "LOCK_NB")}
    held = SimpleNamespace(flock=crowd.gather(fcntl.flock, first_only=True, after=True), **flags)
    monkeypatch.setattr(uids, "fcntl", held)
    bots: list[BotProcess] = []
    failed: list[BaseException] = []

    def launch() -> None:
        try:
            bots.append(harness.launch("sleep 60; : $0")[0])
        except BaseException as error:  # the test's thread reports it
            failed.append(error)

    threads = [threading.Thread(target=launch, daemon=True) for _ in range(LAUNCHERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads), "a launch still waits for its uid"
    assert failed == [] and crowd.arrived == LAUNCHERS
    monkeypatch.setattr(uids, "fcntl", fcntl)  # the checks below take locks of their own
    uids_taken = sorted(bot.uid for bot in bots if bot.uid is not None)
    assert uids_taken == list(range(300020, 300020 + LAUNCHERS))
    pool = configured_pool()
    assert all(uid_is_held(uid, pool) for uid in uids_taken)
    for bot in bots:
        bot.kill()
    assert not any(uid_is_held(uid, pool) for uid in uids_taken)


@pytest.mark.slow
def test_a_forked_child_does_not_keep_the_uid(harness: Harness) -> None:
    bot, _ = harness.launch("sleep 60; : $0")
    assert bot.uid is not None and uid_is_held(bot.uid)
    read_fd, write_fd = os.pipe()
    child = os.fork()
    if child == 0:  # a worker forked while the bot runs: it must not hold the lock
        os.close(read_fd)
        os.write(write_fd, b"1" if uid_is_held(bot.uid) else b"0")
        signal.pause()  # alive until the parent kills it
        os._exit(0)
    os.close(write_fd)
    try:
        assert os.read(read_fd, 1) == b"1"  # still the parent's
        bot.kill()
        assert not uid_is_held(bot.uid)  # the child, still alive, does not keep it
    finally:
        os.close(read_fd)
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)


@pytest.mark.slow
def test_uids_are_released_and_reused_after_teardown(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(UID_RANGE_ENV, "300000-300001")  # a pool of two
    monkeypatch.setenv(UID_DIR_ENV, str(tmp_path / "uids"))
    first, _ = harness.launch("sleep 60; : $0")
    second, _ = harness.launch("sleep 60; : $0")
    assert {first.uid, second.uid} == {300000, 300001}
    with pytest.raises(SandboxUnavailableError, match="all 2 uids 300000-300001 are in use"):
        harness.launch("sleep 60; : $0")
    first.kill()
    third, output = harness.launch("id -u; : $0")
    assert third.uid == first.uid
    assert third.wait(20) == 0
    assert lines_of(output.read_text()) == [str(first.uid)]
    second.kill()
    third.kill()


@pytest.mark.slow
def test_uid_lock_is_released_when_the_launcher_is_sigkilled(
    harness: Harness, tmp_path: Path
) -> None:
    lock_dir = tmp_path / "uids"
    env = {**os.environ, UID_RANGE_ENV: "300010-300010", UID_DIR_ENV: str(lock_dir)}
    launcher = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(OTHER_MATCH), str(harness.bot_dir),
         str(harness.socket_path), str(tmp_path / "out.txt"), "import time; time.sleep(60)",
         harness.marker],
        stdout=subprocess.PIPE, text=True, env=env,
    )
    assert launcher.stdout is not None
    assert launcher.stdout.readline().split() == ["uid", "300010"]
    pool = UidPool(300010, 300010, lock_dir)
    assert uid_is_held(300010, pool)
    launcher.send_signal(signal.SIGKILL)
    launcher.wait(10)
    wait_until(lambda: not uid_is_held(300010, pool), "uid 300010 let go", 10, interval_s=0.05)
