"""arena._grpc_env: gRPC's listener experiment tuned by arena's entry points, never by an import.

Each case is a fresh interpreter: the setting matters only before grpc is imported.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from arena._grpc_env import TUNED_EXPERIMENTS

pytestmark = pytest.mark.slow  # every test here starts a process or a server

PRINT_ENV = "import os\n{first}\n{then}\nprint(os.environ.get('GRPC_EXPERIMENTS', '<unset>'))\n"
CLI_MAIN = (
    "from arena.cli import main\n"
    "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"  # every command imported
)
WORKERS = "import grpc\nfrom arena._grpc_env import tune_child_processes\ntune_child_processes()"
# `arena remote play` before it runs the user's bot: the arena's tuning is not the bot's
UNTUNED = CLI_MAIN + "from arena._grpc_env import untune_child_processes\nuntune_child_processes()"


@pytest.mark.parametrize(
    ("env", "first", "then", "expected"),
    [
        pytest.param({}, "", CLI_MAIN, TUNED_EXPERIMENTS, id="cli-entry-point"),
        pytest.param(
            {"GRPC_EXPERIMENTS": "-event_engine_client"}, "", CLI_MAIN, "-event_engine_client",
            id="users-own",
        ),
        pytest.param({}, "import grpc", CLI_MAIN, "<unset>", id="grpc-imported-first"),
        pytest.param({}, "", "import arena.referee.endpoint", "<unset>", id="import-sets-nothing"),
        pytest.param({}, "", "import arena.kahuna", "<unset>", id="game-import-sets-nothing"),
        pytest.param({}, "", WORKERS, TUNED_EXPERIMENTS, id="worker-processes"),
        pytest.param(
            {"GRPC_EXPERIMENTS": "-event_engine_client"}, "", WORKERS, "-event_engine_client",
            id="workers-users-own",
        ),
        pytest.param({}, "", UNTUNED, "<unset>", id="users-programs"),
        pytest.param(
            {"GRPC_EXPERIMENTS": "-event_engine_client"}, "", UNTUNED, "-event_engine_client",
            id="users-programs-users-own",
        ),
    ],
)
def test_grpc_experiments_at_arena_entry_points(
    env: dict[str, str], first: str, then: str, expected: str
) -> None:
    base = {key: value for key, value in os.environ.items() if key != "GRPC_EXPERIMENTS"}
    done = subprocess.run(
        [sys.executable, "-c", PRINT_ENV.format(first=first, then=then)],
        env={**base, **env}, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == expected
    assert "nknown" not in done.stderr  # grpcio knows the experiment it is told to switch off
