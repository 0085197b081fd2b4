"""Fixtures for referee tests: bot directories built from tests/bots/testbot.py."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.referee import BotSpec, load_bot

TESTBOT = Path(__file__).resolve().parent.parent / "bots" / "testbot.py"

MakeBot = Callable[..., BotSpec]


def processes_with(marker: str) -> list[int]:
    """Pids of every live process whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state != "Z":  # a zombie holds nothing
            found.append(int(entry.name))
    return found


@pytest.fixture
def make_bot(tmp_path: Path) -> MakeBot:
    """``make_bot(behaviour, *args, name=...)``: a bot directory running testbot.py.

    The bot's command line carries a unique marker (``spec.command[2]``) so
    that a test can look for processes it left behind.
    """
    tmp_path.chmod(0o755)

    def make(behaviour: str, *args: str, name: str | None = None) -> BotSpec:
        bot_name = name or behaviour.replace("_", "-")
        directory = tmp_path / f"{bot_name}-{uuid.uuid4().hex[:6]}"
        directory.mkdir(mode=0o755)
        shutil.copy(TESTBOT, directory / "bot.py")
        (directory / "bot.py").chmod(0o644)
        marker = f"kt-{uuid.uuid4().hex}"
        command = ["python3", "bot.py", marker, behaviour, *args]
        (directory / "bot.toml").write_text(
            f"name = {json.dumps(bot_name)}\ncommand = {json.dumps(command)}\n"
            'runtime = "python"\n'
        )
        (directory / "bot.toml").chmod(0o644)
        return load_bot(directory)

    return make


def marker_of(spec: BotSpec) -> str:
    return spec.command[2]


def assert_no_process_left(*specs: BotSpec) -> None:
    for spec in specs:
        left = processes_with(marker_of(spec))
        assert left == [], f"{spec.name} left processes {left}"


@pytest.fixture(autouse=True)
def _quiet_logs() -> None:
    os.environ.setdefault("KAHUNA_TEST", "1")
