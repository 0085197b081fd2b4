"""Per-bot control groups: memory, process and CPU limits, accounting, killing.

Both hierarchies are supported. v1 (these machines): one directory per
controller (memory, pids, cpu, cpuacct, freezer), each bot's group nested under
``kahuna-arena`` inside the arena's own group of that hierarchy, except in cpu
and cpuacct, where it sits in the arena's own group itself, named
``kahuna-arena-<group>`` (``V1_FLAT_CONTROLLERS``: a shared parent made every
bot's CPU share depend on the other bots' load). v2 (modern
hosts): one directory under ``kahuna-arena`` with the memory, pids and cpu
controllers enabled, inside the group delegated to the arena (systemd's
``Delegate=yes``) if it runs in one, else at the mount's root. ``root`` and
the contents of ``/proc/self/cgroup`` are parameters so that the file-writing
logic can be tested against a temporary directory laid out like either
hierarchy.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Self

from arena.logs import get_logger
from arena.sandbox.limits import SandboxLimits

CGROUP_ROOT = Path("/sys/fs/cgroup")
PARENT_NAME = "kahuna-arena"
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "freezer")
V2_CONTROLLERS = ("memory", "pids", "cpu")
CPU_PERIOD_US = 100_000
KILL_TIMEOUT_S = 5.0
FREEZE_TIMEOUT_S = 0.05
"""How long ``freeze`` waits for FROZEN: a task in an uninterruptible sleep can
hold the group in FREEZING; the referee does not wait on it longer than this."""


class CgroupError(RuntimeError):
    """A control group could not be created or configured; names the file."""


def detect_version(root: Path = CGROUP_ROOT) -> int | None:
    """2 for a unified hierarchy, 1 for per-controller mounts, None if neither."""
    if (root / "cgroup.controllers").is_file():
        return 2
    if any((root / name).is_dir() for name in V1_CONTROLLERS):
        return 1  # CgroupV1.create names any controller that is missing
    return None


def own_cgroup_paths(proc_cgroup_text: str) -> dict[str, str]:
    """``/proc/self/cgroup`` as controller -> path; the v2 entry is keyed ``""``."""
    paths: dict[str, str] = {}
    for line in proc_cgroup_text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            paths[""] = path
        for name in controllers.split(","):
            if name:
                paths[name] = path
    return paths


def read_proc_cgroup() -> str:
    return Path("/proc/self/cgroup").read_text()


def write_control(path: Path, value: str) -> None:
    """Write one control file, naming it in the error if the kernel refuses."""
    try:
        with open(path, "w") as handle:
            handle.write(value)
    except OSError as exc:
        raise CgroupError(f"cannot write {value!r} to {path}: {exc.strerror or exc}") from exc


REACHED_SLACK_BYTES = 1024 * 1024
"""How near its limit a group's peak usage counts as the limit reached: the kernel charges
in batches of pages, so a group held at its limit may peak a little below it."""


def limit_reached(directory: Path, peak_file: str, limit_file: str) -> bool:
    """Whether the group's peak usage (``peak_file``) reached its limit (``limit_file``)."""
    peak = (read_control(directory / peak_file) or "").strip()
    limit = (read_control(directory / limit_file) or "").strip()
    if not (peak.isdigit() and limit.isdigit()):
        return False
    return int(peak) + REACHED_SLACK_BYTES >= int(limit)


