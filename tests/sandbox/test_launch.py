"""launch_bot at its edges: bad requests, missing host layers, the unsafe fallback,
and cleanup when the caller forgets, exits or crashes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from arena.logs import configure
from arena.sandbox import (
    SANDBOX_SOCKET,
    HostReport,
    SandboxConfigError,
    SandboxLimits,
    SandboxUnavailableError,
    launch_bot,
    probe_host,
)
from arena.sandbox.cgroups import CGROUP_ROOT, detect_version, own_cgroup_paths, read_proc_cgroup
from arena.sandbox.probe import probe_cgroups, probe_namespaces, unavailable_error
from arena.sandbox.process import wait_gone
from arena.testing.waiting import wait_until

from .conftest import Harness, cgroup_dirs, lines_of, marked_pids


def _cmdline(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        pytest.param({"runtime": "ruby"}, "unknown runtime 'ruby'", id="runtime"),
        pytest.param({"command": []}, "command must be a non-empty list", id="empty-command"),
        pytest.param({"command": ["sh", ""]}, "command must be a non-empty list", id="empty-word"),
        pytest.param({"env": ["A=B"]}, "env must be a mapping", id="env-list"),
        pytest.param({"env": {"A=B": "1"}}, "invalid environment variable name", id="env-name"),
        pytest.param({"env": {"A": "x\0y"}}, "invalid value for environment variable A",
                     id="env-value"),
        pytest.param({"bot_dir": Path("relative")}, "not an existing absolute", id="relative"),
        pytest.param({"bot_dir": Path("/nonexistent/bot")}, "not an existing absolute",
                     id="missing-dir"),
        pytest.param({"socket_path": Path("/nonexistent/ref.sock")}, "referee socket",
                     id="missing-socket"),
        pytest.param({"extra_ro_binds": [(Path("/nonexistent"), "/sdk")]},
                     "extra read-only bind source", id="bind-source"),
        pytest.param({"extra_ro_binds": [(Path("/usr"), "sdk")]}, "must be absolute",
                     id="bind-target"),
        pytest.param({"extra_ro_binds": [(Path("/usr"), "/usr/share/x")]},
                     "would cover the sandbox's own /usr", id="bind-over-usr"),
        pytest.param({"extra_ro_binds": [(Path("/usr"), "/bot")]},
                     "would cover the sandbox's own /bot", id="bind-over-bot"),
        pytest.param({"extra_ro_binds": [(Path("/usr"), "/run/kahuna")]},
                     "would cover", id="bind-over-socket-dir"),
        pytest.param({"stderr_path": Path("/nonexistent/err.txt")},
                     "stderr_path /nonexistent/err.txt: its directory", id="stderr-dir"),
        pytest.param({"limits": "big"}, "limits must be SandboxLimits", id="limits-type"),
    ],
)
def test_bad_requests_are_named(
    harness: Harness, overrides: dict[str, Any], message: str
) -> None:
    request: dict[str, Any] = {
        "bot_dir": harness.bot_dir,
        "command": ["/bin/true", harness.marker],
        "runtime": "native",
        "env": {},
        "socket_path": harness.socket_path,
        "limits": SandboxLimits(),
    }
    with pytest.raises(SandboxConfigError, match=message):
        launch_bot(**{**request, **overrides})


@pytest.mark.slow
@pytest.mark.parametrize(
    ("entry", "mode", "named"),
    [
        pytest.param(".", 0o700, ": ."), pytest.param("secret.py", 0o600, ": secret.py"),
        pytest.param("lib", 0o700, ": lib"),
    ],
)
def test_unreadable_bot_files_are_named(
    harness: Harness, entry: str, mode: int, named: str
) -> None:
    target = harness.bot_dir / entry
    if entry == "lib":
        target.mkdir()
    elif entry != ".":
        target.write_text("x = 1\n")
    target.chmod(mode)
    with pytest.raises(SandboxConfigError, match=f"unprivileged uid{named};.*world-readable"):
        harness.launch("true")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        pytest.param("memory_mb", 0, "at least 16", id="memory-zero"),
        pytest.param("max_processes", 8.5, "whole number", id="processes-float"),
        pytest.param("cpu_cores", "one", "must be a number", id="cpu-text"),
        pytest.param("tmp_size_mb", True, "must be a number", id="tmp-bool"),
    ],
)
def test_bad_limits_are_named(field: str, value: object, message: str) -> None:
    with pytest.raises(SandboxConfigError, match=f"{field}.*{message}"):
        SandboxLimits(**{field: value})  # type: ignore[arg-type]


@pytest.mark.slow
def test_this_host_has_every_layer() -> None:
    report = probe_host()
    assert (report.namespaces, report.cgroup_version, report.seccomp, report.missing) == (
        True, 1 if Path("/sys/fs/cgroup/memory").is_dir() else 2, True, ()
    )


NO_NAMESPACES = HostReport(
    namespaces=False,
    cgroup_version=1,
    seccomp=False,
    missing=("namespaces: bwrap cannot create namespaces", "seccomp: needs bwrap"),
)


@pytest.mark.slow
def test_missing_layers_refuse_untrusted_bots(harness: Harness) -> None:
    with pytest.raises(SandboxUnavailableError) as caught:
        harness.launch("sleep 30", host=NO_NAMESPACES)
    assert "namespaces: bwrap cannot create namespaces" in str(caught.value)
    assert "unsafe" in str(caught.value)
    assert marked_pids(harness.marker) == []
    assert str(unavailable_error(NO_NAMESPACES)) == str(caught.value)


@pytest.mark.slow
def test_unsafe_fallback_runs_loudly_with_rlimits_and_the_real_socket(harness: Harness) -> None:
    configure()  # once, before capturing (get_logger would configure inside the capture)
    with capture_logs() as logs:
        status, output = harness.run(
            'pwd; ulimit -c; ulimit -n; echo "$KAHUNA_REFEREE"',
            host=NO_NAMESPACES,
            unsafe=True,
            env={"KAHUNA_REFEREE": f"unix://{SANDBOX_SOCKET}"},
            limits=SandboxLimits(max_open_files=77),
        )
    assert status == 0, output
    assert lines_of(output) == [
        str(harness.bot_dir), "0", "77", f"unix://{harness.socket_path.resolve()}"
    ]
    warnings = [entry for entry in logs if entry["event"] == "sandbox_unsafe_launched"]
    assert len(warnings) == 1 and warnings[0]["log_level"] == "warning"
    assert warnings[0]["missing"] == list(NO_NAMESPACES.missing)


@pytest.mark.slow
@pytest.mark.parametrize(
    "cgroup_version",
    [pytest.param(1, id="with-cgroup"), pytest.param(None, id="process-group-only")],
)
def test_unsafe_fallback_kills_its_tree(harness: Harness, cgroup_version: int | None) -> None:
    host = HostReport(False, cgroup_version, False, ("namespaces: none",))
    # children that keep the marker ($0) in their command line
    child = "sh -c 'sleep 300; :' \"$0\""
    script = f"{child} & {child}" if cgroup_version is None else (
        f"setsid {child} & {child}"  # only the cgroup can catch a new session
    )
    bot, _ = harness.launch(script, host=host, unsafe=True)
    # more while a child is between fork and exec
    wait_until(lambda: len(marked_pids(harness.marker)) >= 3, "the bot and both children", 5,
               state=lambda: marked_pids(harness.marker))  # fmt: skip
    assert not bot.sandboxed
    bot.kill()
    assert wait_gone(marked_pids(harness.marker))


@pytest.mark.slow
def test_a_bots_cpu_group_has_no_parent_shared_with_other_bots(harness: Harness) -> None:
    """The scheduler splits a parent group's one weight over the CPUs by its children's
    recent load, so two bots under one ``kahuna-arena`` cpu group would take CPU share
    from each other even while one is frozen. Each bot's cpu (and cpuacct)
    group is a sibling of the arena's other groups; its memory, pids and freezer
    groups stay under ``kahuna-arena``. Read from the kernel: /proc/PID/cgroup."""
    if detect_version(CGROUP_ROOT) != 1:
        pytest.skip("the flat cpu layout is v1's")
    bots = [harness.launch("sleep 300")[0] for _ in range(2)]
    # the gate execs bwrap once it is in its groups
    wait_until(lambda: all(_cmdline(b.pid).startswith(b"/usr/bin/bwrap") for b in bots),
               "bwrap exec'd in both", 10)  # fmt: skip
    own = own_cgroup_paths(read_proc_cgroup())
    for bot in bots:
        paths = own_cgroup_paths(Path(f"/proc/{bot.pid}/cgroup").read_text())
        name = bot.cgroup_name()
        assert name is not None
        for controller in ("cpu", "cpuacct"):
            parent = own[controller].rstrip("/")
            assert paths[controller] == f"{parent}/kahuna-arena-{name}"
        for controller in ("memory", "pids", "freezer"):
            assert paths[controller].endswith(f"/kahuna-arena/{name}")
        assert [d for d in cgroup_dirs(name) if not d.is_dir()] == []
    for bot in bots:
        bot.kill()
    assert not [d for bot in bots for d in cgroup_dirs(bot.name) if d.exists()]


@pytest.mark.slow
def test_kill_is_idempotent_and_accounting_survives_it(harness: Harness) -> None:
    bot, _ = harness.launch("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 300")
    # the gate execs bwrap once it is in the cgroup
    wait_until(lambda: _cmdline(bot.pid).startswith(b"/usr/bin/bwrap"), "bwrap exec'd", 10,
               state=lambda: _cmdline(bot.pid))  # fmt: skip
    wait_until(bot.cpu_time_ms, "the loop's first CPU time", 10)
    bot.kill()
    bot.kill()
    assert bot.poll() is not None
    cpu_ms = bot.cpu_time_ms()
    assert cpu_ms is not None and cpu_ms > 0
    assert all(not directory.exists() for directory in cgroup_dirs(bot.name))


CALLER = """
import os, signal, sys
from pathlib import Path
from arena.sandbox import SandboxLimits, launch_bot
bot = launch_bot(bot_dir=Path(sys.argv[1]), command=["/bin/sh", "-c", "sleep 300", sys.argv[2]],
                 runtime="native", env={}, socket_path=Path(sys.argv[3]), limits=SandboxLimits())
