"""An unbuilt native bot is refused before anything runs, by every command that would run
it: `arena match`, `arena bot check`, `arena bot add`, `arena remote submit` (before the
login: nothing is uploaded) and the arena's own submission check (SubmitBot). Each
refusal says "run ./build.sh first"; nothing is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.bots.submission import check_submission
from arena.cli import main
from arena.referee import load_bot
from arena.resources import sample_bots_dir
from arena.store import Store, list_bots
from tests.referee.test_unbuilt import NATIVE, make_bot

RANDOM = str(sample_bots_dir() / "python_random")
REFUSAL = "g is not built (no ./bot): run ./build.sh first"

COMMANDS = [
    # (command line with {bot} and {data}, exit status)
    (["match", "{bot}", RANDOM, "--data-dir", "{data}"], 2),
    (["match", RANDOM, "{bot}", "--data-dir", "{data}"], 2),
    (["bot", "check", "{bot}", "--data-dir", "{data}"], 2),
    (["bot", "add", "{bot}", "--data-dir", "{data}"], 1),
    (["remote", "submit", "{bot}"], 2),
]


@pytest.mark.parametrize(("argv", "status"), COMMANDS,
                         ids=["match a", "match b", "bot check", "bot add", "remote submit"])
def test_an_unbuilt_bot_is_refused_before_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    argv: list[str], status: int,
) -> None:  # fmt: skip
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no saved login
    bot = make_bot(tmp_path / "g", NATIVE, {"build.sh": 0o755})
    data = tmp_path / "data"
    words = [word.format(bot=bot, data=data) for word in argv]
    assert main(words) == status
    err = capsys.readouterr().err
    assert f"{bot.resolve()}: {REFUSAL}" in err, err
    if (data / "arena.db").exists():
        with Store.open(data) as store:
            assert list_bots(store) == []


def test_the_arena_refuses_an_unbuilt_upload_without_naming_its_paths(tmp_path: Path) -> None:
    bot = load_bot(make_bot(tmp_path / "g", NATIVE, {"build.sh": 0o755}))
    checked = check_submission(bot, load_bot(Path(RANDOM)))
    assert checked.refusal == REFUSAL and checked.conformance is None