def read_control(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


class ControlReader:
    """A control file kept open and re-read with pread: the referee asks for CPU
    time twice per decision, and open+read+close costs several times more."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._write_fd: int | None = None
        self._lock = threading.Lock()

    def read(self) -> str | None:
        with self._lock:
            try:
                if self._fd is None:
                    self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
                return os.pread(self._fd, 4096, 0).decode()
            except OSError:
                return None

    def write(self, value: str) -> None:
        """Write ``value`` through a descriptor kept open (the referee freezes and
        thaws a bot at every change of turn); CgroupError names the file."""
        with self._lock:
            try:
                if self._write_fd is None:
                    self._write_fd = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC)
                os.write(self._write_fd, value.encode())
            except OSError as exc:
                raise CgroupError(
                    f"cannot write {value!r} to {self.path}: {exc.strerror or exc}"
                ) from exc

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            if self._write_fd is not None:
                os.close(self._write_fd)
                self._write_fd = None


def parse_keyed(text: str | None) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            values[parts[0]] = int(parts[1])
    return values


def read_keyed(path: Path) -> dict[str, int]:
    """A flat-keyed file (``oom_kill 3``) as a dict; missing file -> {}."""
    return parse_keyed(read_control(path))


def pids_in(procs_file: Path) -> list[int]:
    text = read_control(procs_file) or ""
    return [int(word) for word in text.split() if word.isdigit()]


def _signal_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _remove_dir(path: Path) -> bool:
    """rmdir a cgroup, retrying while the last exits are being released."""
    deadline = time.monotonic() + 1.0
    while True:
        try:
            path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if time.monotonic() > deadline:
                get_logger().warning("cgroup_remove_failed", path=str(path), error=str(exc))
                return False
            time.sleep(0.01)


CREATE_ATTEMPTS = 5


def make_child_group(
    parent: Path, name: str, prepare_parent: Callable[[], None] | None = None
) -> Path:
    """mkdir ``parent/name`` (and ``parent``), retrying if another arena process
    removes the empty parent at the same moment (see remove_parent_if_empty)."""
    for attempt in range(CREATE_ATTEMPTS):
        try:
            try:
                parent.mkdir(exist_ok=True)
            except FileExistsError as exc:  # it existed, and was removed before mkdir looked
                raise FileNotFoundError(exc.errno, f"{parent} vanished", str(parent)) from exc
            if prepare_parent is not None:
                prepare_parent()
            (parent / name).mkdir()
            return parent / name
        except (OSError, CgroupError) as exc:
            cause = exc.__cause__ if isinstance(exc, CgroupError) else exc
            if isinstance(cause, FileNotFoundError) and attempt + 1 < CREATE_ATTEMPTS:
                continue
            if isinstance(exc, CgroupError):
                raise
            raise CgroupError(f"cannot create cgroup {parent / name}: {exc}") from exc
    raise CgroupError(f"cannot create cgroup {parent / name}")  # unreachable


def remove_parent_if_empty(parent: Path) -> None:
    """Remove ``kahuna-arena`` once its last group is gone, so that nothing of the
    arena is left inside groups that belong to someone else (EBUSY while in use)."""
    if parent.name == PARENT_NAME:
        with contextlib.suppress(OSError):
            parent.rmdir()


class BotCgroup(ABC):
    """One bot's control group (whatever the hierarchy)."""

    name: str

    @abstractmethod
    def add_pid(self, pid: int) -> None: ...

    @abstractmethod
    def pids(self) -> list[int]: ...

    @abstractmethod
    def cpu_time_ms(self) -> float | None: ...

    @abstractmethod
    def memory_peak_mb(self) -> float | None: ...

    @abstractmethod
    def limits_hit(self) -> tuple[str, ...]:
        """Which limits the group ran into: "memory" (OOM kill), "memory_full" (its usage
        reached the limit, so the kernel reclaimed its memory: a bot there runs slowly),
        "processes"."""

    @abstractmethod
    def freeze(self, frozen: bool) -> bool:
        """Freeze (or thaw) every task of the group; True once the kernel reports the
        wanted state, False if that did not happen within FREEZE_TIMEOUT_S (the
        write is kept: the group finishes freezing on its own) or was refused."""

    @abstractmethod
    def set_idle(self, idle: bool) -> bool:
        """Put the group in the idle scheduling class (``cpu.idle``, kernel 5.15+; else the
        least CPU weight) or back to normal: idle, it runs only on CPU that no other group
        wants (a bot launched ahead of its turn). True once written, False if refused."""

    @abstractmethod
    def frozen_state(self) -> str | None:
        """The group's freezer state as the kernel reports it (v1: FROZEN, FREEZING,
        THAWED; v2: FROZEN or THAWED); None if unreadable."""

    @abstractmethod
    def kill_all(self) -> None:
        """SIGKILL every process in the group until it is empty (or times out)."""

    @abstractmethod
    def remove(self) -> bool: ...

    @abstractmethod
    def _apply(self, limits: SandboxLimits) -> None:
        """Write the limits into the group's control files."""

    def _limited(self, limits: SandboxLimits) -> Self:
        """This group with ``limits`` applied; removed again if they cannot be."""
        try:
            self._apply(limits)
        except CgroupError:
            self.remove()
            raise
        return self


V1_FLAT_CONTROLLERS = frozenset({"cpu", "cpuacct"})
"""v1 hierarchies where a bot's group sits beside the arena's other groups, not in a
shared ``kahuna-arena`` parent: the scheduler gives a parent group one weight (one
ordinary process's worth) split over its children by their recent load, so in a
shared parent every bot's CPU share shrank while any other bot ran, its opponent
included, and all the bots of the host together weighed as much as one process
(docs/design/SANDBOX.md). ``cpuacct`` goes with ``cpu`` (one hierarchy where
they are mounted together)."""
FLAT_PREFIX = f"{PARENT_NAME}-"
"""A flat group's name: the prefix, then the bot group's own name."""


def v1_parent(root: Path, controller: str, own: Mapping[str, str]) -> Path:
    """Where a bot's group goes in one v1 hierarchy: ``kahuna-arena`` inside the arena's
    own group, or that own group itself for ``V1_FLAT_CONTROLLERS``."""
    base = root / controller
    nested = base / own.get(controller, "/").lstrip("/")
    found = nested if nested.is_dir() else base
    return found if controller in V1_FLAT_CONTROLLERS else found / PARENT_NAME


def v1_group_name(controller: str, name: str) -> str:
    """The directory name of bot group ``name`` in ``controller``'s hierarchy."""
    return FLAT_PREFIX + name if controller in V1_FLAT_CONTROLLERS else name


def v1_group(root: Path, controller: str, own: Mapping[str, str], name: str) -> Path:
    """The directory of bot group ``name`` in one v1 hierarchy (whether or not it exists)."""
    return v1_parent(root, controller, own) / v1_group_name(controller, name)


class CgroupV1(BotCgroup):
    """A bot's group in each v1 hierarchy: ``dirs`` maps controller -> directory."""

    def __init__(self, name: str, dirs: Mapping[str, Path]) -> None:
        self.name = name
        self.dirs = dict(dirs)
        cpuacct = self.dirs.get("cpuacct", Path("/nonexistent"))
        self._cpu_usage = ControlReader(cpuacct / "cpuacct.usage")
        freezer = self.dirs.get("freezer", Path("/nonexistent"))
        self._freezer_state = ControlReader(freezer / "freezer.state")

    @classmethod
    def create(
        cls, name: str, limits: SandboxLimits, *, root: Path, proc_cgroup_text: str
    ) -> CgroupV1:
        absent = [c for c in V1_CONTROLLERS if not (root / c).is_dir()]
        if absent:
            names = ", ".join(absent)
            raise CgroupError(f"cgroup v1 controllers not mounted under {root}: {names}")
        own = own_cgroup_paths(proc_cgroup_text)
        dirs: dict[str, Path] = {}
        parents = [v1_parent(root, controller, own) for controller in V1_CONTROLLERS]
        flat = [c in V1_FLAT_CONTROLLERS for c in V1_CONTROLLERS]
        sweep_stale([parent for parent, f in zip(parents, flat, strict=True) if not f])
        sweep_stale([parent for parent, f in zip(parents, flat, strict=True) if f], FLAT_PREFIX)
        for controller, parent in zip(V1_CONTROLLERS, parents, strict=True):
            try:
                dirs[controller] = make_child_group(parent, v1_group_name(controller, name))
            except CgroupError:
                cls(name, dirs).remove()
                raise
        return cls(name, dirs)._limited(limits)

    def _apply(self, limits: SandboxLimits) -> None:
        memory_bytes = str(limits.memory_mb * 1024 * 1024)
        write_control(self.dirs["memory"] / "memory.limit_in_bytes", memory_bytes)
        memsw = self.dirs["memory"] / "memory.memsw.limit_in_bytes"
        if memsw.exists():  # only with swap accounting; equal limits mean no swap
            write_control(memsw, memory_bytes)
        write_control(self.dirs["pids"] / "pids.max", str(limits.max_processes))
        write_control(self.dirs["cpu"] / "cpu.cfs_period_us", str(CPU_PERIOD_US))
        quota_us = max(1000, round(limits.cpu_cores * CPU_PERIOD_US))
        write_control(self.dirs["cpu"] / "cpu.cfs_quota_us", str(quota_us))

    def add_pid(self, pid: int) -> None:
        for directory in self.dirs.values():
            write_control(directory / "cgroup.procs", str(pid))

    def pids(self) -> list[int]:
        found: set[int] = set()
        for directory in self.dirs.values():
            found.update(pids_in(directory / "cgroup.procs"))
        return sorted(found)

    def cpu_time_ms(self) -> float | None:
        text = self._cpu_usage.read()
        return int(text) / 1e6 if text and text.strip().isdigit() else None

    def memory_peak_mb(self) -> float | None:
        text = read_control(self.dirs["memory"] / "memory.max_usage_in_bytes")
        return int(text) / (1024 * 1024) if text and text.strip().isdigit() else None

    def limits_hit(self) -> tuple[str, ...]:
        hit: list[str] = []
        if read_keyed(self.dirs["memory"] / "memory.oom_control").get("oom_kill", 0) > 0:
            hit.append("memory")
        if limit_reached(self.dirs["memory"], "memory.max_usage_in_bytes", "memory.limit_in_bytes"):
            hit.append("memory_full")  # (memory.failcnt: not counted by every kernel)
        if read_keyed(self.dirs["pids"] / "pids.events").get("max", 0) > 0:
            hit.append("processes")
        return tuple(hit)

    def _set_frozen(self, frozen: bool, timeout_s: float = 0.5) -> bool:
        state_file = self.dirs["freezer"] / "freezer.state"
        wanted = "FROZEN" if frozen else "THAWED"
        try:
            write_control(state_file, wanted)
        except CgroupError:
            return False
        deadline = time.monotonic() + timeout_s
        while (read_control(state_file) or wanted).strip() != wanted:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.0005)
        return True

    def freeze(self, frozen: bool) -> bool:
        """Cheap enough for every change of turn: descriptors kept open, and no wait
        on a thaw (THAWED takes effect at the write, v1 has no THAWING state)."""
        wanted = "FROZEN" if frozen else "THAWED"
        try:
            self._freezer_state.write(wanted)
        except CgroupError:
            return False
        if not frozen:
            return True
        deadline = time.monotonic() + FREEZE_TIMEOUT_S
        while (self._freezer_state.read() or wanted).strip() != wanted:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.0002)
        return True

    def set_idle(self, idle: bool) -> bool:
        return _set_idle(self.dirs["cpu"], idle, "cpu.shares", V1_SHARES)

    def frozen_state(self) -> str | None:
        text = self._freezer_state.read()
        return text.strip() if text else None

    def kill_all(self) -> None:
        deadline = time.monotonic() + KILL_TIMEOUT_S
        while self.pids() and time.monotonic() < deadline:
            self._set_frozen(True)  # nobody can fork while we collect pids
            _signal_all(self.pids())
            self._set_frozen(False)  # frozen tasks die once thawed
            time.sleep(0.002)

    def remove(self) -> bool:
        self._cpu_usage.close()
        self._freezer_state.close()
        removed = all([_remove_dir(d) for d in self.dirs.values() if d.exists()])
        for directory in self.dirs.values():
            remove_parent_if_empty(directory.parent)
        return removed


