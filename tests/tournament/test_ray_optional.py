"""Ray is an optional extra: without --ray nothing imports it; with --ray and no Ray, one line."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from .test_runner import _data_dir_with_bots

pytestmark = pytest.mark.slow  # every test here starts a process or a server

REPO = Path(__file__).resolve().parents[2]

_PLAY_AND_CHECK = """
import sys
from arena.cli import main
status = main(["tournament", "run", "rr", "r1", "r2", "--games", "2", "--no-progress",
               "--concurrency", "1", "--data-dir", sys.argv[1]])
assert status == 0, status
{control}
print("ray imported" if "ray" in sys.modules else "ray not imported")
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("control", "expected"),
    [("", "ray not imported"), ("import arena.tournament.execution.ray_executor", "ray imported")],
    ids=["local-tournament", "control-importing-the-executor"],
)
def test_a_local_tournament_never_imports_ray(tmp_path: Path, control: str, expected: str) -> None:
    data = _data_dir_with_bots(tmp_path, {"r1": "random", "r2": "random"})
    code = _PLAY_AND_CHECK.format(control=control)
    if control:
        pytest.importorskip("ray")
    done = subprocess.run(
        [sys.executable, "-c", code, str(data)], capture_output=True, text=True, timeout=180,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "KAHUNA_RAY_ADDRESS": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == expected


def _token(directory: Path) -> dict[str, str]:
    """The environment of a process that holds a cluster's token (in ``directory``)."""
    token = directory / "ray_token"
    if not token.exists():
        token.write_text("ab" * 32)
        token.chmod(0o600)
    return {"RAY_AUTH_TOKEN_PATH": str(token)}


def test_ray_flag_without_ray_says_so_in_one_line(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "ray.py").write_text("raise ImportError('No module named ray (test shadow)')\n")
    done = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "run", "rr", "r1", "r2", "--ray",
         "10.231.255.1:6379", "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{shadow}:{REPO}", **_token(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'kahuna-arena[ray]'" in lines[0], done.stderr
    assert not (tmp_path / "data" / "arena.db").exists() or "rr" not in _tournaments(tmp_path)


@pytest.mark.parametrize("cpus", ["0", "nan", "inf"])  # nan and inf are no count of CPUs
def test_ray_match_cpus_must_be_positive(tmp_path: Path, cpus: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "run", "rr", "r1", "r2",
         "--ray-match-cpus", cpus, "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert done.returncode == 2  # a bad flag value, refused before anything is stored
    expected = f"arena: --ray-match-cpus must be more than 0 and finite, got {cpus}"
    assert done.stderr.strip() == expected


def _tournaments(tmp_path: Path) -> list[str]:
    import sqlite3

    db = sqlite3.connect(tmp_path / "data" / "arena.db")
    return [row[0] for row in db.execute("SELECT name FROM tournaments")]


def test_ray_worker_advertises_the_sandbox_resource_once_the_check_passes(tmp_path: Path) -> None:
    from arena.sandbox.probe import probe_host

    if not probe_host().complete:
        pytest.skip("this host cannot sandbox: ray-worker refuses (tested below)")
    done = subprocess.run(
        [sys.executable, "-m", "arena", "ray-worker", "10.231.255.1:6379", "--dry-run",
         "--slots", "3", "--num-cpus", "4", "--ray-start-args=--block"],
        capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO), "KAHUNA_RAY_CACHE": str(tmp_path / "cache"),
        **_token(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip().splitlines()[-1]
    assert line.endswith(
        ' start --address=10.231.255.1:6379 --resources={"kahuna_sandbox": 3}'
        " --include-log-monitor=false --num-cpus=4"
        f" --temp-dir={tempfile.gettempdir()}/kahuna-ray-{os.getuid()}/ray --block"
    ), line


HEAD = "10.231.255.1:6379"
BAD_WORKER_FLAGS = [
    # (case, address, flags, the one line). Each is refused in one line, never a traceback
    # from shlex or from `ray start`, nor a node advertising -3 slots.
    ("no slots", HEAD, ["--slots", "0"], "--slots must be at least 1, got 0"),
    ("negative CPUs", HEAD, ["--num-cpus", "-3"], "--num-cpus must be at least 1, got -3"),
    ("no port", "bad:addr", [],
     "ADDRESS 'bad:addr': give the Ray head's HOST:PORT, e.g. 10.0.0.1:6379"),
    ("no host", ":6379", [], "ADDRESS ':6379': give the Ray head's HOST:PORT, e.g. 10.0.0.1:6379"),
    ("port past 65535", "h:70000", [],
     "ADDRESS 'h:70000': give the Ray head's HOST:PORT, e.g. 10.0.0.1:6379"),
    ("unbalanced quote", HEAD, ["--ray-start-args", '"--block'],
     "--ray-start-args '\"--block': No closing quotation"),
]  # fmt: skip


@pytest.mark.parametrize(("address", "flags", "message"), [c[1:] for c in BAD_WORKER_FLAGS],
                         ids=[c[0] for c in BAD_WORKER_FLAGS])  # fmt: skip
def test_ray_worker_refuses_bad_flags(address: str, flags: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "ray-worker", address, "--dry-run", *flags],
        capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert (done.returncode, done.stderr.strip()) == (2, f"arena: {message}")  # a usage error


@pytest.mark.parametrize(
    "command", [["serve", "--port", "0"], ["tournament", "run", "rr", "r1", "r2"]]
)
def test_every_ray_flag_without_ray_says_so_before_serving_or_playing(
    tmp_path: Path, command: list[str]
) -> None:
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "ray.py").write_text("raise ImportError('No module named ray (test shadow)')\n")
    done = subprocess.run(
        [sys.executable, "-m", "arena", *command, "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{shadow}:{REPO}",
             "KAHUNA_RAY_ADDRESS": "10.231.255.1:6379", **_token(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(
        "arena: --ray needs Ray: pip install 'kahuna-arena[ray]'"
    ), done.stderr
