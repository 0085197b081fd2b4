"""Session-scoped builds of the starter kits (see building.py, the one build cache)."""

from __future__ import annotations

import pytest

from arena.referee import load_bot
from arena.referee.types import BotSpec

from .building import KITS, Kit, ensure_built, missing_tools


def built(kit: Kit) -> BotSpec:
    """``kit`` built in place (once per source hash), or skipped if optional and unbuildable."""
    missing = missing_tools(kit)
    if missing and kit.optional:
        pytest.skip(f"{kit.name} needs {', '.join(missing)} (.ci/run installs them)")
    ensure_built(kit)
    return load_bot(kit.directory)


@pytest.fixture(scope="session", params=KITS, ids=[kit.name for kit in KITS])
def built_kit(request: pytest.FixtureRequest) -> tuple[Kit, BotSpec]:
    kit: Kit = request.param
    return kit, built(kit)
