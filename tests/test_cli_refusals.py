"""What every `arena` command does with a command line it cannot take: what scripts rely on.

A refusal is one line on standard error that names the argument and the problem,
nothing on standard output (a script pipes it), no traceback, and a status: 2
for what the user gave (argparse's own refusals, a value out of range, a name
no bot, user or tournament may have, bytes that are not UTF-8 where text goes),
the status the command's help documents for what it found (1 for a local
command: no such bot, a data directory that is not one). Every option with a
typed value of every command is fed a word and an empty string; every value
that is text, not a path, bytes that are not UTF-8; and the table below holds
each command's own checks. A command refused once its store is open leaves no data
directory it made, and one that was there as it was. All in this process: only the
rows marked slow hold a port or play a smoke match.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.cli import build_parser
from arena.commands.pathargs import ANY_BYTES, passed_on
from arena.store import Store
from tests.cli import arena_in_process
from tests.parsers import every_parser

NOT_UTF8 = "bot\udcffname"
"""``bot\\xffname`` as Python holds a command-line word that is not UTF-8."""


@pytest.fixture(autouse=True)
def _private_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that took a value it should have refused writes here, not in the
    user's data directory or saved login."""
    monkeypatch.setenv("KAHUNA_ARENA_DATA", str(tmp_path / "default-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def _refused(
    capsys: pytest.CaptureFixture[str], argv: list[str], status: int, *said: str
) -> str:
    """Run ``argv``; it must exit ``status`` with one line on stderr holding ``said``,
    nothing on stdout. The line."""
    code, out, err = arena_in_process(capsys, *argv)
    assert "Traceback" not in err, err
    assert (code, out) == (status, ""), (argv, code, out, err)
    lines = err.splitlines()
    assert len(lines) == 1, err
    for words in said:
        assert words in lines[0], lines[0]
    return lines[0]


def _words(path: str) -> list[str]:
    return path.split()[1:]


def _valued(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    """The options of ``parser`` that take a value, and its first positional."""
    positionals = [a for a in parser._actions if not a.option_strings]
    for action in parser._actions:
        if isinstance(action, (argparse._SubParsersAction, argparse._HelpAction)):
            continue
        if action.nargs == 0 or (not action.option_strings and action is not positionals[0]):
            continue
        yield action


def _typed_options() -> Iterator[tuple[str, str, str]]:
    """Each typed option with the values it must refuse: a word (where it is no path)
    and an empty string."""
    for path, parser in every_parser(build_parser()):
        for action in _valued(parser):
            if action.option_strings and action.type is not None and action.choices is None:
                if action.type is passed_on:
                    continue  # handed on as it is, "" too
                for value in ([""] if action.type in ANY_BYTES else ["x y", ""]):
                    yield path, action.option_strings[-1], value


def _text_values() -> Iterator[tuple[str, str | None, str]]:
    for path, parser in every_parser(build_parser()):
        for action in _valued(parser):
            if action.type not in ANY_BYTES:
                flag = action.option_strings[-1] if action.option_strings else None
                yield path, flag, flag or action.metavar or action.dest  # type: ignore[misc]


TYPED = list(_typed_options())
TEXT = list(_text_values())


@pytest.mark.parametrize(("path", "flag", "value"), TYPED,
                         ids=[f"{p} {f} {v!r}" for p, f, v in TYPED])  # fmt: skip
def test_a_typed_option_refuses_a_word_and_nothing_in_one_line(
    capsys: pytest.CaptureFixture[str], path: str, flag: str, value: str
) -> None:
    """`--games "x y"`, `--port ""`: exit 2, the option named, the usage left to --help."""
    line = _refused(capsys, [*_words(path), flag, value], 2, "argument ", flag)
    assert line.startswith(f"{path}: error: argument "), line


@pytest.mark.parametrize(
    ("path", "flag", "named"), TEXT, ids=[f"{p} {n}" for p, _, n in TEXT]
)  # fmt: skip
def test_text_that_is_not_utf8_is_refused_naming_the_argument(
    capsys: pytest.CaptureFixture[str], path: str, flag: str | None, named: str
) -> None:
    """A name, an address or a number with a byte that is not UTF-8 (a file name pasted
    from another system) cannot be stored or matched: refused, not a traceback."""
    argv = [*_words(path), *([flag] if flag else []), NOT_UTF8]
    _refused(capsys, argv, 2, f"argument {named}", "byte 0xff (at character 4) is not UTF-8")


def test_the_sweeps_reach_every_kind_of_value() -> None:
    """The walks above see the commands' typed options, names and paths (left alone)."""
    assert ("arena tournament create", "--games", "x y") in TYPED
    assert ("arena serve", "--port", "") in TYPED
    assert ("arena export", "--out", "") in TYPED
    assert ("arena bot show", None, "name") in TEXT
    assert ("arena remote login", None, "url") in TEXT
    assert not [t for t in TEXT if t[1] in ("--data-dir", "--out", "--dir", "--cache")]
    assert not [t for t in TEXT if t[0] == "arena remote play" and t[2] == "-- COMMAND..."]


BAD_NAME = "a bad name"

CASES: list[tuple[str, list[str], int, str]] = [
    # (id, argv ({data}: a store, {file}: a file), exit status, what the line says)
    ("no command", [], 2, "arena: error: the following arguments are required: COMMAND"),
    ("missing args", ["tournament", "create"], 2,
     "arena tournament create: error: the following arguments are required: name, BOT"),
    ("missing bot", ["match", "a"], 2, "required: BOT"),
    ("unknown option", ["leaderboard", "--bogus"], 2, "unrecognized arguments: --bogus"),
    ("bot new no name", ["bot", "new", "python"], 2, "bot new needs LANG and NAME"),
    ("bot new bad name", ["bot", "new", "python", BAD_NAME, "--dir", "{data}/x"], 2,
     "bot name 'a bad name' must be 1-40 letters"),
    ("bot new no kit", ["bot", "new", "cobol", "x", "--dir", "{data}/x"], 2,
     "no starter kit for language 'cobol'"),
    ("bot new exists", ["bot", "new", "python", "x", "--dir", "{data}"], 2, "already exists"),
    ("bot new on a file", ["bot", "new", "python", "x", "--dir", "{file}"], 2, "already exists"),
    ("token user", ["token", "create", BAD_NAME, "--data-dir", "{data}"], 2,
     "argument user: user name 'a bad name': use 1-40 letters"),
    ("negative duration", ["token", "create", "bob", "--expires-in", "-1d", "--data-dir",
                           "{data}"], 2, "argument --expires-in: '-1d' is not a duration"),
    ("long duration", ["token", "create", "bob", "--expires-in", "9999999d", "--data-dir",
                       "{data}"], 2, "9999999d is longer than a token may live, 3650 days"),
    ("limits huge", ["limits", "set", "bots", "9" * 30, "--data-dir", "{data}"], 2,
     "limit bots must be at most 9223372036854775807"),
    ("limits user", ["limits", "set", "bots", "3", "--user", BAD_NAME, "--data-dir", "{data}"],
     2, "argument --user: user name"),
    ("limits negative", ["limits", "set", "bots", "-1", "--data-dir", "{data}"], 2,
     "limit bots must be a whole number, 0 or more, got -1"),
    ("owner", ["bot", "add", "{data}", "--owner", BAD_NAME, "--data-dir", "{data}"], 2,
     "argument --owner: user name"),
    ("tournament name", ["tournament", "create", BAD_NAME, "a", "b", "--data-dir", "{data}"],
     2, "tournament name 'a bad name': use 1-60 letters"),
    ("tournament games 0", ["tournament", "create", "t", "a", "b", "--games", "0",
                            "--data-dir", "{data}"], 2, "from 1 to 100, got 0"),
    ("tournament seed huge", ["tournament", "create", "t", "a", "b", "--seed", "9" * 30,
                              "--data-dir", "{data}"], 2, "seed must be a whole number"),
    ("match games -1", ["match", "a", "b", "--games", "-1"], 2, "argument --games"),
    ("match seed -1", ["match", "a", "b", "--seed", "-1"], 2,
     "argument --seed: must be between 0 and 9223372036854775807, got -1"),
    ("play-random seed -1", ["play-random", "--seed", "-1"], 2,
     "argument --seed: must be between 0 and 9223372036854775807, got -1"),
    ("play-random seed huge", ["play-random", "--seed", "9" * 30], 2,
     f"argument --seed: must be between 0 and 9223372036854775807, got {'9' * 30}"),
    ("demo games 0", ["demo", "--games", "0", "--data-dir", "{data}"], 2, "--games"),
    ("serve port", ["serve", "--port", "70000", "--data-dir", "{data}"], 2, "--port"),
    ("ray-head port", ["ray-head", "--port", "70000", "--dry-run"], 2,
     "--port must be a port from 1024 to 65535, got 70000"),
    ("ray-head cpus", ["ray-head", "--num-cpus", "-1", "--dry-run"], 2, "--num-cpus"),
    ("ray-worker address", ["ray-worker", "nohost", "--dry-run"], 2, "ADDRESS 'nohost'"),
    ("ray-worker slots", ["ray-worker", "127.0.0.1:6379", "--slots", "0", "--dry-run"], 2,
     "--slots must be at least 1, got 0"),
    ("stats", ["stats", "--pentanomial", "1,2,3"], 2, "--pentanomial"),
    ("remote games 0", ["remote", "tournament", "create", "t", "a", "b", "--games", "0"], 2,
     "--games must be at least 1, got 0"),
    ("remote max-pairs 0", ["remote", "tournament", "create", "t", "a", "b", "--format", "sprt",
                            "--max-pairs", "0"], 2, "--max-pairs must be at least 1, got 0"),
    ("remote record 0", ["remote", "record", "0"], 2, "GAME_ID must be a positive game id"),
    ("remote login url", ["remote", "login", "notaurl"], 2, "URL 'notaurl'"),
    ("remote no login", ["remote", "bots"], 2, "not logged in"),
    ("no such bot", ["bot", "show", "nobody", "--data-dir", "{data}"], 1, "no bot 'nobody'"),
    ("no tournament", ["tournament", "status", "t", "--data-dir", "{data}"], 1,
     "no tournament 't'"),
    ("data dir a file", ["tournament", "list", "--data-dir", "{file}"], 1, "not a directory"),
    ("data dir missing", ["leaderboard", "--data-dir", "{data}/none"], 1,
     "no arena data directory at"),
    ("limits clear no store", ["limits", "clear", "bots", "--data-dir", "{data}/none"], 1,
     "no arena data directory at"),
    ("data dir empty", ["bot", "list", "--data-dir", ""], 2, "argument --data-dir: is empty"),
    ("replay no file", ["replay", "{data}/none"], 1, "cannot read "),
    ("a path's newline", ["replay", "/nowhere/x\ny\x1b[31m"], 1,
     "cannot read /nowhere/x\\u000ay\\u001b[31m: No such file"),
    ("a data dir's escape", ["tournament", "list", "--data-dir", "/nowhere/\x1b]0;title\x07"],
     1, "no arena data directory at /nowhere/\\u001b]0;title\\u0007 "),
    ("replay a directory", ["replay", "{data}"], 1, "Is a directory"),
    ("replay not JSON", ["replay", "{file}"], 1, "malformed record: not JSON"),
    ("bot check a file", ["bot", "check", "{file}", "--data-dir", "{data}"], 2,
     "not a directory"),
    ("audit a directory", ["audit", "--bundle", "{data}", "--data-dir", "{data}"], 2,
     "Is a directory"),
    ("backup over a file", ["backup", "{file}", "--data-dir", "{data}"], 1,
     "backup refused: backup destination"),
    ("restore no backup", ["restore", "{data}/none", "--data-dir", "{data}/new"], 1,
     "is not an arena backup"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "status", "said"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_each_refusal_is_one_line_and_its_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], status: int,
    said: str,
) -> None:  # fmt: skip
    data = tmp_path / "data"
    Store.open(data).close()
    (tmp_path / "file").write_text("not a record\n")
    stored = sorted(data.rglob("*"))
    words = [w.format(data=data, file=tmp_path / "file") for w in argv]
    _refused(capsys, words, status, said)
    assert sorted(data.rglob("*")) == stored, "a refused command left something behind"


NO_DATA: list[tuple[str, list[str], int, str]] = [
    # (id, argv ({none}: a path that does not exist, {bot}: a sample bot), status, the line)
    ("demo seed", ["demo", "--seed", "-1"], 2,
     "seed must be a whole number from 0 to 2147483647, got -1"),
    ("demo games", ["demo", "--games", "0"], 2, "--games must be at least 1, got 0"),
    ("demo concurrency", ["demo", "--concurrency", "0"], 2,
     "--concurrency must be from 1 to 1024, got 0"),
    ("create seed", ["tournament", "create", "t", "a", "b", "--seed", "-1"], 2,
     "seed must be a whole number from 0 to 2147483647, got -1"),
    ("create games", ["tournament", "create", "t", "a", "b", "--games", "0"], 2,
     "games_per_match must be a whole number from 1 to 100, got 0"),
    ("create name", ["tournament", "create", BAD_NAME, "a", "b"], 2,
     "tournament name 'a bad name': use 1-60 letters"),
    ("create one bot", ["tournament", "create", "t", "a"], 2,
     "a tournament needs at least two bots after its name"),
    ("create sprt bounds", ["tournament", "create", "t", "a", "b", "--format", "sprt"], 2,
     "an sprt test needs elo0 and elo1"),
    ("create sprt flag", ["tournament", "create", "t", "a", "b", "--elo0", "1"], 2,
     "--elo0 is for sprt tests only"),
    ("create gauntlet odd", ["tournament", "create", "t", "a", "b", "--format", "gauntlet",
                             "--games", "3"], 2, "an even number of games per match, got 3"),
    ("run games", ["tournament", "run", "t", "a", "b", "--games", "0"], 2,
     "games_per_match must be a whole number from 1 to 100, got 0"),
    ("run concurrency", ["tournament", "run", "t", "a", "b", "--concurrency", "0"], 2,
     "--concurrency must be from 1 to 1024, got 0"),
    ("run ray cpus", ["tournament", "run", "t", "a", "b", "--ray-match-cpus", "0"], 2,
     "--ray-match-cpus must be more than 0 and finite, got 0"),
    ("resume concurrency", ["tournament", "resume", "t", "--concurrency", "0"], 2,
     "--concurrency must be from 1 to 1024, got 0"),
    ("limits negative", ["limits", "set", "bots", "-1"], 2,
     "limit bots must be a whole number, 0 or more, got -1"),
    ("limits rated_play", ["limits", "set", "rated_play", "2"], 2,
     "limit rated_play must be 0 (off) or 1 (on), got 2"),
    ("limits checks_total 0", ["limits", "set", "checks_total", "0"], 2,
     "limit checks_total must be at least 1"),
    ("limits server's for a user", ["limits", "set", "checks_total", "3", "--user", "bob"], 2,
     "limit checks_total is the whole server's: set it for everyone"),
    ("limits clear server's", ["limits", "clear", "check_queue", "--user", "bob"], 2,
     "limit check_queue is the whole server's: set it for everyone"),
    ("serve port", ["serve", "--port", "-5"], 2,
     "--port must be a port number from 0 to 65535, got -5"),
    ("serve web port", ["serve", "--web-port", "70000"], 2,
     "--web-port must be a port number from 0 to 65535, got 70000"),
    ("serve concurrency", ["serve", "--concurrency", "0"], 2,
     "--concurrency must be from 1 to 1024, got 0"),
    ("serve check threads", ["serve", "--limit-checks-total", "250",
                             "--limit-check-queue", "10"], 2,
     "checks_total + check_queue must be at most 256, got 260"),
    ("serve tls half", ["serve", "--tls-cert", "{none}"], 2,
     "--tls-cert needs --tls-key: give both PEM files, or neither"),
    ("serve tls missing", ["serve", "--tls-cert", "{none}", "--tls-key", "{none}"], 2,
     "{none}"),
    ("serve ray cpus", ["serve", "--ray-match-cpus", "nan"], 2,
     "--ray-match-cpus must be more than 0 and finite, got nan"),
    ("serve ladder games", ["serve", "--port", "0", "--ladder",
                            "--ladder-games-per-match", "3"], 2,
     "games_per_match must be even on a ladder (each deal from both seats), got 3"),
    ("serve ladder name", ["serve", "--port", "0", "--ladder", "--ladder-name", BAD_NAME], 2,
     "--ladder-name 'a bad name': use 1-60 letters"),
    ("serve ladder repeat", ["serve", "--port", "0", "--ladder", "--ladder-max-repeat", "0"],
     2, "max_repeat must be a whole number from 1 to"),
    ("bot add no directory", ["bot", "add", "{none}"], 1, "{none}: not a directory"),
    ("bot add no opponent", ["bot", "add", "{bot}", "--opponent", "{none}"], 1,
     "{none}: not a directory"),
    ("export delay", ["export", "--out", "{none}", "--spectator-delay-s", "-1"], 2,
     "--spectator-delay-s: the spectator delay must be 0 or more seconds"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "status", "said"), [c[1:] for c in NO_DATA],
                         ids=[c[0] for c in NO_DATA])  # fmt: skip
def test_a_refused_command_line_leaves_no_data_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], status: int,
    said: str,
) -> None:  # fmt: skip
    """Flags a command refuses are refused before its store is opened (`bot add`'s
    directories once it is open, what the open made then taken away): a data directory
    that did not exist still does not (no empty store for `--data-dir` to take as one),
    and the flag is named whether or not the directory exists."""
    data, none = tmp_path / "data", tmp_path / "none"
    fill = {"none": none, "bot": SAMPLE_RANDOM_BOT}
    words = [w.format(**fill) for w in argv]
    _refused(capsys, [*words, "--data-dir", str(data)], status, said.format(**fill))
    assert not data.exists(), "a refused command created its data directory"
    assert not none.exists()