class CgroupV2(BotCgroup):
    """A bot's group in the unified hierarchy."""

    def __init__(self, name: str, directory: Path, *, prefer_kill_file: bool = True) -> None:
        self.name = name
        self.directory = directory
        self.prefer_kill_file = prefer_kill_file  # False: the freeze path of older kernels
        self._cpu_stat = ControlReader(directory / "cpu.stat")

    @classmethod
    def create(
        cls, name: str, limits: SandboxLimits, *, root: Path, proc_cgroup_text: str | None = None
    ) -> CgroupV2:
        text = proc_cgroup_text if proc_cgroup_text is not None else read_proc_cgroup()
        base = v2_base(root, text)
        parent = base / PARENT_NAME
        available = (read_control(base / "cgroup.controllers") or "").split()
        absent = [c for c in V2_CONTROLLERS if c not in available]
        if absent:
            names = ", ".join(absent)
            raise CgroupError(f"cgroup v2 controllers not available at {base}: {names}")
        enable = " ".join(f"+{controller}" for controller in V2_CONTROLLERS)
        if base != root:
            _vacate(base)
        _enable_controllers(base, enable)
        sweep_stale([parent])
        directory = make_child_group(parent, name, lambda: _enable_controllers(parent, enable))
        return cls(name, directory)._limited(limits)

    def _apply(self, limits: SandboxLimits) -> None:
        write_control(self.directory / "memory.max", str(limits.memory_mb * 1024 * 1024))
        with contextlib.suppress(CgroupError):  # absent without swap accounting
            write_control(self.directory / "memory.swap.max", "0")
        with contextlib.suppress(CgroupError):  # an OOM kill takes the whole bot (4.19+)
            write_control(self.directory / "memory.oom.group", "1")
        write_control(self.directory / "pids.max", str(limits.max_processes))
        quota_us = max(1000, round(limits.cpu_cores * CPU_PERIOD_US))
        write_control(self.directory / "cpu.max", f"{quota_us} {CPU_PERIOD_US}")

    def add_pid(self, pid: int) -> None:
        write_control(self.directory / "cgroup.procs", str(pid))

    def pids(self) -> list[int]:
        return pids_in(self.directory / "cgroup.procs")

    def cpu_time_ms(self) -> float | None:
        usage_us = parse_keyed(self._cpu_stat.read()).get("usage_usec")
        return usage_us / 1000 if usage_us is not None else None

    def memory_peak_mb(self) -> float | None:
        text = read_control(self.directory / "memory.peak")  # kernel 5.19+
        return int(text) / (1024 * 1024) if text and text.strip().isdigit() else None

    def limits_hit(self) -> tuple[str, ...]:
        hit: list[str] = []
        memory = read_keyed(self.directory / "memory.events")
        if memory.get("oom_kill", 0) > 0:
            hit.append("memory")
        if memory.get("max", 0) > 0 or limit_reached(self.directory, "memory.peak", "memory.max"):
            hit.append("memory_full")
        if read_keyed(self.directory / "pids.events").get("max", 0) > 0:
            hit.append("processes")
        return tuple(hit)

    def freeze(self, frozen: bool) -> bool:
        try:
            write_control(self.directory / "cgroup.freeze", "1" if frozen else "0")
        except CgroupError:
            return False
        wanted = "frozen 1" if frozen else "frozen 0"
        deadline = time.monotonic() + FREEZE_TIMEOUT_S
        while wanted not in (read_control(self.directory / "cgroup.events") or wanted):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.0005)
        return True

    def set_idle(self, idle: bool) -> bool:
        return _set_idle(self.directory, idle, "cpu.weight", V2_WEIGHTS)

    def frozen_state(self) -> str | None:
        events = read_keyed(self.directory / "cgroup.events")
        if "frozen" not in events:
            return None
        return "FROZEN" if events["frozen"] else "THAWED"

    def kill_all(self) -> None:
        kill_file = self.directory / "cgroup.kill"  # kernel 5.14+
        deadline = time.monotonic() + KILL_TIMEOUT_S
        while True:
            if self.prefer_kill_file and kill_file.exists():
                write_control(kill_file, "1")
            else:
                write_control(self.directory / "cgroup.freeze", "1")
                _signal_all(self.pids())
                write_control(self.directory / "cgroup.freeze", "0")
            if not self.pids() or time.monotonic() > deadline:
                return
            time.sleep(0.002)

    def remove(self) -> bool:
        self._cpu_stat.close()
        removed = _remove_dir(self.directory)
        remove_parent_if_empty(self.directory.parent)
        return removed


