"""The `arena` command's words: help a user can read, suggestions for a typo, one name each.

Every help text of every (sub-)command is searched for what belongs to the
code, not to its users: issue numbers, reST markup (``x``), source paths and
module names. A mistyped command, choice or flag is answered with the closest
real one; the formats, the remote commands and the local ones use one name
per concept. A command loaded alone (`arena NAME ...` imports only its module)
has the help it has among all the others.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from arena.cli import COMMAND_MODULES, COMMANDS, build_parser, main
from tests.parsers import every_parser

INTERNAL = [
    (re.compile(r"\bissue \d+", re.IGNORECASE), "an issue number"),
    (re.compile(r"``"), "reST markup"),
    (re.compile(r"\barena/\w+/|\w+\.py\b"), "a source path"),
    (re.compile(r"\barena\.[a-z_]+\.[a-z_]+"), "a module path"),
]


def _texts() -> Iterator[tuple[str, str]]:
    for path, parser in every_parser(build_parser()):
        yield path, parser.format_help()


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    """The top-level command names ``parser`` takes, aliases included."""
    found = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(found.choices)


def test_each_command_loads_alone_with_the_help_it_has_among_all() -> None:
    """`arena NAME ...` imports only the module ``COMMANDS`` names for NAME: that module
    registers exactly those names, and every parser under them (help, usage, choices)
    is the one built with every module loaded."""
    everything = {path: parser.format_help() for path, parser in every_parser(build_parser())}
    assert set(_commands(build_parser())) == set(COMMANDS)
    for module in COMMAND_MODULES:
        alone = build_parser((module,))
        assert _commands(alone) == [name for name, owner in COMMANDS.items() if owner == module]
        for path, parser in every_parser(alone):
            if path != "arena":
                assert parser.format_help() == everything[path], path


@pytest.mark.parametrize(("pattern", "what"), INTERNAL, ids=[case[1] for case in INTERNAL])
def test_no_help_text_names_the_code(pattern: re.Pattern[str], what: str) -> None:
    found = [f"{path}: {line.strip()}" for path, text in _texts()
             for line in text.splitlines() if pattern.search(line)]  # fmt: skip
    assert not found, f"{what} in the help:\n" + "\n".join(found)


TYPOS = [
    (["mtach", "a", "b"], "invalid choice: 'mtach' (did you mean match?)"),
    (["bot", "chekc", "d"], "invalid choice: 'chekc' (did you mean check?)"),
    (["match", "a", "b", "--gmaes", "3"], "arguments: --gmaes (did you mean --games?) 3"),
    (["tournament", "run", "t", "a", "b", "--fromat", "swiss"], "(did you mean --format?)"),
    (["bot", "check", "d", "--scenario", "hand_of_fiv"], "(did you mean hand_of_five?)"),
    (["remote", "tournament", "lst"], "invalid choice: 'lst' (did you mean list?)"),
    (["leaderboard", "--min-gams=3"], "arguments: --min-gams=3 (did you mean --min-games?)"),
    (["bot", "zzzz"], "invalid choice: 'zzzz'; choose from add, list, show, check, new"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "message"), TYPOS, ids=[" ".join(t[0][:2]) for t in TYPOS])
def test_a_typo_is_answered_with_the_closest_name(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


MISPLACED = [
    (["--data-dir", "/tmp/d", "demo"],
     "--data-dir goes after the command: arena demo --data-dir /tmp/d"),
    (["--data-dir=/tmp/my dir", "bot", "list"],
     "--data-dir goes after the command: arena bot list '--data-dir=/tmp/my dir'"),
    (["--games", "4", "match", "a", "b"], "arena match a b --games 4"),
    (["--data-dir", "/tmp/d"], "--data-dir is an option of a command, not of arena itself"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "message"), MISPLACED, ids=[" ".join(m[0]) for m in MISPLACED])
def test_an_option_before_the_command_is_answered_with_the_order_that_works(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not "invalid choice: '/tmp/d'", which names the option's value as the command."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "invalid choice" not in err


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["-h"]])
def test_arenas_own_options_still_come_first(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 0


FORMATS = [
    ("round-robin", None),
    ("round_robin", None),  # the stored name, accepted as an alias
    ("swiss", None),
    ("ladder", "a ladder is not played as a tournament: it runs inside the server"),
    ("roundrobin", "'roundrobin' is not a format: choose from round-robin, swiss, gauntlet, sprt"),
]


@pytest.mark.parametrize(("given", "refusal"), FORMATS, ids=[f[0] for f in FORMATS])
def test_format_offers_only_what_it_takes(
    given: str, refusal: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = build_parser(("arena.commands.tournament",))
    if refusal is None:
        args = parser.parse_args(["tournament", "create", "t", "a", "b", "--format", given])
        assert args.format == given.replace("_", "-")
        return
    with pytest.raises(SystemExit):
        parser.parse_args(["tournament", "create", "t", "a", "b", "--format", given])
    assert refusal in capsys.readouterr().err


def test_the_format_choices_shown_are_the_ones_taken(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["tournament", "create", "--help"])
    assert "--format {round-robin,swiss,gauntlet,sprt}" in capsys.readouterr().out


def test_remote_lists_use_the_local_names() -> None:
    """`arena bot list` and `arena tournament list` on the server, `arena remote bot list`
    and `arena remote tournament list` from afar; the plural forms still work, unlisted."""
    parser = build_parser(("arena.commands.remote",))
    for words in (["bot", "list"], ["tournament", "list"], ["bots"], ["tournaments"]):
        assert parser.parse_args(["remote", *words, "--json"]).json
    listed = parser.parse_args(["remote", "bot", "list"]).func
    assert listed is not None
    remote = next(p for path, p in every_parser(parser) if path == "arena remote")
    remote_help = remote.format_help()
    assert re.search(r"^ +tournament\s+the arena's tournaments", remote_help, re.MULTILINE)
    assert not re.search(r"^ +(bots|tournaments) ", remote_help, re.MULTILINE), remote_help
