"""``netns_pids`` finds a namespace's processes as ``ip netns pids`` does, without ``ip``."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from arena.testing.ray_cluster import PREFIX, netns_pids
from arena.testing.waiting import wait_until

pytestmark = pytest.mark.slow  # it starts processes in a namespace it makes

if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("nsenter") is None:
    pytest.skip("network namespaces need root, ip and nsenter", allow_module_level=True)


def _ip_pids(name: str) -> list[int]:
    done = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True)
    return sorted(int(word) for word in done.stdout.split())


def test_the_processes_of_a_namespace_and_only_those() -> None:
    name = f"{PREFIX}{os.getpid()}-pids"
    subprocess.run(["ip", "netns", "add", name], check=True)
    sleepers: list[subprocess.Popen[bytes]] = []
    try:
        assert netns_pids(name) == [] == _ip_pids(name)
        sleepers = [
            subprocess.Popen(["nsenter", f"--net=/var/run/netns/{name}", "--", "sleep", "60"])
            for _ in range(2)
        ]
        outside = subprocess.Popen(["sleep", "60"])  # control: this machine's namespace
        sleepers.append(outside)
        inside = {p.pid for p in sleepers[:2]}
        wait_until(lambda: inside <= set(_ip_pids(name)), "both sleepers in the namespace", 10,
                   interval_s=0.01, state=lambda: _ip_pids(name))  # fmt: skip
        ip_found = _ip_pids(name)
        assert sorted(netns_pids(name)) == ip_found
        assert outside.pid not in ip_found and os.getpid() not in ip_found
    finally:
        for process in sleepers:
            process.kill()
            process.wait()
        subprocess.run(["ip", "netns", "delete", name], check=False)
    assert netns_pids(name) == []  # a namespace that is gone holds nothing