V1_SHARES = ("1024", "2")
"""``cpu.shares``: a group's normal weight and the least the kernel takes (v1)."""
V2_WEIGHTS = ("100", "1")
"""``cpu.weight``: a group's normal weight and the least the kernel takes (v2)."""


def _set_idle(directory: Path, idle: bool, weight_file: str, weights: tuple[str, str]) -> bool:
    """``cpu.idle`` where the kernel has it (a group that yields to every non-idle one);
    else the weight: the least while idle, the normal one after (``weights``)."""
    if (directory / "cpu.idle").exists():
        control, value = directory / "cpu.idle", "1" if idle else "0"
    else:
        control, value = directory / weight_file, weights[1] if idle else weights[0]
    try:
        write_control(control, value)
    except CgroupError as exc:
        get_logger().warning("cgroup_idle_refused", error=str(exc))
        return False
    return True


DELEGATE_XATTRS = ("trusted.delegate", "user.delegate")
"""What systemd sets to ``1`` on a unit's group given ``Delegate=yes``."""
SERVICE_LEAF = "kahuna-arena-service"
"""Where the processes of a delegated group move, so that its children may have
controllers: v2 enables none for the children of a group that holds processes."""


def delegated_group(root: Path, own: str) -> Path | None:
    """The nearest group at or above ``own`` that was delegated to its processes
    (systemd's ``Delegate=yes``), or None: then the arena's groups go at ``root``."""
    path = root / own.strip("/")
    while path != root and root in path.parents:
        for attribute in DELEGATE_XATTRS:
            with contextlib.suppress(OSError):
                if os.getxattr(path, attribute) == b"1":
                    return path
        path = path.parent
    return None


