"""The generated protobuf and gRPC code of the ``kahuna.v1`` protocol.

Inside the arena's sandbox the generated code is on ``PYTHONPATH`` as the
top-level package ``kahuna.v1`` (the arena binds ``arena/protocol/gen`` at
``/opt/kahuna/proto``). Outside it (a bot run by hand beside an installed
arena, or the arena's own tests), the arena's copy of the very same modules
is registered under that name, so that each proto file is loaded only once.

A bot process needs only ``game_pb2`` and ``referee_pb2`` (its transport,
``kahuna_bot.wire``, is not ``grpcio``): the gRPC stubs (``referee_pb2_grpc``,
``arena_service_pb2_grpc``, which import ``grpc``) and the ``ArenaService``
messages (the remote-bot client, ``kahuna_bot.remote``) are imported on first
use, not at every bot's start (each launch of a sandboxed bot pays its imports
in CPU).
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING

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


_LAZY = frozenset({"referee_pb2_grpc", "arena_service_pb2", "arena_service_pb2_grpc"})

try:
    importlib.import_module("kahuna.v1.referee_pb2")
except ImportError:
    _alias_arena_copy()

from kahuna.v1 import game_pb2, referee_pb2  # noqa: E402

if TYPE_CHECKING:
    from kahuna.v1 import arena_service_pb2, arena_service_pb2_grpc, referee_pb2_grpc


def __getattr__(name: str) -> ModuleType:
    """The gRPC stubs and the ``ArenaService`` messages, imported on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"kahuna.v1.{name}")
    globals()[name] = module
    return module


__all__ = [
    "arena_service_pb2",
    "arena_service_pb2_grpc",
    "game_pb2",
    "referee_pb2",
    "referee_pb2_grpc",
]
