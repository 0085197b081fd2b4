"""The watchdog's clean-up of what a dead arena process left: its match work directories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.sandbox import watchdog

DEAD = 4_000_001  # no process has this pid (above the kernel's pid_max limit)


@pytest.fixture
def tmp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(watchdog, "work_root", lambda: str(tmp_path))
    monkeypatch.setattr(watchdog, "groups_of_creator", lambda pid: [])
    return tmp_path


@pytest.mark.parametrize(
    ("name", "removed"),
    [
        (f"kahuna-{DEAD}-abc123", True),  # a match the dead worker was playing
        (f"kahuna-{DEAD}1-abc123", False),  # another process's (pid 40000011)
        ("kahuna-7-abc123", False),  # another process's
        (f"kahuna-{DEAD}-check-abc123", True),  # a check it was running
        ("kahuna-check-abc123", False),  # named after no process
    ],
)
def test_clean_up_after_removes_the_dead_process_work_directories(
    tmp_root: Path, name: str, removed: bool
) -> None:
    work = tmp_root / name
    work.mkdir()
    (work / "b0.sock").write_text("")
    (work / "bot0-1.stderr").write_text("traceback\n")
    names = watchdog.clean_up_after(DEAD)
    assert work.exists() is not removed
    assert (name in names) is removed


def test_clean_up_after_leaves_a_link_and_its_target(tmp_root: Path) -> None:
    target = tmp_root / "kept"
    target.mkdir()
    (tmp_root / f"kahuna-{DEAD}-link").symlink_to(target)
    watchdog.clean_up_after(DEAD)
    assert target.is_dir()


def test_a_work_directory_is_named_after_its_process() -> None:
    """What the runner's SIGKILL of a worker, or a check's, leaves is found by its pid."""
    assert watchdog.work_prefix(123) == "kahuna-123-"
    for kind in ("", "check-", "train-"):
        with watchdog.work_directory(kind) as work:
            assert Path(work).parent == Path(watchdog.work_root())
            assert Path(work).name.startswith(f"kahuna-{os.getpid()}-{kind}")