_warned_outside: set[str] = set()


def v2_base(root: Path, proc_cgroup_text: str) -> Path:
    """The group whose ``kahuna-arena`` holds the bots: the delegated group the arena
    runs in, else the hierarchy's root. A systemd service without ``Delegate=yes``
    gets the root, where its bots are outside its unit: systemd's stop does not
    reach them, so that is said once in the log."""
    own = own_cgroup_paths(proc_cgroup_text).get("", "/")
    found = delegated_group(root, own)
    if found is not None:
        return found
    if own.endswith(".service") and own not in _warned_outside:
        _warned_outside.add(own)
        get_logger().warning(
            "cgroup_not_delegated",
            unit_group=own,
            bots_group=str(root / PARENT_NAME),
            fix="add Delegate=yes to the unit's [Service] section, so that the bots' "
            "groups are made inside the unit's and stopping the unit stops them",
        )
    return root


def _vacate(base: Path) -> None:
    """Move every process of the delegated group ``base`` into its leaf
    ``SERVICE_LEAF``, once per process that finds it holding any."""
    pids = pids_in(base / "cgroup.procs")
    if not pids:
        return
    leaf = base / SERVICE_LEAF
    try:
        leaf.mkdir(exist_ok=True)
    except OSError as exc:
        raise CgroupError(f"cannot create cgroup {leaf}: {exc}") from exc
    for pid in pids:
        try:
            write_control(leaf / "cgroup.procs", str(pid))
        except CgroupError:
            if Path(f"/proc/{pid}").exists():
                raise  # a process that ended meanwhile has nothing to move


