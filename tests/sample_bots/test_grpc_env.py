"""kahuna_bot._grpc_env: gRPC's experiments tuned in a bot process only, never over the bot's own.

Each case is a fresh interpreter: the setting matters only before grpc is imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test here starts a process or a server

REPO = Path(__file__).resolve().parents[2]
PYTHONPATH = f"{REPO / 'arena' / 'protocol' / 'gen'}:{REPO / 'sample_bots' / 'sdk' / 'python'}"
TUNED = "-event_engine_client"
PRINT_AFTER_IMPORT = (
    "import os, sys\n"
    "{first}\n"
    "import kahuna_bot\n"
    "print(os.environ.get('GRPC_EXPERIMENTS', '<unset>'))\n"
)


@pytest.mark.parametrize(
    ("env", "first", "expected"),
    [
        pytest.param({"KAHUNA_REFEREE": "unix:///x"}, "", TUNED, id="bot-process"),
        pytest.param({}, "", "<unset>", id="not-a-bot"),
        pytest.param(
            {"KAHUNA_REFEREE": "unix:///x", "GRPC_EXPERIMENTS": "mine"}, "", "mine", id="bots-own"
        ),
        pytest.param({"KAHUNA_REFEREE": "unix:///x"}, "import grpc", "<unset>", id="grpc-first"),
    ],
)
def test_grpc_experiments_after_importing_kahuna_bot(
    env: dict[str, str], first: str, expected: str, tmp_path: Path
) -> None:
    # the sandbox's layout: the engine alone, ``arena`` a namespace package around it
    (tmp_path / "arena").mkdir()
    (tmp_path / "arena" / "kahuna").symlink_to(REPO / "arena" / "kahuna")
    base = {key: value for key, value in os.environ.items() if key != "GRPC_EXPERIMENTS"}
    base.pop("KAHUNA_REFEREE", None)
    done = subprocess.run(
        [sys.executable, "-c", PRINT_AFTER_IMPORT.format(first=first)],
        env={**base, "PYTHONPATH": f"{PYTHONPATH}:{tmp_path}", **env},
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected
