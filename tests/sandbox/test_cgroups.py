"""cgroup file-writing logic against temporary directories laid out like v1 and v2.

(The real v1 hierarchy of this machine is exercised by the containment tests.)
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from arena.sandbox import SandboxLimits, cgroups
from arena.sandbox.cgroups import (
    FLAT_PREFIX,
    V1_CONTROLLERS,
    CgroupError,
    CgroupV1,
    CgroupV2,
    ControlReader,
    create_bot_cgroup,
    detect_version,
    groups_of_creator,
    limit_reached,
    make_child_group,
    own_cgroup_paths,
    read_proc_cgroup,
    remove_parent_if_empty,
    sweep_stale,
    v1_group,
    write_control,
)
from arena.testing.crowd import WatchedLock
from arena.testing.waiting import wait_until

LIMITS = SandboxLimits(memory_mb=64, max_processes=20, cpu_cores=0.5)


def fake_v2(root: Path, subtree_control: str = "") -> Path:
    root.mkdir(exist_ok=True)
    (root / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")
    (root / "cgroup.subtree_control").write_text(subtree_control)
    return root


def fake_v1(root: Path) -> Path:
    for controller in ("memory", "pids", "cpu", "cpuacct", "freezer", "blkio"):
        (root / controller).mkdir(parents=True)
    return root


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        pytest.param("v2", 2, id="unified"),
        pytest.param("v1", 1, id="per-controller"),
        pytest.param("hybrid", 1, id="v1-with-unified-subdir"),
        pytest.param("empty", None, id="nothing-mounted"),
        pytest.param("partial-v1", 1, id="v1-missing-a-controller"),
    ],
)
def test_detect_version(tmp_path: Path, layout: str, expected: int | None) -> None:
    if layout == "v2":
        fake_v2(tmp_path)
    elif layout == "partial-v1":
        (tmp_path / "memory").mkdir()
    elif layout in ("v1", "hybrid"):
        fake_v1(tmp_path)
        if layout == "hybrid":
            fake_v2(tmp_path / "unified")
    assert detect_version(tmp_path) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("0::/user.slice/s-1.scope\n", {"": "/user.slice/s-1.scope"}, id="v2"),
        pytest.param(
            "4:memory:/process_api/abc\n3:cpu,cpuacct:/\n1:name=systemd:/x\n0::/\n",
            {
                "memory": "/process_api/abc",
                "cpu": "/",
                "cpuacct": "/",
                "name=systemd": "/x",
                "": "/",
            },
            id="v1-comounted",
        ),
        pytest.param("garbage\n", {}, id="garbage"),
    ],
)
def test_own_cgroup_paths(text: str, expected: dict[str, str]) -> None:
    assert own_cgroup_paths(text) == expected


def test_v2_group_is_created_with_limits(tmp_path: Path) -> None:
    root = fake_v2(tmp_path)
    group = create_bot_cgroup("bot-1-1-aa", LIMITS, root=root)
    assert isinstance(group, CgroupV2)
    directory = root / "kahuna-arena" / "bot-1-1-aa"
    assert group.directory == directory
    assert (root / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (root / "kahuna-arena" / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (directory / "memory.max").read_text() == str(64 * 1024 * 1024)
    assert (directory / "memory.swap.max").read_text() == "0"
    assert (directory / "memory.oom.group").read_text() == "1"
    assert (directory / "pids.max").read_text() == "20"
    assert (directory / "cpu.max").read_text() == "50000 100000"
    group.add_pid(4321)
    assert (directory / "cgroup.procs").read_text() == "4321"


def test_v2_controllers_already_enabled_are_left_alone(tmp_path: Path) -> None:
    root = fake_v2(tmp_path, subtree_control="cpu memory pids io\n")
    create_bot_cgroup("bot-1-2-bb", LIMITS, root=root)
    assert (root / "cgroup.subtree_control").read_text() == "cpu memory pids io\n"


def test_v2_accounting_is_read(tmp_path: Path) -> None:
    group = create_bot_cgroup("bot-1-3-cc", LIMITS, root=fake_v2(tmp_path))
    assert isinstance(group, CgroupV2)
    assert group.cpu_time_ms() is None
    assert group.limits_hit() == ()
    (group.directory / "cpu.stat").write_text("usage_usec 2500\nuser_usec 2000\n")
    (group.directory / "memory.peak").write_text("3145728\n")
    (group.directory / "memory.events").write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\n")
    (group.directory / "pids.events").write_text("max 3\n")
    assert group.cpu_time_ms() == 2.5
    assert group.memory_peak_mb() == 3.0
    assert group.limits_hit() == ("memory", "memory_full", "processes")


class _HeldPread:
    """``os`` for the cgroups module, but ``pread`` (the descriptor taken) waits until
    ``go()`` says so."""

    def __init__(self, go: Callable[[], bool]) -> None:
        self.go = go
        self.inside = threading.Event()

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        self.inside.set()
        wait_until(self.go, "the close waiting or done", 10, interval_s=0.005)
        return os.pread(fd, size, offset)

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)


def test_a_control_read_while_its_reader_is_closed_gets_its_own_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The referee reads a bot's CPU time (the loop thread) while the bot is released
    (another thread closes its control files): the read gets the file's own text, not
    an error, nor another file's through its descriptor closed and reused meanwhile.

    The race, forced: the read, its descriptor taken, is held until the close waits for
    the reader or is done."""
    path = tmp_path / "cpu.stat"
    path.write_text("usage_usec 2500\n")
    reader = ControlReader(path)
    assert reader.read() == "usage_usec 2500\n"  # the descriptor kept open
    closer = threading.Thread(target=reader.close)
    closed = threading.Event()
    watched = WatchedLock(reader._lock)
    held = _HeldPread(lambda: watched.waits(closer) or closed.is_set())
    monkeypatch.setattr(reader, "_lock", watched)
    monkeypatch.setattr(cgroups, "os", held)
    read: list[str | None] = []
    reading = threading.Thread(target=lambda: read.append(reader.read()))
    reading.start()
    wait_until(held.inside.is_set, "the read at its descriptor", 10)
    closer.start()
    closer.join(10)
    closed.set()
    reading.join(10)
    assert read == ["usage_usec 2500\n"]


