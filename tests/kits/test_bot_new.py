"""`arena bot new LANG NAME` and `arena bot new --list`.

Every kit of this checkout is copied under a new name: the name is set in
bot.toml and everywhere else the kit's name appeared, nothing the kit's
build makes is copied, and the copy is a valid, world-readable bot. The
Python kit's copy plays a sandboxed match as it is; the C++ and TypeScript
copies are built and played by tests/kits/test_readme_cpp_ts.py (the
README's own commands). A kit missing from the installation, an unknown
language, a bad name and an existing directory are refused, saying which.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from arena.cli import main
from arena.commands import kits
from arena.commands.kits import KITS, KitError, new_bot
from arena.referee import BotStatus, MatchConfig, load_bot, run_match
from arena.resources import sample_bots_dir

PRESENT = [kit for kit in KITS if (sample_bots_dir() / kit.directory / "bot.toml").is_file()]
LANGUAGES = {"python", "javascript", "go", "rust", "java", "cpp", "typescript"}


def test_the_table_names_all_seven_languages() -> None:
    assert {kit.language for kit in KITS} == LANGUAGES
    assert {"python", "javascript", "cpp", "typescript"} <= {kit.language for kit in PRESENT}


@pytest.mark.parametrize("kit", PRESENT, ids=lambda kit: kit.language)
def test_a_copy_carries_its_new_name_everywhere(kit: kits.Kit, tmp_path: Path) -> None:
    created = new_bot(kit.language, "My-Bot.2", tmp_path / "mine")
    spec = load_bot(created)
    assert spec.name == "My-Bot.2"
    source = load_bot(sample_bots_dir() / kit.directory)
    assert (spec.runtime, spec.command) == (source.runtime, source.command)
    for path in created.rglob("*"):
        assert path.name not in kits.BUILD_OUTPUTS, path
        if path.is_file() and path.suffix in kits.TEXT_SUFFIXES:
            text = path.read_text(encoding="utf-8")
            assert kit.directory not in text, path
            assert "sample_bots/My-Bot.2" not in text, path  # the README's paths: the copy's
    kit_readme = sample_bots_dir() / kit.directory / "README.md"
    if kit_readme.is_file() and f"sample_bots/{kit.directory}/build.sh" in kit_readme.read_text():
        assert f"{created}/build.sh" in (created / "README.md").read_text(encoding="utf-8")
        mode = path.stat().st_mode
        assert mode & stat.S_IROTH, path
        if path.is_dir():
            assert mode & stat.S_IXOTH, path
    if spec.runtime == "native":  # the binary is the build's: never copied
        assert not (created / spec.command[0]).exists()
    if spec.runtime == "java":  # nor the jar and its native libraries
        assert not (created / "bot.jar").exists() and not (created / "native").exists()


@pytest.mark.parametrize(
    ("runtime", "command", "built"),
    [
        ("native", '["./bot"]', ["bot"]),
        ("java", '["java", "-Xshare:auto", "-jar", "bot.jar"]', ["bot.jar", "native/x.so"]),
    ],
    ids=["native", "java"],
)
def test_generated_code_and_build_outputs_are_left_out(
    tmp_path: Path, runtime: str, command: str, built: list[str]
) -> None:
    kit_dir = tmp_path / "sample_bots" / "cpp_random"
    (kit_dir / "src" / "gen").mkdir(parents=True)
    (kit_dir / "src" / "gen" / "x.ts").write_text("generated")
    (kit_dir / "node_modules" / "p").mkdir(parents=True)
    for name in built:
        (kit_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (kit_dir / name).write_bytes(b"\x7fELF")
    (kit_dir / "bot.cc").write_text('run("cpp_random");\n')
    (kit_dir / "bot.toml").write_text(
        f'name = "cpp_random"\ncommand = {command}\nruntime = "{runtime}"\n'
    )
    kits.copy_sources(kit_dir, tmp_path / "copy")
    copied = sorted(
        p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*")
    )
    assert copied == ["bot.cc", "bot.toml", "src"]


@pytest.mark.slow
def test_the_python_copy_plays_a_sandboxed_match(tmp_path: Path) -> None:
    created = new_bot("py", "fresh_python", tmp_path / "fresh_python")
    report = run_match(MatchConfig(games=2, seed=3), load_bot(created),
                       load_bot(sample_bots_dir() / "python_random"))  # fmt: skip
    for game in report.games:
        assert dict(game.statuses) == {"fresh_python": BotStatus.OK, "python_random": BotStatus.OK}


@pytest.mark.parametrize(
    ("language", "name", "message"),
    [
        ("cobol", "x", "no starter kit for language 'cobol'; the kits are: python,"),
        ("rsut", "x", "no starter kit for language 'rsut' (did you mean rust?); the kits are"),
        ("cpp", "bad name", "bot name 'bad name' must be 1-40 letters"),
        ("cpp", "-x", "bot name '-x' must be 1-40 letters"),
    ],
)  # fmt: skip
def test_bad_requests_are_refused_naming_the_problem(
    tmp_path: Path, language: str, name: str, message: str
) -> None:
    with pytest.raises(KitError, match=None) as error:
        new_bot(language, name, tmp_path / "out")
    assert message in str(error.value)
    assert not (tmp_path / "out").exists()


def test_an_existing_directory_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(KitError, match="already exists"):
        new_bot("python", "taken", tmp_path / "taken")


def test_a_kit_missing_from_the_installation_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(kits, "sample_bots_dir", lambda: tmp_path)
    assert main(["bot", "new", "go", "gopher", "--dir", str(tmp_path / "gopher")]) == 1
    err = capsys.readouterr().err
    assert "the go starter kit is not in this installation" in err
    assert str(tmp_path / "go_random" / "bot.toml") in err
    assert main(["bot", "new", "--list"]) == 0
    listing = capsys.readouterr().out
    assert listing.count("(not installed)") == len(KITS)


def test_the_list_shows_every_language_and_each_kit_present(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bot", "new", "--list"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert len(rows) == len(KITS)
    for kit, row in zip(KITS, rows, strict=True):
        assert row.startswith(kit.language) and kit.directory in row
        installed = kit in PRESENT
        assert ("(not installed)" not in row) == installed, row


def test_the_command_creates_the_bot_and_says_how_to_build_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["bot", "new", "cpp", "my_cpp"]) == 0
    out = capsys.readouterr().out
    assert load_bot(tmp_path / "my_cpp").name == "my_cpp"
    assert "my_cpp/build.sh" in out and "arena bot check my_cpp" in out
    assert "arena match my_cpp python_random" in out  # a sample bot, by its name
    assert main(["bot", "new", "cpp"]) == 2
    assert "bot new needs LANG and NAME" in capsys.readouterr().err


@pytest.mark.parametrize("language", ["javascript", "python"])
def test_the_commands_it_prints_work_pasted_into_a_shell_whatever_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    language: str,
) -> None:  # fmt: skip
    import shlex

    monkeypatch.chdir(tmp_path)
    assert main(["bot", "new", language, "mine", "--dir", "my bots/it's mine"]) == 0
    said = dict(line.split(":  ", 1) for line in capsys.readouterr().out.splitlines()[1:])
    created = tmp_path / "my bots" / "it's mine"
    if language == "javascript":
        assert shlex.split(said["build it"]) == ["my bots/it's mine/build.sh"]
        assert (created / "build.sh").is_file()
    assert shlex.split(said["check it"]) == ["arena", "bot", "check", "my bots/it's mine"]
    assert shlex.split(said["play it"])[:3] == ["arena", "match", "my bots/it's mine"]
    assert load_bot(created).name == "mine"


DISKS = [
    # (case, tmpfs options, fill it first, the error; None: the copy is made)
    ("full disk", "size=256k", True, "cannot copy the java kit to {dest}: No space left on device"),
    ("read-only", "size=1m,ro", False, "cannot copy the java kit to {dest}: Read-only file system"),
    ("control: room", "size=16m", False, None),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("options", "fill", "error"), [case[1:] for case in DISKS],
                         ids=[case[0] for case in DISKS])  # fmt: skip
def test_a_copy_that_cannot_be_written_is_one_line_and_leaves_nothing(
    tmp_path: Path, options: str, fill: bool, error: str | None
) -> None:
    """One line, not a line per file of shutil's error, and no half copy left to block a
    retry."""
    import subprocess

    root = tmp_path / "disk"
    root.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(root)],
                             capture_output=True, text=True, check=False)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        if fill:
            with open(root / "filler", "wb", buffering=0) as filler, pytest.raises(OSError):
                while True:
                    filler.write(b"\0" * 4096)
        destination = root / "mine"
        if error is None:
            assert load_bot(new_bot("java", "mine", destination)).name == "mine"
            return
        with pytest.raises(KitError) as refused:
            new_bot("java", "mine", destination)
        assert str(refused.value) == error.format(dest=destination)
        assert not destination.exists()
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False)
