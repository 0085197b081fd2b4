"""One name for running bots without the sandbox, on every command that runs bots."""

from __future__ import annotations

import argparse

import pytest

from arena.cli import build_parser

COMMANDS = [
    ("match", ["match", "a", "b"]),
    ("tournament-run", ["tournament", "run", "cup", "x", "y"]),
    ("tournament-resume", ["tournament", "resume", "cup"]),
    ("bot-add", ["bot", "add", "dir"]),
    ("serve", ["serve"]),
]


@pytest.mark.parametrize("argv", [c[1] for c in COMMANDS], ids=[c[0] for c in COMMANDS])
def test_every_command_that_runs_bots_takes_unsafe_no_sandbox(argv: list[str]) -> None:
    parser = build_parser()
    assert parser.parse_args(argv).unsafe_no_sandbox is False
    assert parser.parse_args([*argv, "--unsafe-no-sandbox"]).unsafe_no_sandbox is True


def _options(parser: argparse.ArgumentParser) -> set[str]:
    found: set[str] = set()
    for action in parser._actions:
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _options(sub)
    return found


def test_no_other_spelling_of_the_unsafe_flag() -> None:
    unsafe = {option for option in _options(build_parser()) if "unsafe" in option}
    assert unsafe == {"--unsafe-no-sandbox"}