@contextlib.contextmanager
def _taken_port() -> Iterator[int]:
    """A port of 127.0.0.1 held listening meanwhile."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def _crasher(tmp_path: Path) -> Path:
    """A bot that exits before its Hello: `bot add`'s checks refuse it."""
    import shutil

    target = tmp_path / "src" / "crasher"
    shutil.copytree(SAMPLE_RANDOM_BOT, target, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (target / "bot.toml").read_text()
    (target / "bot.toml").write_text(toml.replace('name = "python_random"', 'name = "crasher"'))
    (target / "bot.py").write_text("import sys\nsys.exit('cannot load weights.bin')\n")
    return target


UNSTORED = "no bot 'bot-a' in the store (add it with `arena bot add`)"
AFTER_OPEN = [
    # (argv ({port}: a port in use, {crasher}: a bot that crashes), status, the last line):
    # each is refused only once the store is open, from what it holds or what happened
    pytest.param(["tournament", "create", "t", "bot-a", "bot-b"], 1, UNSTORED, id="create"),
    pytest.param(["tournament", "run", "t", "bot-a", "bot-b"], 1, UNSTORED, id="run"),
    pytest.param(["limits", "set", "checks_total", "300"], 2,
                 "checks_total + check_queue must be at most 256, got 308", id="limits"),
    pytest.param(["serve", "--port", "{port}"], 1,
                 "cannot listen on 127.0.0.1:{port}: Address already in use",
                 id="serve port taken", marks=pytest.mark.slow),
    pytest.param(["serve", "--port", "0", "--web-port", "{port}"], 1,
                 "cannot serve the web pages on 127.0.0.1:{port}: [Errno 98] Address already"
                 " in use", id="serve web port taken", marks=pytest.mark.slow),
    pytest.param(["bot", "add", "{crasher}"], 1,
                 "refused crasher: conformance check failed: hello: crash before its Hello",
                 id="bot add crashes", marks=pytest.mark.slow),
]  # fmt: skip


def _refused_after_open(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], data: Path,
    status: int, said: str,
) -> None:  # fmt: skip
    """Run ``argv`` on ``data``: it exits ``status`` with ``said`` as its last line on
    standard error, its one refusal (`bot add` says its progress there before)."""
    with contextlib.ExitStack() as held:
        port = held.enter_context(_taken_port()) if "{port}" in argv else 0
        fill = {"port": port, "crasher": _crasher(tmp_path) if "{crasher}" in argv else ""}
        words = [word.format(**fill) for word in argv]
        code, out, err = arena_in_process(capsys, *words, "--data-dir", str(data))
    assert "Traceback" not in err, err
    assert (code, out) == (status, ""), (code, out, err)
    refusals = [line for line in err.splitlines() if line.startswith("arena: ")]
    assert len(refusals) == 1 and refusals[0].startswith("arena: " + said.format(**fill)), err
    assert err.splitlines()[-1] == refusals[0], err


