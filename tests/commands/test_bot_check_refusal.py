"""`arena bot check` refuses, before playing anything, a bot directory that `arena bot add`
(and so an upload) refuses: one check of the directory's files, said the same way."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.cli import main

CASES = [
    # (case, what both commands say)
    ("link-absolute", "entry 'secret': link to '/etc/hostname' points outside"),
    ("link-up", "entry 'lib/up': link to '../../..' points outside"),
    ("link-chain", "entry 'y': link to 'x/..' resolves outside"),
    ("fifo", "entry 'pipe': a named pipe (FIFO)"),
]


def _bad_bot(tmp: Path, case: str) -> Path:
    directory = tmp / "src" / "lnk"
    shutil.copytree(SAMPLE_RANDOM_BOT, directory, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (directory / "bot.toml").read_text()
    (directory / "bot.toml").write_text(toml.replace('name = "python_random"', 'name = "lnk"'))
    (directory / "lib").mkdir()
    (directory / "lib" / "inside").symlink_to("../bot.py")  # allowed: stays inside
    if case == "link-absolute":
        (directory / "secret").symlink_to("/etc/hostname")
    elif case == "link-up":
        (directory / "lib" / "up").symlink_to("../../..")
    elif case == "link-chain":  # each harmless by its text; y is the directory above
        (directory / "x").symlink_to(".")
        (directory / "y").symlink_to("x/..")
    else:
        os.mkfifo(directory / "pipe")
    return directory


@pytest.mark.parametrize(("case", "message"), CASES, ids=[case for case, _ in CASES])
def test_bot_check_refuses_what_bot_add_refuses_before_playing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, message: str
) -> None:
    directory = _bad_bot(tmp_path, case)
    data = str(tmp_path / "data")
    assert main(["bot", "add", str(directory), "--data-dir", data]) == 1
    added = capsys.readouterr()
    assert message in added.err, added.err
    assert main(["bot", "check", str(directory), "--data-dir", data]) == 2
    checked = capsys.readouterr()
    assert message in checked.err and "the arena would refuse this bot" in checked.err
    assert "checking" not in checked.out and "Traceback" not in checked.err, checked
