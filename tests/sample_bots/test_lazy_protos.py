"""kahuna_bot._gen: a bot process imports only the protocol modules it plays with.

Every launch of a sandboxed Python bot pays its imports in CPU, twice per bot and
paired match (a process per half). The bot's transport is ``kahuna_bot.wire``
(on ``h2``), not ``grpcio``: the gRPC stubs (``*_pb2_grpc``, which import ``grpc``)
and the ``ArenaService`` modules serve the remote-bot client only
(``kahuna_bot.remote``): they are imported on first use.
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
IMPORT_THEN_USE = (
    "import sys, kahuna_bot\n"
    "print(sorted(name for name in sys.modules if 'arena_service' in name"
    " or name.endswith('_pb2_grpc') or name.split('.')[0] == 'grpc'))\n"
    "from kahuna_bot._gen import arena_service_pb2, arena_service_pb2_grpc, referee_pb2_grpc\n"
    "print(arena_service_pb2.WaitForSeatsRequest.DESCRIPTOR.full_name,"
    " arena_service_pb2_grpc.ArenaServiceStub.__name__,"
    " referee_pb2_grpc.RefereeServiceStub.__name__)\n"
    "import kahuna_bot._gen as gen\n"
    "try:\n"
    "    gen.nothing_of_the_kind\n"
    "except AttributeError as error:\n"
    "    print(error)\n"
)


def test_a_bot_process_imports_grpc_and_arena_service_modules_only_when_used(
    tmp_path: Path,
) -> None:
    # the sandbox's layout: the engine alone, ``arena`` a namespace package around it
    (tmp_path / "arena").mkdir()
    (tmp_path / "arena" / "kahuna").symlink_to(REPO / "arena" / "kahuna")
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_THEN_USE],
        env={**os.environ, "PYTHONPATH": f"{PYTHONPATH}:{tmp_path}", "KAHUNA_REFEREE": "unix:///x"},
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[]",
        "kahuna.v1.WaitForSeatsRequest ArenaServiceStub RefereeServiceStub",
        "module 'kahuna_bot._gen' has no attribute 'nothing_of_the_kind'",
    ]
