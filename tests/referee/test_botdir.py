"""bot.toml: parsing, validation naming the field, and the content-hash version."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from arena.referee import BotConfigError, load_bot
from arena.referee.botdir import content_hash

GOOD = 'name = "greedy"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'


def _bot(tmp_path: Path, toml: str | None) -> Path:
    directory = tmp_path / "bot"
    directory.mkdir()
    (directory / "bot.py").write_text("print('hi')\n")
    if toml is not None:
        (directory / "bot.toml").write_text(toml)
    return directory


def test_a_good_bot_toml(tmp_path: Path) -> None:
    toml = GOOD + 'description = "greedy bot"\nauthor = "me"\n'
    spec = load_bot(_bot(tmp_path, toml))
    assert (spec.name, spec.command, spec.runtime) == ("greedy", ("python3", "bot.py"), "python")
    assert (spec.description, spec.author) == ("greedy bot", "me")
    assert spec.directory.is_absolute()
    assert len(spec.version) == 16


BAD = [
    ("no bot.toml", None, "no bot.toml"),
    ("not toml", "name = ", "not valid TOML"),
    ("missing name", 'command = ["x"]\nruntime = "native"\n', "missing field 'name'"),
    ("bad name", GOOD.replace('"greedy"', '"../evil"'), "field 'name'"),
    ("long name", GOOD.replace('"greedy"', '"' + "a" * 41 + '"'), "field 'name'"),
    ("name not a string", GOOD.replace('"greedy"', "3"), "field 'name'"),
    ("missing command", 'name = "x"\nruntime = "native"\n', "missing field 'command'"),
    ("command a string", GOOD.replace('["python3", "bot.py"]', '"python3 bot.py"'),
     "field 'command'"),
    ("empty command", GOOD.replace('["python3", "bot.py"]', "[]"), "field 'command'"),
    ("command with a number", GOOD.replace('"bot.py"', "3"), "field 'command'"),
    ("unknown runtime", GOOD.replace('"python"', '"ruby"'), "field 'runtime'"),
    ("missing runtime", 'name = "x"\ncommand = ["x"]\n', "field 'runtime'"),
    ("unknown field", GOOD + "colour = 1\n", "unknown field 'colour'"),
    ("description not text", GOOD + "description = 3\n", "'description'"),
    ("nested arrays", GOOD + "x = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    ("nested tables", GOOD + "x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n",
     "nested too deeply"),
    ("too large", GOOD + "#" * (1024 * 1024) + "\n", "larger than 1048576 bytes"),
    ("200 KB argument", GOOD.replace('"bot.py"', '"bot.py", "' + "a" * 200_000 + '"'),
     "field 'command' argument 2 is 200000 bytes; the limit is 4096"),
    ("65 arguments", GOOD.replace('"bot.py"', '"bot.py"' + ', "x"' * 63),
     "field 'command' has 65 arguments; the limit is 64"),
    ("over 32 KiB in all", GOOD.replace('"bot.py"', '"bot.py"' + (', "' + "a" * 4000 + '"') * 9),
     "field 'command' is 36013 bytes in all; the limit is 32768"),
]


@pytest.mark.parametrize(("toml", "needle"), [case[1:] for case in BAD],
                         ids=[case[0] for case in BAD])
def test_bad_bot_toml_names_file_and_field(tmp_path: Path, toml: str | None, needle: str) -> None:
    directory = _bot(tmp_path, toml)
    with pytest.raises(BotConfigError, match=needle) as caught:
        load_bot(directory)
    assert str(directory) in str(caught.value)


def test_a_bot_toml_not_in_utf8_names_the_file(tmp_path: Path) -> None:
    directory = _bot(tmp_path, None)
    (directory / "bot.toml").write_bytes(GOOD.encode() + b"# \xff\xfe\n")
    with pytest.raises(BotConfigError, match="not valid TOML") as caught:
        load_bot(directory)
    assert str(directory / "bot.toml") in str(caught.value)


def test_a_command_at_the_limits_is_accepted(tmp_path: Path) -> None:
    parts = ["python3", "bot.py", *["a" * 4096] * 7, *["c"] * 54]
    parts.append("b" * (32 * 1024 - sum(map(len, parts))))  # 64 arguments, 32 KiB exactly
    toml = GOOD.replace('["python3", "bot.py"]', "[" + ", ".join(f'"{p}"' for p in parts) + "]")
    spec = load_bot(_bot(tmp_path, toml))
    assert len(spec.command) == 64
    assert sum(len(p) for p in spec.command) == 32 * 1024


def test_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(BotConfigError, match="not a directory"):
        load_bot(tmp_path / "missing")


def test_a_name_longer_than_the_file_system_takes_is_refused_shortened(tmp_path: Path) -> None:
    """The file system's own refusal (ENAMETOOLONG), not a traceback; the path shortened."""
    with pytest.raises(BotConfigError, match=r"\.\.\. \(\d+ characters\): File name too long$"):
        load_bot(tmp_path / ("a" * 5000))