@pytest.mark.parametrize(
    "has_kill_file",
    [pytest.param(True, id="cgroup.kill"), pytest.param(False, id="freeze-fallback")],
)
def test_v2_kill_uses_cgroup_kill_or_freezes(tmp_path: Path, has_kill_file: bool) -> None:
    group = create_bot_cgroup("bot-1-4-dd", LIMITS, root=fake_v2(tmp_path))
    assert isinstance(group, CgroupV2)
    (group.directory / "cgroup.procs").write_text("")
    if has_kill_file:
        (group.directory / "cgroup.kill").write_text("")
    group.kill_all()
    if has_kill_file:
        assert (group.directory / "cgroup.kill").read_text() == "1"
        assert not (group.directory / "cgroup.freeze").exists()
    else:
        assert (group.directory / "cgroup.freeze").read_text() == "0"


def test_v1_group_nests_under_the_callers_own_group(tmp_path: Path) -> None:
    root = fake_v1(tmp_path)
    (root / "memory" / "process_api" / "abc").mkdir(parents=True)
    text = "4:memory:/process_api/abc\n8:pids:/\n2:cpuacct:/\n1:cpu:/\n6:freezer:/gone\n"
    group = create_bot_cgroup("bot-1-5-ee", LIMITS, root=root, proc_cgroup_text=text)
    assert isinstance(group, CgroupV1)
    assert group.dirs["memory"] == root / "memory/process_api/abc/kahuna-arena/bot-1-5-ee"
    assert group.dirs["freezer"] == root / "freezer/kahuna-arena/bot-1-5-ee"  # own path absent
    # cpu and cpuacct: beside the arena's other groups, no shared parent
    assert group.dirs["cpu"] == root / "cpu/kahuna-arena-bot-1-5-ee"
    assert group.dirs["cpuacct"] == root / "cpuacct/kahuna-arena-bot-1-5-ee"
    assert not (root / "cpu" / "kahuna-arena").exists()
    assert (group.dirs["memory"] / "memory.limit_in_bytes").read_text() == str(64 * 1024 * 1024)
    assert not (group.dirs["memory"] / "memory.memsw.limit_in_bytes").exists()
    assert (group.dirs["pids"] / "pids.max").read_text() == "20"
    assert (group.dirs["cpu"] / "cpu.cfs_period_us").read_text() == "100000"
    assert (group.dirs["cpu"] / "cpu.cfs_quota_us").read_text() == "50000"
    (group.dirs["cpuacct"] / "cpuacct.usage").write_text("12500000\n")
    (group.dirs["memory"] / "memory.oom_control").write_text("oom_kill_disable 0\noom_kill 2\n")
    assert group.cpu_time_ms() == 12.5
    assert group.limits_hit() == ("memory",)


@pytest.mark.parametrize(("peak", "limit", "reached"), [
    ("0", "67108864", False),
    ("65011712", "67108864", False),  # 2 MiB short: below it
    ("66322432", "67108864", True),  # 768 KiB short: charged in batches, at it
    ("67108864", "67108864", True),
    ("", "67108864", False),  # unreadable: nothing is claimed
    ("67108864", "max", False),  # v2 without a limit
])  # fmt: skip
def test_a_peak_at_the_memory_limit_counts_as_the_limit_reached(
    tmp_path: Path, peak: str, limit: str, reached: bool
) -> None:
    (tmp_path / "peak").write_text(peak + "\n")
    (tmp_path / "limit").write_text(limit + "\n")
    assert limit_reached(tmp_path, "peak", "limit") is reached


def test_v1_memory_reached_without_an_oom_kill_is_memory_full(tmp_path: Path) -> None:
    root = fake_v1(tmp_path)
    text = "4:memory:/\n8:pids:/\n2:cpuacct:/\n1:cpu:/\n6:freezer:/\n"
    group = create_bot_cgroup("bot-1-6-ff", SandboxLimits(memory_mb=64), root=root,
                              proc_cgroup_text=text)  # fmt: skip
    assert isinstance(group, CgroupV1)
    (group.dirs["memory"] / "memory.max_usage_in_bytes").write_text(f"{64 * 1024 * 1024}\n")
    (group.dirs["memory"] / "memory.oom_control").write_text("oom_kill_disable 0\noom_kill 0\n")
    assert group.limits_hit() == ("memory_full",)


def test_unwritable_hierarchy_is_named(tmp_path: Path) -> None:
    root = fake_v2(tmp_path)
    (root / "kahuna-arena").write_text("a file where the parent group should be")
    with pytest.raises(CgroupError, match="kahuna-arena"):
        create_bot_cgroup("bot-1-6-ff", LIMITS, root=root)


def test_no_hierarchy_is_named(tmp_path: Path) -> None:
    with pytest.raises(CgroupError, match="no cgroup hierarchy"):
        create_bot_cgroup("bot-1-7-gg", LIMITS, root=tmp_path)


def test_stale_groups_of_dead_creators_are_swept(tmp_path: Path) -> None:
    parent = tmp_path / "kahuna-arena"
    for name in ("bot-999999999-1-aa", f"bot-{os.getpid()}-1-bb", "unrelated", "probe-999999999-x"):
        (parent / name).mkdir(parents=True)
    swept = sweep_stale([parent])
    assert sorted(swept) == ["bot-999999999-1-aa", "probe-999999999-x"]
    assert sorted(p.name for p in parent.iterdir()) == [f"bot-{os.getpid()}-1-bb", "unrelated"]


class _RemovedOnFirstTouch(type(Path())):  # type: ignore[misc]
    """A ``kahuna-arena`` parent that another worker removes (remove_parent_if_empty) at
    the sweep's first touch: right after a look (``is_dir``, ``exists``, ``stat``)
    answers, or right before a listing. The interleaving is forced, not hoped for."""

    removed = False

    def _remove_once(self) -> None:
        if self.name == "kahuna-arena" and not _RemovedOnFirstTouch.removed:
            _RemovedOnFirstTouch.removed = True
            remove_parent_if_empty(Path(self))

    def is_dir(self) -> bool:
        answer = bool(super().is_dir())
        self._remove_once()
        return answer

    def exists(self) -> bool:
        answer = bool(super().exists())
        self._remove_once()
        return answer

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        answer: os.stat_result = super().stat(follow_symlinks=follow_symlinks)
        self._remove_once()
        return answer

    def iterdir(self) -> Iterator[Path]:
        self._remove_once()
        return super().iterdir()  # type: ignore[no-any-return]


def test_sweeping_while_another_process_removes_the_parent_is_no_error(tmp_path: Path) -> None:
    """Concurrent workers: one removes the empty parent as its last bot ends
    (remove_parent_if_empty) while another sweeps it before making its own group.
    Many fast-failing matches (a full disk) made this race common: the sweep raised
    FileNotFoundError naming /sys/fs/cgroup/cpu/kahuna-arena and failed the match."""
    parent = _RemovedOnFirstTouch(tmp_path / "kahuna-arena")
    parent.mkdir()
    _RemovedOnFirstTouch.removed = False
    assert sweep_stale([parent]) == []
    assert _RemovedOnFirstTouch.removed and not os.path.exists(parent)  # the race did happen


