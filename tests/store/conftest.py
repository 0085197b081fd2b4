"""Fixtures for the store: a fresh data directory and bot directories on disk."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from arena.referee.botdir import load_bot
from arena.referee.types import BotSpec
from arena.store import Store

MakeBot = Callable[..., BotSpec]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "data") as opened:
        yield opened


@pytest.fixture
def make_bot(tmp_path: Path) -> MakeBot:
    """Write a bot directory (bot.toml + bot.py) and load it: a real BotSpec."""

    def make(name: str, body: str = "print('hello')\n") -> BotSpec:
        directory = tmp_path / "sources" / name
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "bot.toml").write_text(
            f'name = "{name}"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'
        )
        (directory / "bot.py").write_text(body)
        return load_bot(directory)

    return make
