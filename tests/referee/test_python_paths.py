"""A Python bot's read-only mounts: the protocol code, the SDK and the engine alone."""

from __future__ import annotations

from pathlib import Path

import arena.kahuna
from arena.resources import ENGINE_MOUNT, PROTO_MOUNT, PYTHON_BOT_MOUNTS, SDK_MOUNT


def test_sandboxed_bots_get_the_engine_package_and_nothing_else_of_the_arena() -> None:
    assert PYTHON_BOT_MOUNTS == (PROTO_MOUNT, SDK_MOUNT, ENGINE_MOUNT)
    engine = Path(arena.kahuna.__file__).resolve().parent
    assert ENGINE_MOUNT.host_dir().resolve() == engine
    assert ENGINE_MOUNT.inside == "/opt/kahuna/engine/arena/kahuna"
    assert ENGINE_MOUNT.path_entry(True) == "/opt/kahuna/engine"  # import arena.kahuna


def test_unsandboxed_bots_find_the_engine_under_the_host_path_entry() -> None:
    entry = Path(ENGINE_MOUNT.path_entry(False))
    assert (entry / "arena" / "kahuna").resolve() == ENGINE_MOUNT.host_dir().resolve()
