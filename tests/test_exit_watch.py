"""tests.exit_watch: a run that hangs on its way out fails naming the thread that holds it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import exit_watch

ROOT = Path(__file__).resolve().parent.parent

HANGS = """
import threading

def held_for_ever(event):
    event.wait()

def test_leaves_a_thread_behind():
    threading.Thread(target=held_for_ever, args=(threading.Event(),)).start()
"""

ENDS = """
def test_nothing_left_behind():
    pass
"""

IDLE_LIMIT_S = 10
"""The limit while one worker waits idle for the other: what an exit takes on a loaded
machine (an xdist worker's interpreter shutting down) fits in it many times over."""

ONE_LONG_TEST = f"""
import time

def test_quick():
    pass

def test_long():
    time.sleep({IDLE_LIMIT_S + 2})  # longer than the limit: the other worker waits, idle
"""


@pytest.mark.parametrize(
    ("value", "limit"),
    [
        (None, exit_watch.EXIT_LIMIT_S),
        ("", exit_watch.EXIT_LIMIT_S),
        ("2.5", 2.5),
        ("0", exit_watch.EXIT_LIMIT_S),
        ("-3", exit_watch.EXIT_LIMIT_S),
        ("soon", exit_watch.EXIT_LIMIT_S),
    ],
)
def test_the_limit_is_the_variables_positive_number_or_the_default(
    monkeypatch: pytest.MonkeyPatch, value: str | None, limit: float
) -> None:
    if value is None:
        monkeypatch.delenv(exit_watch.LIMIT_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(exit_watch.LIMIT_VARIABLE, value)
    assert exit_watch.exit_limit_s() == limit


def _run(
    tmp_path: Path, source: str, limit_s: str, *flags: str
) -> subprocess.CompletedProcess[str]:
    test_file = tmp_path / "test_subject.py"
    test_file.write_text(source)
    path = f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    environment = {**os.environ, exit_watch.LIMIT_VARIABLE: limit_s, "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.exit_watch", "-p", "no:cacheprovider",
         "-q", *flags, str(test_file)],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=240,
    )  # fmt: skip


@pytest.mark.slow
def test_a_run_held_open_by_a_thread_fails_with_that_threads_stack(tmp_path: Path) -> None:
    run = _run(tmp_path, HANGS, "2")
    assert "1 passed" in run.stdout
    assert run.returncode == 1
    assert "Timeout (0:00:02)!" in run.stderr
    assert "in held_for_ever" in run.stderr


@pytest.mark.slow
def test_a_run_that_exits_is_untouched(tmp_path: Path) -> None:
    run = _run(tmp_path, ENDS, "30")  # a loaded machine's exit may take seconds
    assert run.returncode == 0, run.stderr
    assert "Timeout" not in run.stderr


@pytest.mark.slow
def test_a_worker_idle_while_another_runs_a_long_test_is_untouched(tmp_path: Path) -> None:
    """An xdist worker whose share is done lives on until the whole run ends."""
    run = _run(tmp_path, ONE_LONG_TEST, str(IDLE_LIMIT_S), "-n", "2")
    assert run.returncode == 0, run.stderr
    assert "Timeout" not in run.stderr and "2 passed" in run.stdout


@pytest.mark.slow
def test_a_worker_held_open_by_a_thread_fails_with_that_threads_stack(tmp_path: Path) -> None:
    run = _run(tmp_path, HANGS, "2", "-n", "1")
    assert "1 passed" in run.stdout
    assert "Timeout (0:00:02)!" in run.stderr, run.stderr
    assert "in held_for_ever" in run.stderr