@pytest.mark.parametrize(("argv", "status", "said"), AFTER_OPEN)
def test_a_command_refused_after_its_open_leaves_no_data_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], status: int,
    said: str,
) -> None:  # fmt: skip
    """A data directory this command created (its parents too) is gone once it is refused
    with nothing stored: a mistyped --data-dir is no store for the next command to take."""
    typo = tmp_path / "typo"
    _refused_after_open(capsys, tmp_path, argv, typo / "data", status, said)
    assert not typo.exists(), sorted(typo.rglob("*"))
    code, _, err = arena_in_process(capsys, "bot", "list", "--data-dir", str(typo / "data"))
    assert code == 1 and "no arena data directory at" in err, err


def _with_a_bot(data: Path) -> None:
    from arena.referee import load_bot
    from arena.store import add_bot_version

    with Store.open(data) as store:
        add_bot_version(store, load_bot(SAMPLE_RANDOM_BOT))


def _as_it_is(data: Path) -> list[tuple[str, int]]:
    """Each path under ``data`` (``data`` too) with its mode."""
    return [(str(p.relative_to(data)), p.stat().st_mode) for p in sorted([data, *data.rglob("*")])]


@pytest.mark.parametrize("kind", ["empty", "a store with a bot"])
@pytest.mark.parametrize(("argv", "status", "said"), AFTER_OPEN)
def test_a_refused_command_leaves_an_existing_data_directory_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], status: int,
    said: str, kind: str,
) -> None:  # fmt: skip
    """Only what the command made goes: a directory that was there stays, with its mode (the
    open makes it 0700) and what it held; a store stays with every row."""
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    (data / "notes.txt").write_text("mine\n")
    if kind != "empty":
        _with_a_bot(data)
    before = _as_it_is(data)
    _refused_after_open(capsys, tmp_path, argv, data, status, said)
    assert _as_it_is(data) == before
    if kind != "empty":
        code, out, _ = arena_in_process(capsys, "bot", "list", "--json", "--data-dir", str(data))
        assert code == 0 and '"python_random"' in out, out
