"""A Python bot's read-only mounts: the protocol code, the SDK and the engine alone."""

from __future__ import annotations

from arena.referee.slots import (
    ENGINE_DIR,
    ENGINE_INSIDE,
    ENGINE_ROOT_INSIDE,
    GENERATED_DIR,
    PROTO_INSIDE,
    PYTHON_SDK_DIR,
    SDK_INSIDE,
    python_paths,
)


def test_sandboxed_bots_get_the_engine_package_and_nothing_else_of_the_arena() -> None:
    binds, path = python_paths(True)
    assert binds == [
        (GENERATED_DIR, PROTO_INSIDE),
        (PYTHON_SDK_DIR, SDK_INSIDE),
        (ENGINE_DIR, ENGINE_INSIDE),
    ]
    assert f"{ENGINE_ROOT_INSIDE}/arena/kahuna" == ENGINE_INSIDE
    assert path.split(":") == [PROTO_INSIDE, SDK_INSIDE, ENGINE_ROOT_INSIDE]


def test_unsandboxed_bots_get_the_host_paths_and_no_binds() -> None:
    binds, path = python_paths(False)
    assert binds == []
    assert path.split(":") == [str(GENERATED_DIR), str(PYTHON_SDK_DIR), str(ENGINE_DIR.parents[1])]
