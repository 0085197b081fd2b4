"""`arena bot check` refuses, before playing anything, a bot directory that `arena bot add`
(and so an upload) refuses: one check of the directory's files, said the same way."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.cli import main
from arena.testing.refused_entries import REFUSED_ENTRIES, plant_refused_entry

CASES = REFUSED_ENTRIES


def _bad_bot(tmp: Path, case: str) -> Path:
    directory = tmp / "src" / "lnk"
    shutil.copytree(SAMPLE_RANDOM_BOT, directory, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (directory / "bot.toml").read_text()
    (directory / "bot.toml").write_text(toml.replace('name = "python_random"', 'name = "lnk"'))
    plant_refused_entry(directory, case)
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
