"""sample_bots/README.md documents the whole contract: every message, field
and enum value of kahuna.v1 is named there, so a bot can be written from it."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf.descriptor import Descriptor, EnumDescriptor

from arena.protocol.gen.kahuna.v1 import game_pb2, referee_pb2

README = Path(__file__).resolve().parents[2] / "sample_bots" / "README.md"
FILES = (game_pb2.DESCRIPTOR, referee_pb2.DESCRIPTOR)
MESSAGES: list[Descriptor] = [m for f in FILES for m in f.message_types_by_name.values()]
ENUMS: list[EnumDescriptor] = [e for f in FILES for e in f.enum_types_by_name.values()]


@pytest.fixture(scope="module")
def readme() -> str:
    return README.read_text(encoding="utf-8")


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: m.name)
def test_every_message_and_field_is_documented(readme: str, message: Descriptor) -> None:
    assert f"`{message.name}`" in readme or f"{{{message.name.lower()}}}" in readme
    missing = [field.name for field in message.fields if f"`{field.name}`" not in readme]
    assert not missing, f"{message.name}: fields not in README: {missing}"


@pytest.mark.parametrize("enum", ENUMS, ids=lambda e: e.name)
def test_every_enum_value_is_documented(readme: str, enum: EnumDescriptor) -> None:
    prefix = enum.values[0].name.removesuffix("UNSPECIFIED")
    for value in enum.values[1:]:
        suffix = value.name.removeprefix(prefix)
        assert value.name in readme or f"`_{suffix}`" in readme, value.name


@pytest.mark.parametrize(
    "term",
    ["KAHUNA_REFEREE", "KAHUNA_TOKEN", "unix:///run/kahuna/referee.sock", "/tmp", "bot.toml",
     "runtime", "command", "history_start", "request_id", "64 KiB"],
)  # fmt: skip
def test_environment_and_limits_are_documented(readme: str, term: str) -> None:
    assert term in readme
