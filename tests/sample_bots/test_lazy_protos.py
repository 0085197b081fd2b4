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


START_UP = (
    "import gc, sys\n"
    "collected = []\n"
    "gc.callbacks.append(lambda phase, info: phase == 'start' and collected.append(info))\n"
    "{before}\n"
    "import kahuna_bot\n"
    "print(len(collected), gc.isenabled(), gc.get_freeze_count() > 10_000)\n"
    "print(sorted(n for n in sys.modules if n in ('kahuna_bot.sampling', 'kahuna_bot.policy',"
    " 'socket', 'selectors')))\n"
    "from kahuna_bot import InfoStateSampler, PolicyError, from_policy, sample_state\n"
    "print(InfoStateSampler.__module__, PolicyError.__module__, from_policy.__name__,"
    " sample_state.__name__)\n"
)


@pytest.mark.parametrize(
    ("before", "enabled"), [("pass", "True"), ("gc.disable()", "False")], ids=["on", "off"]
)
def test_the_sdk_import_runs_no_collection_and_freezes_what_it_made(
    tmp_path: Path, before: str, enabled: str
) -> None:
    """No cycle collection walks the SDK's imports (they live as long as the process);
    the collector is left as the bot had it; sampling and policies load on first use, and
    the ``socket`` module only for a TCP referee."""
    (tmp_path / "arena").mkdir()
    (tmp_path / "arena" / "kahuna").symlink_to(REPO / "arena" / "kahuna")
    done = subprocess.run(
        [sys.executable, "-c", START_UP.format(before=before)],
        env={**os.environ, "PYTHONPATH": f"{PYTHONPATH}:{tmp_path}", "KAHUNA_REFEREE": "unix:///x"},
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"0 {enabled} True",
        "[]",
        "kahuna_bot.sampling kahuna_bot.policy from_policy sample_state",
    ]
