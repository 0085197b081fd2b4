"""The generated protobuf and gRPC code of the ``kahuna.v1`` protocol.

Inside the arena's sandbox the generated code is on ``PYTHONPATH`` as the
top-level package ``kahuna.v1`` (the arena binds ``arena/protocol/gen`` at
``/opt/kahuna/proto``). Outside it (a bot run by hand beside an installed
arena, or the arena's own tests), the arena's copy of the very same modules
is registered under that name, so that each proto file is loaded only once.
"""

from __future__ import annotations

import importlib
import sys

_MODULES = (
    "game_pb2",
    "referee_pb2",
    "referee_pb2_grpc",
    "arena_service_pb2",
    "arena_service_pb2_grpc",
)


def _alias_arena_copy() -> None:
    prefix = "arena.protocol.gen.kahuna"
    sys.modules["kahuna"] = importlib.import_module(prefix)
    sys.modules["kahuna.v1"] = importlib.import_module(f"{prefix}.v1")
    for name in _MODULES:
        sys.modules[f"kahuna.v1.{name}"] = importlib.import_module(f"{prefix}.v1.{name}")


try:
    importlib.import_module("kahuna.v1.referee_pb2_grpc")
except ImportError:
    _alias_arena_copy()

from kahuna.v1 import (  # noqa: E402
    arena_service_pb2,
    arena_service_pb2_grpc,
    game_pb2,
    referee_pb2,
    referee_pb2_grpc,
)

__all__ = [
    "arena_service_pb2",
    "arena_service_pb2_grpc",
    "game_pb2",
    "referee_pb2",
    "referee_pb2_grpc",
]
