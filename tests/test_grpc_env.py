"""arena._grpc_env: gRPC's listener experiment tuned in arena processes, never over the user's.

Each case is a fresh interpreter: the setting matters only before grpc is imported.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from arena._grpc_env import TUNED_EXPERIMENTS

PRINT_AFTER_IMPORT = (
    "import os\n{first}\nimport arena.referee.endpoint\n"
    "print(os.environ.get('GRPC_EXPERIMENTS', '<unset>'))\n"
)


@pytest.mark.parametrize(
    ("env", "first", "expected"),
    [
        pytest.param({}, "", TUNED_EXPERIMENTS, id="arena-process"),
        pytest.param(
            {"GRPC_EXPERIMENTS": "-event_engine_client"}, "", "-event_engine_client", id="users-own"
        ),
        pytest.param({}, "import grpc", "<unset>", id="grpc-imported-first"),
    ],
)
def test_grpc_experiments_after_importing_arena(
    env: dict[str, str], first: str, expected: str
) -> None:
    base = {key: value for key, value in os.environ.items() if key != "GRPC_EXPERIMENTS"}
    done = subprocess.run(
        [sys.executable, "-c", PRINT_AFTER_IMPORT.format(first=first)],
        env={**base, **env}, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected
    assert "nknown" not in done.stderr  # grpcio knows the experiment it is told to switch off

