"""The v2 kill, accounting and removal code against the kernel's real cgroup2.

This machine's controllers live in v1, but a cgroup2 hierarchy is mounted
beside them (``/sys/fs/cgroup/unified``, no controllers). Membership,
``cgroup.kill``, ``cgroup.freeze``, ``cpu.stat`` and rmdir work there without
controllers, so the v2 paths that do not set limits run for real.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.sandbox import cgroups
from arena.sandbox.cgroups import CgroupV2
from arena.sandbox.process import wait_gone
from arena.testing.waiting import wait_until

UNIFIED = Path("/sys/fs/cgroup/unified")


def writable_unified() -> bool:
    return (UNIFIED / "cgroup.controllers").is_file() and os.access(UNIFIED, os.W_OK)


pytestmark = pytest.mark.skipif(not writable_unified(), reason="no writable cgroup2 mount")


@pytest.fixture
def group_dir() -> Iterator[Path]:
    parent = UNIFIED / f"kahuna-arena-test-{os.getpid()}-{secrets.token_hex(3)}"
    parent.mkdir()
    directory = parent / f"bot-{os.getpid()}-1-{secrets.token_hex(3)}"
    directory.mkdir()
    yield directory
    for path in (directory, parent):
        if path.exists():
            with contextlib.suppress(OSError):
                path.rmdir()


TREE = "read go; setsid sh -c 'while :; do :; done' & sh -c 'sleep 300; :' & sleep 300"


@pytest.mark.slow
@pytest.mark.parametrize("prefer_kill_file", [pytest.param(True, id="cgroup.kill"),
                                              pytest.param(False, id="freeze-and-signal")])
def test_v2_kill_empties_and_removes_a_real_group(group_dir: Path, prefer_kill_file: bool) -> None:
    group = CgroupV2(group_dir.name, group_dir, prefer_kill_file=prefer_kill_file)
    shell = subprocess.Popen(["/bin/sh", "-c", TREE], stdin=subprocess.PIPE)
    try:
        group.add_pid(shell.pid)  # before it forks: the whole tree is born inside
        assert shell.stdin is not None
        shell.stdin.write(b"go\n")
        shell.stdin.close()
        members = wait_until(lambda: len(group.pids()) >= 4 and group.pids(),
                             "the whole tree in the group", 10, state=group.pids)  # fmt: skip
        assert shell.pid in members
        # the busy daemon, from cpu.stat
        wait_until(group.cpu_time_ms, "CPU time of the group", 10, state=group.cpu_time_ms)
        group.kill_all()
        assert group.pids() == []
        shell.wait(5)
        assert wait_gone(members)
        assert group.remove()
        assert not group_dir.exists()
    finally:
        shell.kill()
        shell.wait(5)


def own_v2_path(pid: int) -> str:
    lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    return next(line.split(":", 2)[2] for line in lines if line.startswith("0::"))


@pytest.mark.slow
def test_a_delegated_groups_processes_move_to_its_leaf_and_the_bots_go_beside_them() -> None:
    base = UNIFIED / f"kahuna-arena-test-unit-{os.getpid()}-{secrets.token_hex(3)}"
    base.mkdir()
    os.setxattr(base, "trusted.delegate", b"1")
    served = subprocess.Popen(["sleep", "300"])  # stands for the service's processes
    try:
        (base / "cgroup.procs").write_text(str(served.pid))
        inside = own_v2_path(served.pid)
        assert cgroups.v2_base(UNIFIED, f"0::{inside}\n") == base
        cgroups._vacate(base)
        assert own_v2_path(served.pid) == f"{inside}/{cgroups.SERVICE_LEAF}"
        assert cgroups.pids_in(base / "cgroup.procs") == []
        # from the leaf, a later process of the service finds the same base
        assert cgroups.v2_base(UNIFIED, f"0::{own_v2_path(served.pid)}\n") == base
        bot = cgroups.make_child_group(base / cgroups.PARENT_NAME, "bot-1-1-aa")
        assert bot.parent.parent == base
    finally:
        served.kill()
        served.wait(5)
        for path in (base / cgroups.PARENT_NAME / "bot-1-1-aa", base / cgroups.PARENT_NAME,
                     base / cgroups.SERVICE_LEAF, base):  # fmt: skip
            with contextlib.suppress(OSError):
                path.rmdir()
