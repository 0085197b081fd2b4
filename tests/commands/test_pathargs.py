"""arena/commands/pathargs.py: an empty path argument (``"$UNSET"``) is refused by name,
never read as the current directory (where the command would write or read a bot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import arena_in_process

EMPTY = [
    ["export", "--out", ""],
    ["remote", "export", "--out", ""],
    ["play-random", "--seed", "1", "--out", ""],
    ["match", "python_random", "python_random", "--records", ""],
    ["match", "", "python_random"],
    ["bot", "add", ""],
    ["bot", "add", "bot", "--opponent", ""],
    ["bot", "check", ""],
    ["bot", "new", "python", "mine", "--dir", ""],
    ["audit", "--bundle", ""],
    ["remote", "audit", "cup", "--save", ""],
    ["remote", "record", "1", "-o", ""],
    ["remote", "submit", " "],
    ["remote", "login", "grpcs://127.0.0.1:1", "--tls-ca", ""],
    ["serve", "--tls-cert", "", "--tls-key", "key.pem"],
    ["ray-token", "create", ""],
]


@pytest.mark.parametrize("argv", EMPTY, ids=[" ".join(a).replace("  ", " '' ") for a in EMPTY])
def test_an_empty_path_is_refused_naming_it_and_nothing_is_written(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    data = tmp_path / "data"
    status, out, err = arena_in_process(capsys, *argv, "--data-dir", str(data)) \
        if argv[0] in ("export", "match", "bot", "audit", "serve") \
        else arena_in_process(capsys, *argv)  # fmt: skip
    assert (status, out) == (2, ""), err
    assert err.splitlines()[-1].endswith("is empty (an unset variable?): give a path"), err
    assert list(here.iterdir()) == [] and not data.exists()


TOO_LONG = [
    # (command line with {path}, the argument named)
    (["bot", "add", "{path}"], "directory"),
    (["bot", "check", "{path}"], "directory"),
    (["match", "{path}", "python_random"], "BOT"),
    (["replay", "{path}"], "record"),
    (["export", "--out", "{path}"], "--out"),
    (["tournament", "list", "--data-dir", "{path}"], "--data-dir"),
    (["remote", "submit", "{path}"], "DIR"),
]
NAME_300 = "/tmp/" + "a" * 300
PATH_5000 = "/tmp/" + "/".join(["a" * 200] * 25)


@pytest.mark.parametrize(("path", "why"), [
    (NAME_300, "has a name of 300 bytes in it; a file or directory name is at most 255"),
    (PATH_5000, "is 5029 bytes long; a path is at most 4095"),
], ids=["a long name", "a long path"])  # fmt: skip
@pytest.mark.parametrize(("argv", "named"), TOO_LONG, ids=[" ".join(a[:2]) for a, _ in TOO_LONG])
def test_a_path_longer_than_linux_takes_is_refused_saying_which_limit(
    argv: list[str], named: str, path: str, why: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Not a traceback from wherever the command first touches it, nor the path repeated."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("KAHUNA_ARENA_DATA", str(tmp_path / "data"))
    words = [word.format(path=path) for word in argv]
    status, out, err = arena_in_process(capsys, *words)
    assert (status, out) == (2, ""), err
    assert err.splitlines()[-1].endswith(f"argument {named}: {why}"), err
    assert "Traceback" not in err and len(err) < 1_000, err[:300]
