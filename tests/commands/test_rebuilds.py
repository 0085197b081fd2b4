"""`arena bot add` warns when a new version is only a rebuild (binary files differ)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.commands.rebuilds import binary_only_changes

ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(64)

Change = Callable[[Path], None]


def _write(name: str, data: bytes) -> Change:
    return lambda directory: (directory / name).write_bytes(data)


def _remove(name: str) -> Change:
    return lambda directory: (directory / name).unlink()


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        pytest.param([], (), id="unchanged"),
        pytest.param([_write("bot", ELF + b"\x01")], ("bot",), id="binary-rebuilt"),
        pytest.param([_write("bot", ELF + b"\x01"), _write("lib/x.so", ELF + b"\x02")],
                     ("bot", "lib/x.so"), id="two-binaries"),
        pytest.param([_write("main.go", b"package main // v2\n")], (), id="source-changed"),
        pytest.param([_write("bot", ELF + b"\x01"), _write("main.go", b"package x\n")], (),
                     id="binary-and-source"),
        pytest.param([_write("bot", ELF + b"\x01"), _write("new.bin", ELF)], (), id="file-added"),
        pytest.param([_remove("lib/x.so")], (), id="file-removed"),
        pytest.param([_write("bot", b"#!/bin/sh\necho text now\n")], (), id="now-text"),
        pytest.param([_write("__pycache__/m.cpython-311.pyc", b"\0\1")], (), id="pycache-skipped"),
    ],
)
def test_binary_only_changes(
    tmp_path: Path, changes: list[Change], expected: tuple[str, ...]
) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    (old / "lib").mkdir(parents=True)
    (old / "main.go").write_bytes(b"package main\n")
    (old / "bot").write_bytes(ELF)
    (old / "lib" / "x.so").write_bytes(ELF)
    shutil.copytree(old, new)
    (new / "__pycache__").mkdir()
    for change in changes:
        change(new)
    assert binary_only_changes(old, new) == expected


def _bot_add(bot: Path, data: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # a process of its own: its logs do not outlive a capture
        [sys.executable, "-m", "arena", "bot", "add", str(bot), "--data-dir", str(data)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.mark.slow
def test_bot_add_warns_when_a_version_differs_only_in_binary_files(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    bot = tmp_path / "rebuilt"
    shutil.copytree(SAMPLE_RANDOM_BOT, bot, ignore=shutil.ignore_patterns("__pycache__"))
    toml = bot / "bot.toml"
    toml.write_text(toml.read_text().replace('name = "python_random"', 'name = "rebuilt"'))
    (bot / "model.bin").write_bytes(ELF)
    data = tmp_path / "data"
    first = _bot_add(bot, data)
    assert first.returncode == 0, first.stderr
    assert "differs from" not in first.stderr
    (bot / "model.bin").write_bytes(ELF + b"\x01")  # the same source built again, differently
    second = _bot_add(bot, data)
    assert second.returncode == 0, second.stderr
    assert "only in binary files (model.bin)" in second.stderr
    (bot / "bot.py").write_text((bot / "bot.py").read_text() + "# a change of source\n")
    third = _bot_add(bot, data)
    assert third.returncode == 0, third.stderr
    assert "differs from" not in third.stderr