def test_version_changes_with_any_file_and_ignores_bytecode(tmp_path: Path) -> None:
    directory = _bot(tmp_path, GOOD)
    before = content_hash(directory)
    (directory / "__pycache__").mkdir()
    (directory / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"\0")
    assert content_hash(directory) == before
    (directory / "node_modules").mkdir()
    (directory / "node_modules" / "lib.js").write_text("x")
    with_dependency = content_hash(directory)
    assert with_dependency != before
    (directory / "bot.py").write_text("print('bye')\n")
    assert content_hash(directory) != with_dependency


def test_version_depends_on_content_not_location(tmp_path: Path) -> None:
    first = _bot(tmp_path, GOOD)
    second = tmp_path / "copy"
    second.mkdir()
    for path in first.iterdir():
        (second / path.name).write_bytes(path.read_bytes())
    assert content_hash(first) == content_hash(second)


def _whole_file_hash(directory: Path) -> str:
    """The version as first defined (each file read whole), which stored versions came from."""
    digest = hashlib.sha256()
    for path in sorted(
        (p for p in directory.rglob("*") if p.is_symlink() or p.is_file()),
        key=lambda p: p.relative_to(directory).as_posix(),
    ):
        relative = path.relative_to(directory).as_posix()
        data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
        digest.update(relative.encode() + b"\0" + str(len(data)).encode() + b"\0")
        digest.update(data)
    return digest.hexdigest()[:16]


def test_hashing_in_chunks_gives_the_versions_already_stored(tmp_path: Path) -> None:
    directory = tmp_path / "bot"
    (directory / "data").mkdir(parents=True)
    (directory / "bot.py").write_text("print('hi')\n")
    (directory / "empty").write_bytes(b"")
    (directory / "data" / "weights.bin").write_bytes(bytes(range(256)) * 10_000)  # 2.5 MB
    (directory / "link").symlink_to("bot.py")
    assert content_hash(directory) == _whole_file_hash(directory)


UNREADABLE = [
    # (case, what is made unreadable, the path the error names)
    ("a file", "weights.bin", "weights.bin"),
    ("a folder", "data", "data"),
    ("nothing (control)", None, None),
]


@pytest.mark.slow
@pytest.mark.parametrize(("made", "named"), [case[1:] for case in UNREADABLE],
                         ids=[case[0] for case in UNREADABLE])  # fmt: skip
def test_a_bot_with_something_unreadable_is_refused_naming_it(
    tmp_path: Path, made: str | None, named: str | None
) -> None:
    """Read by a real process without the capabilities that let root read anything."""
    import shutil
    import subprocess
    import sys

    directory = _bot(tmp_path, GOOD)
    (directory / "weights.bin").write_bytes(b"\0" * 10)
    (directory / "data").mkdir()
    (directory / "data" / "x.txt").write_text("x\n")
    if made is not None:
        (directory / made).chmod(0)
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root reads any file, and setpriv is missing to drop that")
        prefix = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]
    script = (
        "import sys\nfrom arena.referee import BotConfigError, load_bot\n"
        "try:\n    print(load_bot(sys.argv[1]).name)\n"
        "except BotConfigError as error:\n    print('refused:', error)\n"
    )
    done = subprocess.run([*prefix, sys.executable, "-c", script, str(directory)],
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    (directory / (made or ".")).chmod(0o755)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    if named is None:
        assert done.stdout == "greedy\n"
    else:
        assert done.stdout == f"refused: {directory / named}: cannot be read: Permission denied\n"