def _enable_controllers(directory: Path, enable: str) -> None:
    """Enable controllers for the children of ``directory`` unless already on."""
    current = (read_control(directory / "cgroup.subtree_control") or "").split()
    if all(word.lstrip("+") in current for word in enable.split()):
        return
    write_control(directory / "cgroup.subtree_control", enable)


def _creator_alive(group_name: str) -> bool:
    """Groups are named ``<kind>-<creator pid>-...``; is that creator still running?"""
    parts = group_name.split("-")
    if len(parts) < 3 or not parts[1].isdigit():
        return True  # not ours to judge
    return Path(f"/proc/{parts[1]}").exists()


def sweep_stale(parents: list[Path], prefix: str = "") -> list[str]:
    """Kill and remove groups left by arena processes that died without cleaning up;
    with ``prefix``, only the groups whose names start with it (the parent holds
    groups that are not the arena's: ``V1_FLAT_CONTROLLERS``)."""
    swept: list[str] = []
    stale: list[Path] = []
    for parent in parents:
        try:
            # another arena process removes the parent once its last group is gone
            # (remove_parent_if_empty): gone between a look and a listing is nothing to sweep
            children = list(parent.iterdir())
        except (FileNotFoundError, NotADirectoryError):
            continue
        stale += [
            child
            for child in children
            if child.is_dir()
            and child.name.startswith(prefix)
            and not _creator_alive(child.name.removeprefix(prefix))
        ]
    for child in stale:  # every hierarchy first: v1 thaws in the freezer's, listed last
        _signal_all(pids_in(child / "cgroup.procs"))
        _thaw(child)
    for child in stale:
        if _remove_dir(child):
            swept.append(child.name)
    if swept:
        get_logger().info("stale_cgroups_removed", groups=sorted(set(swept)))
    return swept


