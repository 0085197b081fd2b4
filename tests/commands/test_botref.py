"""`arena match` names a bot by its directory, a stored bot's name or a sample bot's name.

Tried in that order: a directory, then the store (the latest version), then the
sample bots; a name that is none of them is refused naming the closest one and
the sample bots. Looking a name up never creates a data directory.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from arena.cli import main
from arena.commands.botref import find_bot
from arena.referee import BotConfigError, load_bot
from arena.resources import sample_bots_dir
from arena.store import Store, add_bot_version
from tests.commands.test_store_commands import damaged_data_dir

SAMPLES = sample_bots_dir()


def _renamed_copy(tmp_path: Path, name: str, source: str = "python_random") -> Path:
    bot = tmp_path / "sources" / name
    shutil.copytree(SAMPLES / source, bot)
    text = (bot / "bot.toml").read_text()
    (bot / "bot.toml").write_text(text.replace(f'name = "{source}"', f'name = "{name}"'))
    return bot


@pytest.fixture
def data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    with Store.open(data) as store:
        add_bot_version(store, load_bot(_renamed_copy(tmp_path, "stored-bot")))
        # a stored bot with a sample's name: the stored one is meant (greedy's files)
        shadow = _renamed_copy(tmp_path, "python_random", source="python_greedy")
        add_bot_version(store, load_bot(shadow))
    return data


def test_a_directory_comes_first(
    tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = _renamed_copy(tmp_path / "here", "stored-bot")
    monkeypatch.chdir(mine.parent)
    spec = find_bot("stored-bot", str(data))  # ./stored-bot is a directory here
    assert spec.directory == mine.resolve()


def test_a_stored_bot_is_its_latest_stored_version(data: Path) -> None:
    spec = find_bot("stored-bot", str(data))
    assert spec.directory.is_relative_to(data.resolve())
    assert spec.name == "stored-bot"


def test_a_stored_bot_goes_before_a_sample_of_the_same_name(data: Path) -> None:
    spec = find_bot("python_random", str(data))
    assert spec.directory.is_relative_to(data.resolve())
    assert (spec.directory / "greedy_eval.py").is_file()


def test_a_sample_bot_by_its_name_without_any_data_directory(tmp_path: Path) -> None:
    spec = find_bot("python_greedy", str(tmp_path / "none"))
    assert spec.directory == (SAMPLES / "python_greedy").resolve()
    assert not (tmp_path / "none").exists()  # a look-up never makes a data directory


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("python_greedyy", "python_greedyy: no such bot directory, stored bot or sample bot"
                           " (did you mean python_greedy?); the sample bots are cpp_random,"),
        ("stored-bt", "(did you mean stored-bot?)"),
        ("zzz", "zzz: no such bot directory, stored bot or sample bot; the sample bots are"),
        ("./stored-bot", "stored-bot: not a directory"),  # a path is a path: no look-up
        # a sample's path in a checkout, typed elsewhere: the sample is named
        ("sample_bots/python_greedy", "sample_bots/python_greedy: no such directory; the"
                                      " sample bot python_greedy is named without its"
                                      " directory: python_greedy"),
    ],
)  # fmt: skip
def test_a_name_that_is_nothing_is_refused_naming_the_closest(
    data: Path, text: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # outside the checkout, whose sample_bots/ is a directory
    with pytest.raises(BotConfigError) as refused:
        find_bot(text, str(data))
    assert message in str(refused.value)


def test_the_command_refuses_an_unknown_name_with_exit_2(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["match", "stored-bt", "python_random", "--data-dir", str(data)]) == 2
    assert "arena match: stored-bt: no such bot directory" in capsys.readouterr().err


@pytest.mark.slow
def test_the_command_plays_a_stored_bot_against_a_sample_by_name(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["match", "stored-bot", "python_greedy", "--games", "2", "--json", "--data-dir",
            str(data)]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["score"]) == {"stored-bot", "python_greedy"}
    assert report["bots"]["python_greedy"]["directory"] == str(SAMPLES.resolve() / "python_greedy")
    assert Path(report["bots"]["stored-bot"]["directory"]).is_relative_to(data.resolve())


def test_a_damaged_store_is_named_in_one_line_not_taken_for_no_such_bot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = damaged_data_dir(tmp_path)
    assert main(["match", "stored-bot", "python_random", "--data-dir", str(data)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"arena match: {data / 'arena.db'}: the database is damaged"), err