def test_empty_parent_is_removed_and_a_busy_one_kept(tmp_path: Path) -> None:
    empty = tmp_path / "a" / "kahuna-arena"
    busy = tmp_path / "b" / "kahuna-arena"
    foreign = tmp_path / "c" / "someone-elses"
    for directory in (empty, busy / "bot-1-1-aa", foreign):
        directory.mkdir(parents=True)
    for parent in (empty, busy, foreign):
        remove_parent_if_empty(parent)
    assert (empty.exists(), busy.exists(), foreign.exists()) == (False, True, True)


@pytest.mark.parametrize("version", [1, 2])
def test_groups_of_a_creator_are_found_in_either_hierarchy(tmp_path: Path, version: int) -> None:
    root = fake_v1(tmp_path) if version == 1 else fake_v2(tmp_path)
    text = "4:memory:/\n8:pids:/\n1:cpu:/\n2:cpuacct:/\n6:freezer:/\n"
    me, parent = os.getpid(), os.getppid()  # live creators: nothing is swept as stale
    for name in (f"bot-{me}-1-aa", f"bot-{me}-2-bb", f"bot-{parent}-1-cc"):
        create_bot_cgroup(name, LIMITS, root=root, proc_cgroup_text=text)
    found = groups_of_creator(me, root=root, proc_cgroup_text=text)
    assert [group.name for group in found] == [f"bot-{me}-1-aa", f"bot-{me}-2-bb"]
    expected_type = CgroupV1 if version == 1 else CgroupV2
    assert all(isinstance(group, expected_type) for group in found)


def test_missing_v1_controllers_are_named(tmp_path: Path) -> None:
    for controller in ("memory", "pids", "cpu"):
        (tmp_path / controller).mkdir()
    with pytest.raises(CgroupError, match=r"v1 controllers not mounted .*: cpuacct, freezer"):
        create_bot_cgroup("bot-1-8-hh", LIMITS, root=tmp_path, proc_cgroup_text="")


def test_missing_v2_controllers_are_named(tmp_path: Path) -> None:
    root = fake_v2(tmp_path)
    (root / "cgroup.controllers").write_text("cpuset io memory\n")
    with pytest.raises(CgroupError, match=r"v2 controllers not available .*: pids, cpu"):
        create_bot_cgroup("bot-1-9-ii", LIMITS, root=root)


REAL_ROOT = Path("/sys/fs/cgroup")


@pytest.mark.skipif(
    detect_version(REAL_ROOT) != 1 or os.geteuid() != 0, reason="needs root on a cgroup v1 host"
)
def test_a_real_group_whose_limits_the_kernel_refuses_is_removed_again() -> None:
    class Refused(CgroupV1):
        def _apply(self, limits: SandboxLimits) -> None:
            write_control(self.dirs["pids"] / "pids.max", "plenty")  # the kernel: EINVAL

    name = f"bot-{os.getpid()}-refused-{secrets.token_hex(3)}"
    text = read_proc_cgroup()
    with pytest.raises(CgroupError, match=r"pids\.max"):
        Refused.create(name, LIMITS, root=REAL_ROOT, proc_cgroup_text=text)
    own = own_cgroup_paths(text)
    for controller in V1_CONTROLLERS:
        assert not v1_group(REAL_ROOT, controller, own, name).exists()


class _VanishingParent(type(Path())):  # type: ignore[misc]
    """A parent that another arena process removes between mkdir's EEXIST and its
    is_dir() look, the first ``races`` times (what pathlib then raises: FileExistsError)."""

    races = 0

    def mkdir(self, mode: int = 0o777, parents: bool = False, exist_ok: bool = False) -> None:
        if exist_ok and self.name == "kahuna-arena" and _VanishingParent.races > 0:
            _VanishingParent.races -= 1
            raise FileExistsError(17, "File exists", str(self))
        super().mkdir(mode, parents, exist_ok)


