"""The SDK and the Python sample bots are clean under `mypy --strict`.

The project's mypy run covers the `arena` package only: the SDK imports the
generated code as the top-level `kahuna.v1` (as inside the sandbox), which
cannot share a mypy run with `arena.protocol.gen`, so it is checked here on
its own (under a second, isolated mypy).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test here starts a process or a server

REPO = Path(__file__).resolve().parents[2]
SAMPLE_BOTS = REPO / "sample_bots"
CHECKED = [
    SAMPLE_BOTS / "sdk" / "python" / "kahuna_bot",
    SAMPLE_BOTS / "python_greedy" / "greedy_eval.py",
    SAMPLE_BOTS / "python_greedy" / "noise.py",
    SAMPLE_BOTS / "python_greedy" / "bot.py",
    SAMPLE_BOTS / "python_ismcts" / "ismcts.py",
]


def _mypy(
    paths: list[Path], cwd: Path, extra: Path | None = None
) -> subprocess.CompletedProcess[str]:
    # the SDK is built on the engine (arena.kahuna), found in the checkout
    mypy_path = f"{REPO / 'arena' / 'protocol' / 'gen'}:{SAMPLE_BOTS / 'sdk' / 'python'}:{REPO}"
    if extra is not None:  # a bot's own modules, beside its bot.py
        mypy_path += f":{extra}"
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *map(str, paths)],
        cwd=cwd, env={**os.environ, "MYPYPATH": mypy_path},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_sdk_and_greedy_bot_are_strictly_typed(tmp_path: Path) -> None:
    done = _mypy(CHECKED, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_random_bot_is_strictly_typed(tmp_path: Path) -> None:
    # bot.py files share a module name: checked in a run of their own
    done = _mypy([SAMPLE_BOTS / "python_random" / "bot.py"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ismcts_bot_is_strictly_typed(tmp_path: Path) -> None:
    bot_dir = SAMPLE_BOTS / "python_ismcts"
    done = _mypy([bot_dir / "bot.py"], tmp_path, extra=bot_dir)
    assert done.returncode == 0, done.stdout + done.stderr


def test_policy_bot_is_strictly_typed(tmp_path: Path) -> None:
    bot_dir = SAMPLE_BOTS / "python_policy"
    done = _mypy([bot_dir / "bot.py", bot_dir / "policy.py"], tmp_path, extra=bot_dir)
    assert done.returncode == 0, done.stdout + done.stderr
