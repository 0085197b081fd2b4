"""`arena ARGV` in the test's own process, through ``arena.cli.main`` (what the
process runs): for commands that answer without serving or playing for long,
where a process each would cost a Python start and the arena's imports."""

from __future__ import annotations

import pytest

from arena.cli import main


def arena_in_process(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The command's exit status (argparse's own refusals' too), standard output and
    standard error, as captured since the test last read them."""
    try:
        status = main(list(argv))
    except SystemExit as exit_:  # argparse's own refusals
        status = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return status, out, err