@pytest.mark.parametrize(("races", "created"), [(0, True), (2, True), (5, False)])
def test_a_parent_removed_while_being_made_is_retried(
    tmp_path: Path, races: int, created: bool
) -> None:
    parent = _VanishingParent(tmp_path / "kahuna-arena")
    parent.mkdir()
    _VanishingParent.races = races
    if created:
        assert make_child_group(parent, "bot-1-1-aa").is_dir()
    else:  # every attempt lost the race: a clear error, not a loop
        with pytest.raises(CgroupError, match="cannot create cgroup"):
            make_child_group(parent, "bot-1-1-aa")


@pytest.mark.slow
@pytest.mark.skipif(
    detect_version(REAL_ROOT) != 1 or os.geteuid() != 0, reason="needs root on a cgroup v1 host"
)
def test_a_stale_frozen_group_is_thawed_killed_and_removed_by_the_sweep() -> None:
    """A bot frozen (not to move) when its arena process was SIGKILLed: the sweep's SIGKILL
    stays pending until the group is thawed. A group left frozen is never removed, and
    every launch on the host waits 1 s per hierarchy trying (two such groups make each
    launch take about 10 s)."""
    creator = subprocess.Popen(["sleep", "300"])  # alive: no other arena sweeps it yet
    name = f"bot-{creator.pid}-frozen-{secrets.token_hex(3)}"
    group = create_bot_cgroup(name, LIMITS, root=REAL_ROOT)
    assert isinstance(group, CgroupV1)
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        group.add_pid(sleeper.pid)
        assert group.freeze(True)
        creator.kill()
        creator.wait()  # the arena process is gone, its frozen bot left behind
        dirs = group.dirs.values()
        nested = [d.parent for d in dirs if not d.name.startswith(FLAT_PREFIX)]
        flat = [d.parent for d in dirs if d.name.startswith(FLAT_PREFIX)]
        started = time.monotonic()
        sweep_stale(nested)  # as CgroupV1.create does (another arena process may too)
        sweep_stale(flat, FLAT_PREFIX)
        assert sleeper.wait(timeout=5) == -signal.SIGKILL
        assert time.monotonic() - started < 3
        assert not any(directory.exists() for directory in group.dirs.values())
    finally:  # thawed first: a frozen process cannot be waited for
        group.freeze(False)
        for process in (creator, sleeper):
            process.kill()
            process.wait()
        group.remove()


def test_v1_flat_groups_are_swept_by_prefix_and_found_by_creator(tmp_path: Path) -> None:
    """In cpu and cpuacct a bot's group sits among groups that are not the arena's: a
    sweep judges only ``kahuna-arena-*`` ones (a stranger's ``app-1-x`` whose pid 1
    pattern looks like a creator's is left alone), and the watchdog finds the
    flat and nested directories of one group together."""
    root = fake_v1(tmp_path)
    text = "4:memory:/\n8:pids:/\n2:cpuacct:/\n1:cpu:/\n6:freezer:/\n"
    dead = 2**22 + 7  # above pid_max's default: no such process
    stale = f"bot-{dead}-1-aa"
    for controller in V1_CONTROLLERS:
        flat = controller in ("cpu", "cpuacct")
        parent = root / controller if flat else root / controller / "kahuna-arena"
        (parent / (f"kahuna-arena-{stale}" if flat else stale)).mkdir(parents=True)
    stranger = root / "cpu" / f"app-{dead}-x"
    stranger.mkdir()
    found = groups_of_creator(dead, root=root, proc_cgroup_text=text)
    assert [group.name for group in found] == [stale]
    assert isinstance(found[0], CgroupV1)
    assert found[0].dirs["cpu"] == root / "cpu" / f"kahuna-arena-{stale}"
    assert found[0].dirs["memory"] == root / "memory" / "kahuna-arena" / stale
    create_bot_cgroup(f"bot-{os.getpid()}-2-bb", LIMITS, root=root, proc_cgroup_text=text)
    assert not (root / "cpu" / f"kahuna-arena-{stale}").exists()  # swept
    assert not (root / "memory" / "kahuna-arena" / stale).exists()
    assert stranger.is_dir()  # not the arena's


