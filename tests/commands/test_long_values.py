"""A refusal quotes a long value a user supplied by its start and its length, not whole:
a 100,000-character user name or a 5,000-character bot name is one short line."""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.cli import main
from arena.store import Store

NAME = "a" * 5_000
USER = "u" * 100_000
DATA = ["--data-dir", "{data}"]

CASES = [
    # (id, command line: {name}, {user}, {bot}, {data} filled in, exit status, what it says)
    ("bot show", ["bot", "show", "{name}", *DATA], 1, "no bot 'aaaa"),
    ("tournament status", ["tournament", "status", "{name}", *DATA], 1, "no tournament 'aaaa"),
    ("tournament name", ["tournament", "run", "{name}", "r1", "r2", *DATA], 2,
     "tournament name 'aaaa"),
    ("unknown bot", ["tournament", "run", "t", "{name}", "r2", *DATA], 1, "no bot 'aaaa"),
    ("token user", ["token", "create", "{user}", *DATA], 2, "user name 'uuuu"),
    ("--owner", ["bot", "add", "{bot}", "--owner", "{user}", *DATA], 2,
     "--owner: user name 'uuuu"),
    ("revoke --user", ["token", "revoke", "--user", "{user}", *DATA], 1,
     "no token of user 'uuuu"),
    ("bot new", ["bot", "new", "python", "{name}", "--dir", "{data}"], 2, "bot name 'aaaa"),
    ("bot.toml name", ["bot", "check", "{bot}", *DATA], 2, "field 'name' must be"),
    ("not an int", ["token", "revoke", "{user}", *DATA], 2, "'uuuu"),
    ("not a choice", ["limits", "set", "{user}", "3", *DATA], 2, "invalid choice: 'uuuu"),
    ("unrecognized", ["stats", "{user}", *DATA], 2, "unrecognized arguments: uuuu"),
]


def _status(argv: Sequence[str]) -> int:
    """The command's exit status, argparse's refusals (SystemExit) included."""
    try:
        return main(argv)
    except SystemExit as exited:
        return int(str(exited.code))


@pytest.mark.parametrize(("argv", "status", "said"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_a_long_value_is_quoted_by_its_start_and_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], status: int,
    said: str,
) -> None:  # fmt: skip
    bot = tmp_path / "bot"
    shutil.copytree(SAMPLE_RANDOM_BOT, bot, ignore=shutil.ignore_patterns("__pycache__"))
    if "check" in argv:  # a bot.toml naming the bot with the long name
        toml = (bot / "bot.toml").read_text()
        (bot / "bot.toml").write_text(re.sub(r'name = "[^"]*"', f'name = "{NAME}"', toml, count=1))
    data = tmp_path / "data"
    Store.open(data).close()  # a store to read: the value, not the store, is refused
    words = [w.format(name=NAME, user=USER, bot=bot, data=data) for w in argv]
    assert _status(words) == status
    err = capsys.readouterr().err
    line = err.splitlines()[-1]
    assert said in line and re.search(r"\.\.\. \((5000|100000) characters\)", line), line
    assert len(err) < 1_000, err[:300]
