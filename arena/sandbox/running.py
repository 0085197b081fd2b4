"""A launched bot: its process, its cgroup, its accounting, and how it is killed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.logs import get_logger
from arena.sandbox.cgroups import BotCgroup
from arena.sandbox.drain import Drain
from arena.sandbox.staging import StagedSources, take_written
from arena.sandbox.uids import UidLease


@dataclass
class Resources:
    """What must be released when a bot goes away (shared with the finaliser)."""

    name: str
    proc: subprocess.Popen[bytes]
    cgroup: BotCgroup | None
    process_group: int | None  # unsafe mode without cgroups: kill by group
    last_cpu_time_ms: float | None = None
    last_memory_peak_mb: float | None = None
    limits_hit: tuple[str, ...] = ()
    released: bool = field(default=False)
    owner_pid: int = field(default_factory=os.getpid)  # a forked child must not kill it
    uid_lease: UidLease | None = None  # given back only once every process of the bot is gone
    drainers: tuple[Drain, ...] = ()  # copy the bot's output pipes to files
    staged: StagedSources | None = None  # the neutral sources of its mounts


def release(resources: Resources) -> None:
    """Kill every process of the bot and remove its cgroup; safe to call twice.
    Only in the process that launched it: a forked child inherits the finaliser."""
    if resources.released or resources.owner_pid != os.getpid():
        return
    cgroup = resources.cgroup
    if cgroup is not None:
        remember_accounting(resources)
        cgroup.kill_all()
    if resources.process_group is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(resources.process_group, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        resources.proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        resources.proc.wait(timeout=5.0)
    if cgroup is not None:
        remember_accounting(resources)
        cgroup.remove()
    finish_drainers(resources)
    if resources.staged is not None:
        resources.staged.remove()
    if resources.uid_lease is not None:  # kill_all returned with the group empty
        resources.uid_lease.release()
    resources.released = True
    get_logger(bot=resources.name).info(
        "bot_killed",
        exit_status=resources.proc.returncode,
        cpu_time_ms=resources.last_cpu_time_ms,
        limits_hit=list(resources.limits_hit),
    )


def finish_drainers(resources: Resources, timeout_s: float = 2.0) -> None:
    """Let the output drains copy what is left (they end at EOF, once every
    process holding the pipe is gone); stop one that does not."""
    for drainer in resources.drainers:
        if not drainer.wait(timeout_s):
            drainer.stop()


def remember_accounting(resources: Resources) -> None:
    cgroup = resources.cgroup
    if cgroup is None:
        return
    cpu_ms = cgroup.cpu_time_ms()
    if cpu_ms is not None:
        resources.last_cpu_time_ms = cpu_ms
    peak_mb = cgroup.memory_peak_mb()
    if peak_mb is not None:
        resources.last_memory_peak_mb = peak_mb
    resources.limits_hit = tuple(sorted({*resources.limits_hit, *cgroup.limits_hit()}))


class BotProcess:
    """A running (or finished) sandboxed bot. ``pid`` is the host pid of bwrap."""

    def __init__(self, resources: Resources, *, sandboxed: bool) -> None:
        self._resources = resources
        self.pid = resources.proc.pid
        self.name = resources.name
        self.sandboxed = sandboxed
        lease = resources.uid_lease
        self.uid: int | None = lease.uid if lease is not None else None
        """The bot's own host uid from the pool (None: unprivileged arena or unsafe mode)."""
        self._finalizer = weakref.finalize(self, release, resources)

    def poll(self) -> int | None:
        """Exit status once the bot's main process is gone (bwrap: 128+signal);
        by then its output file holds all it wrote."""
        status = self._resources.proc.poll()
        if status is not None:
            finish_drainers(self._resources, timeout_s=0.5)
        return status

    def wait(self, timeout_s: float) -> int | None:
        try:
            status = self._resources.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None
        finish_drainers(self._resources, timeout_s=0.5)
        return status

    def take_written(self, dest: Path, max_bytes: int) -> int | None:
        """Move what the bot wrote into its writable file (``launch_bot``'s
        ``writable_file``) to ``dest``: its size, or None (nothing written, more
        than ``max_bytes``, no such file, or the bot still running)."""
        resources = self._resources
        if resources.staged is None or resources.released or resources.proc.poll() is None:
            return None
        if resources.cgroup is not None:
            resources.cgroup.kill_all()  # a daemon of the bot may still hold the file open
            if resources.cgroup.pids():
                return None
        return take_written(resources.staged, dest, max_bytes)

    def cpu_time_ms(self) -> float | None:
        """CPU time of the whole tree so far (None without a cgroup). Cheap: one
        pread of a file kept open (the referee asks twice per decision)."""
        cgroup = self._resources.cgroup
        if cgroup is not None and not self._resources.released:
            cpu_ms = cgroup.cpu_time_ms()
            if cpu_ms is not None:
                self._resources.last_cpu_time_ms = cpu_ms
        return self._resources.last_cpu_time_ms

    def memory_peak_mb(self) -> float | None:
        if not self._resources.released:
            remember_accounting(self._resources)
        return self._resources.last_memory_peak_mb

    def limits_hit(self) -> tuple[str, ...]:
        """Limits the bot ran into so far: "memory" (OOM-killed), "memory_full" (at its
        memory limit, where it runs slowly), "processes"."""
        if not self._resources.released:
            remember_accounting(self._resources)
        return self._resources.limits_hit

    def freeze(self, frozen: bool) -> bool:
        """Freeze (True) or thaw (False) the whole tree; False without a cgroup."""
        cgroup = self._resources.cgroup
        if cgroup is None or self._resources.released:
            return False
        return cgroup.freeze(frozen)

    def set_idle(self, idle: bool) -> bool:
        """Run the whole tree in the idle scheduling class (True) or normally (False):
        ``BotCgroup.set_idle``. False without a cgroup, or if the kernel refused."""
        cgroup = self._resources.cgroup
        if cgroup is None or self._resources.released:
            return False
        return cgroup.set_idle(idle)

    def frozen_state(self) -> str | None:
        cgroup = self._resources.cgroup
        return None if cgroup is None or self._resources.released else cgroup.frozen_state()

    def cgroup_name(self) -> str | None:
        cgroup = self._resources.cgroup
        return cgroup.name if cgroup is not None else None

    def kill(self) -> None:
        """Kill the whole tree (daemons included) and remove the cgroup; idempotent."""
        self._finalizer()


def is_running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (a zombie holds nothing but its pid)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def wait_gone(pids: Sequence[int], timeout_s: float = 2.0) -> bool:
    """True once none of ``pids`` is running any more (helper for callers and tests)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if not any(is_running(pid) for pid in pids):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
