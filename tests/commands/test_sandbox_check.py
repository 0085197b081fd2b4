"""`arena sandbox-check` as a real process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # every test here starts a process or a server


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )


def test_sandbox_check_reports_every_layer() -> None:
    done = arena("sandbox-check")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines[:3]] == ["namespaces", "cgroups", "seccomp"]
    assert lines[0].split()[1] == "yes" and lines[2].split()[1] == "yes"
    assert lines[1].split()[1] in ("v1", "v2")
    assert lines[-1] == "the sandbox is complete: untrusted bots can run"


def test_sandbox_check_json() -> None:
    done = arena("sandbox-check", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["namespaces"] is True and report["seccomp"] is True
    assert report["cgroup_version"] in (1, 2) and report["missing"] == []
