"""Session-scoped builds of the compiled starter kits (see building.py)."""

from __future__ import annotations

import pytest

from arena.referee import load_bot
from arena.referee.types import BotSpec

from .building import KITS, Kit, ensure_built


@pytest.fixture(scope="session", params=KITS, ids=[kit.name for kit in KITS])
def built_kit(request: pytest.FixtureRequest) -> tuple[Kit, BotSpec]:
    kit: Kit = request.param
    ensure_built(kit)
    return kit, load_bot(kit.directory)