@pytest.mark.parametrize(
    ("version", "has_idle", "control", "idle", "normal"),
    [
        (1, True, "cpu.idle", "1", "0"),
        (1, False, "cpu.shares", "2", "1024"),  # a kernel before 5.15: the least weight
        (2, True, "cpu.idle", "1", "0"),
        (2, False, "cpu.weight", "1", "100"),
    ],
)
def test_a_group_is_put_in_the_idle_class_and_back(
    tmp_path: Path, version: int, has_idle: bool, control: str, idle: str, normal: str
) -> None:
    if version == 1:
        group: CgroupV1 | CgroupV2 = CgroupV1.create(
            "bot-1-9-ii", LIMITS, root=fake_v1(tmp_path), proc_cgroup_text="1:cpu:/\n"
        )
        directory = group.dirs["cpu"]
    else:
        group = CgroupV2.create("bot-1-9-ii", LIMITS, root=fake_v2(tmp_path))
        directory = group.directory
    if has_idle:
        (directory / "cpu.idle").write_text("0\n")  # the kernel's file, present where it has it
    assert group.set_idle(True)
    assert (directory / control).read_text() == idle
    assert group.set_idle(False)
    assert (directory / control).read_text() == normal


def test_an_idle_class_the_kernel_refuses_is_reported_not_raised(tmp_path: Path) -> None:
    group = CgroupV2.create("bot-1-9-jj", LIMITS, root=fake_v2(tmp_path))
    (group.directory / "cpu.idle").mkdir()  # unwritable as a file
    assert not group.set_idle(True)


UNIT = "/system.slice/kahuna-arena.service"


def fake_unit_group(root: Path, *, delegated: str | None, procs: str = "") -> Path:
    """A service's group under ``root``, delegated by systemd when ``delegated`` names
    the xattr it set."""
    base = root / UNIT.strip("/")
    base.mkdir(parents=True)
    (base / "cgroup.controllers").write_text("cpu io memory pids\n")
    (base / "cgroup.subtree_control").write_text("")
    (base / "cgroup.procs").write_text(procs)
    if delegated is not None:
        os.setxattr(base, delegated, b"1")
    return base


@pytest.mark.parametrize("attribute", ["trusted.delegate", "user.delegate"])
def test_v2_groups_are_made_inside_the_group_delegated_to_the_arena(
    tmp_path: Path, attribute: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = fake_v2(tmp_path)
    base = fake_unit_group(root, delegated=attribute, procs="4100\n4101\n")
    writes: list[tuple[str, str]] = []
    real_write = cgroups.write_control

    def recording(path: Path, value: str) -> None:
        writes.append((str(path.relative_to(root)), value))
        real_write(path, value)

    monkeypatch.setattr(cgroups, "write_control", recording)
    text = f"0::{UNIT}\n"
    group = create_bot_cgroup("bot-1-20-aa", LIMITS, root=root, proc_cgroup_text=text)
    assert isinstance(group, CgroupV2)
    assert group.directory == base / "kahuna-arena" / "bot-1-20-aa"
    leaf = f"{UNIT.strip('/')}/kahuna-arena-service/cgroup.procs"
    assert [w for w in writes if w[0] == leaf] == [(leaf, "4100"), (leaf, "4101")]
    assert (base / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (root / "cgroup.subtree_control").read_text() == ""  # the root is systemd's
    assert not (root / "kahuna-arena").exists()
    inside = f"0::{UNIT}/kahuna-arena-service\n"  # a later process, moved with the rest
    assert [g.name for g in cgroups.groups_of_creator(1, root=root, proc_cgroup_text=inside)] == [
        "bot-1-20-aa"
    ]


@pytest.mark.parametrize(
    ("own", "value", "warned"),
    [
        pytest.param(UNIT, b"0", True, id="a-unit-not-delegated"),
        pytest.param("/user.slice/user-0.slice/session-3.scope", b"0", False, id="a-shell"),
    ],
)
def test_v2_groups_go_to_the_root_when_nothing_is_delegated(
    tmp_path: Path, own: str, value: bytes, warned: bool
) -> None:
    root = fake_v2(tmp_path)
    base = root / own.strip("/")
    base.mkdir(parents=True)
    os.setxattr(base, "trusted.delegate", value)
    cgroups._warned_outside.discard(own)
    with capture_logs() as logs:
        for n in range(2):
            group = create_bot_cgroup(
                f"bot-1-2{n}-bb", LIMITS, root=root, proc_cgroup_text=f"0::{own}\n"
            )
            assert isinstance(group, CgroupV2)
            assert group.directory == root / "kahuna-arena" / f"bot-1-2{n}-bb"
    said = [entry for entry in logs if entry["event"] == "cgroup_not_delegated"]
    assert len(said) == (1 if warned else 0)  # once per process, not per bot
    if warned:
        assert "Delegate=yes" in said[0]["fix"]
        assert said[0]["unit_group"] == own