print(bot.name, flush=True)
sys.stdin.readline()
if sys.argv[4] == "crash":
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.slow
@pytest.mark.parametrize("ending", ["exit", "crash"])
def test_bots_die_with_their_caller(harness: Harness, ending: str) -> None:
    caller = subprocess.Popen(
        [sys.executable, "-c", CALLER, str(harness.bot_dir), harness.marker,
         str(harness.socket_path), ending],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert caller.stdout is not None and caller.stdin is not None
    name = caller.stdout.readline().strip()
    assert name.startswith("bot-") and marked_pids(harness.marker)
    caller.stdin.write("go\n")
    caller.stdin.close()
    status = caller.wait(20)
    assert status == (-signal.SIGKILL if ending == "crash" else 0)
    assert wait_gone(marked_pids(harness.marker), timeout_s=5)
    # after a crash, the caller's watchdog cleans up
    wait_until(lambda: not any(d.exists() for d in cgroup_dirs(name)), "the cgroups removed", 5,
               state=lambda: [d for d in cgroup_dirs(name) if d.exists()])  # fmt: skip
    assert os.path.exists(f"/proc/{caller.pid}") is False


@pytest.mark.slow
@pytest.mark.parametrize(
    ("bwrap", "expected"),
    [
        pytest.param("/usr/bin/bwrap", None, id="works"),
        pytest.param("/nonexistent/bwrap", "namespaces: /nonexistent/bwrap not found "
                     "(install the Debian package bubblewrap)", id="not-installed"),
        pytest.param("/bin/false", "namespaces: bwrap cannot create pid/net/ipc/uts/mount "
                     "namespaces: exit status 1", id="refused"),
    ],
)
def test_probe_names_namespace_problems(bwrap: str, expected: str | None) -> None:
    assert probe_namespaces(bwrap) == expected


def test_probe_names_cgroup_problems(tmp_path: Path) -> None:
    assert probe_cgroups(tmp_path) == (
        None, f"cgroups: no v1 or v2 hierarchy mounted at {tmp_path}"
    )
    (tmp_path / "cgroup.controllers").write_text("memory pids cpu\n")
    (tmp_path / "cgroup.subtree_control").write_text("memory pids cpu\n")
    (tmp_path / "kahuna-arena").write_text("not a directory")
    version, problem = probe_cgroups(tmp_path)
    assert version == 2
    assert problem is not None and problem.startswith("cgroups: v2 hierarchy is not writable:")
    assert "kahuna-arena" in problem


FORKER = """
import os, signal, sys, time
from pathlib import Path
from arena.sandbox import SandboxLimits, launch_bot
def launch(tag):
    return launch_bot(bot_dir=Path(sys.argv[1]), runtime="native", env={},
                      command=["/bin/sh", "-c", "sleep 300; : $0", sys.argv[2] + tag],
                      socket_path=Path(sys.argv[3]), limits=SandboxLimits())
parent_bot = launch("-parent")
child = os.fork()
if child == 0:  # a forked worker: its own bot, then a normal exit with atexit handlers
    child_bot = launch("-child")
    print(child_bot.name, flush=True)
    sys.stdin.readline()
    sys.exit(0)
os.waitpid(child, 0)
print(parent_bot.name, parent_bot.poll() is None, flush=True)
sys.stdin.readline()
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.slow
def test_forked_worker_and_crashed_parent_each_clean_up_their_own(harness: Harness) -> None:
    caller = subprocess.Popen(
        [sys.executable, "-c", FORKER, str(harness.bot_dir), harness.marker,
         str(harness.socket_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert caller.stdout is not None and caller.stdin is not None
    child_name = caller.stdout.readline().strip()
    caller.stdin.write("child, exit\n")
    caller.stdin.flush()
    parent_name, parent_bot_alive = caller.stdout.readline().split()
    # the child's exit killed its own bot, not the parent's (whose finaliser it inherited)
    assert parent_bot_alive == "True"
    assert wait_gone(marked_pids(harness.marker + "-child"))
    assert marked_pids(harness.marker + "-parent")
    assert not [d for d in cgroup_dirs(child_name) if d.exists()]
    caller.stdin.write("parent, crash\n")
    caller.stdin.close()
    assert caller.wait(20) == -signal.SIGKILL
    assert wait_gone(marked_pids(harness.marker), timeout_s=10)  # the watchdog's work
    wait_until(lambda: not any(d.exists() for d in cgroup_dirs(parent_name)),
               "the cgroups removed", 10,
               state=lambda: [d for d in cgroup_dirs(parent_name) if d.exists()])  # fmt: skip