def _thaw(group: Path) -> None:
    """Let a frozen group's tasks take the SIGKILL they were sent: a bot frozen (not to
    move) when its arena process was killed holds it, in D state, until thawed, and its
    group could never be removed (each launch on the host then waited 1 s per hierarchy)."""
    for control, thawed in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
        if (group / control).is_file():
            with contextlib.suppress(OSError):
                (group / control).write_text(thawed)


def groups_of_creator(
    creator_pid: int, *, root: Path = CGROUP_ROOT, proc_cgroup_text: str | None = None
) -> list[BotCgroup]:
    """Every bot group that the arena process ``creator_pid`` created and left behind."""
    prefix = f"bot-{creator_pid}-"
    version = detect_version(root)
    text = proc_cgroup_text if proc_cgroup_text is not None else read_proc_cgroup()
    if version == 2:
        parent = v2_base(root, text) / PARENT_NAME
        names = sorted(p.name for p in parent.glob(prefix + "*")) if parent.is_dir() else []
        return [CgroupV2(name, parent / name) for name in names]
    if version != 1:
        return []
    own = own_cgroup_paths(text)
    parents = {c: v1_parent(root, c, own) for c in V1_CONTROLLERS}
    names_found: set[str] = set()
    for controller, parent in parents.items():
        if parent.is_dir():
            flat = v1_group_name(controller, "")
            names_found.update(
                p.name.removeprefix(flat) for p in parent.glob(flat + prefix + "*")
            )
    return [
        CgroupV1(name, {c: v1_group(root, c, own, name) for c in V1_CONTROLLERS})
        for name in sorted(names_found)
    ]


def create_bot_cgroup(
    name: str,
    limits: SandboxLimits,
    *,
    root: Path = CGROUP_ROOT,
    proc_cgroup_text: str | None = None,
) -> BotCgroup:
    """Create and configure a bot's group in whichever hierarchy ``root`` holds."""
    version = detect_version(root)
    if version is None:
        raise CgroupError(f"no cgroup hierarchy (v1 or v2) mounted at {root}")
    text = proc_cgroup_text if proc_cgroup_text is not None else read_proc_cgroup()
    if version == 2:
        return CgroupV2.create(name, limits, root=root, proc_cgroup_text=text)
    return CgroupV1.create(name, limits, root=root, proc_cgroup_text=text)
