"""`--ray`'s checks before joining a cluster (the processes: test_ray_nodes.py and
tests/tournament/test_ray_security.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.commands.rayflags import runs_a_ray_node


def _proc(root: Path, processes: dict[str, str]) -> Path:
    proc = root / "proc"
    proc.mkdir()
    (proc / "self").mkdir()  # not a process's number: not looked at
    (proc / "self" / "comm").write_text("raylet\n")
    for pid, comm in processes.items():
        (proc / pid).mkdir()
        if comm:
            (proc / pid / "comm").write_text(f"{comm}\n")
    return proc


@pytest.mark.parametrize(
    ("processes", "runs"),
    [
        ({"1": "systemd", "42": "python3"}, False),  # no raylet: Ray would wait, then fail
        ({"1": "systemd", "42": "raylet", "43": "gcs_server"}, True),
        ({"1": "systemd", "7": ""}, False),  # a process gone while listed
    ],
    ids=["none", "a raylet", "one gone"],
)
def test_a_ray_node_on_this_machine_is_found_by_its_raylet(
    tmp_path: Path, processes: dict[str, str], runs: bool
) -> None:
    assert runs_a_ray_node(_proc(tmp_path, processes)) is runs


def test_where_processes_cannot_be_listed_ray_decides(tmp_path: Path) -> None:
    assert runs_a_ray_node(tmp_path / "missing") is True
