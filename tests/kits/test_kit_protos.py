"""The C++ and TypeScript kits build from their own copies of the bot-facing
protos (the sandbox, and a bot directory made by `arena bot new`, see only
the bot's directory): each copy must equal proto/ byte for byte. Fix a
failure with: cp proto/kahuna/v1/game.proto proto/kahuna/v1/referee.proto
sample_bots/KIT/proto/kahuna/v1/"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sample_bots.test_js_protos import PROTO_ROOT, bot_protos

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"


@pytest.mark.parametrize("kit", ["cpp_random", "ts_random"])
def test_kit_proto_copies_equal_the_repository_protos(kit: str) -> None:
    root = SAMPLE_BOTS / kit / "proto"
    copies = {path.relative_to(root).as_posix() for path in root.rglob("*.proto")}
    assert copies == bot_protos()
    for name in sorted(copies):
        assert (root / name).read_bytes() == (PROTO_ROOT / name).read_bytes(), f"{kit}: {name}"
