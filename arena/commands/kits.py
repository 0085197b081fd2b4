"""`arena bot new LANG NAME`: start a bot from a starter kit."""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from arena.commands.pathargs import given_path
from arena.commands.storeargs import EXIT_BAD_FLAGS, fail
from arena.quoting import quoted
from arena.referee import BotConfigError, load_bot
from arena.referee.botdir import NAME_PATTERN
from arena.resources import sample_bots_dir

DESCRIPTION = """\
`arena bot new LANG NAME`: start a bot from a starter kit.

A starter kit is a sample bot (sample_bots/DIR/) that plays a random legal
action in one language. `bot new` copies it into a new directory, leaving out
what its build makes (node_modules, compiled output, a native bot's binary),
and gives it the new name: in bot.toml and everywhere else the kit's name
appears in its text files (the name the bot says in Hello, its README). The
project files keep their fixed package names, so any bot name builds. The
copy is ready to build (its ./build.sh, for every kit but Python's) and to
play: `arena bot check NAME`, `arena match NAME python_random`.

--list shows the languages, with the kits this installation holds (a kit
whose directory is missing is listed as such, and asking for it is an error
that says so).

Exit status 0 when the bot is made; 2 for what was asked (LANG or NAME missing,
a language without a kit, a bad name, a directory that exists); 1 when the kit
is not installed or the copy failed (nothing of it is left).
"""


@dataclass(frozen=True, slots=True)
class Kit:
    language: str
    directory: str  # under sample_bots/
    aliases: tuple[str, ...] = ()


KITS: tuple[Kit, ...] = (
    Kit("python", "python_random", ("py",)),
    Kit("javascript", "js_random", ("js", "node")),
    Kit("typescript", "ts_random", ("ts",)),
    Kit("go", "go_random", ("golang",)),
    Kit("rust", "rust_random", ("rs",)),
    Kit("java", "java_random"),
    Kit("cpp", "cpp_random", ("c++", "cxx")),
)

BUILD_OUTPUTS = frozenset({"node_modules", "__pycache__", "dist", "target", "build", ".gradle"})
"""Directories a kit's build or run makes; never copied (``src/gen`` neither)."""
GENERATED = ("src/gen",)
TEXT_SUFFIXES = frozenset({
    ".toml", ".md", ".py", ".js", ".ts", ".json", ".go", ".mod", ".rs", ".java", ".xml",
    ".cc", ".cpp", ".h", ".hpp", ".sh", ".txt", ".gradle", ".kts",
})  # fmt: skip
"""Files whose text is searched for the kit's name (``.proto`` files are the contract: never)."""


class KitError(ValueError):
    """A kit that cannot be copied; the message says why. ``status``: the command's exit
    status, 2 for what the user gave (a language, a name, a directory), 1 otherwise."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def find_kit(language: str) -> Kit:
    wanted = language.lower()
    for kit in KITS:
        if wanted == kit.language or wanted in kit.aliases:
            return kit
    names = ", ".join(kit.language for kit in KITS)
    known = [name for kit in KITS for name in (kit.language, *kit.aliases)]
    close = difflib.get_close_matches(wanted, known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise KitError(
        f"no starter kit for language {language!r}{hint}; the kits are: {names}", EXIT_BAD_FLAGS
    )


def kit_path(kit: Kit) -> Path:
    path = sample_bots_dir() / kit.directory
    if not (path / "bot.toml").is_file():
        raise KitError(
            f"the {kit.language} starter kit is not in this installation: no {path / 'bot.toml'}"
        )
    return path


def new_bot(language: str, name: str, destination: Path) -> Path:
    """Copy the kit for ``language`` to ``destination`` as a bot called ``name``."""
    if not NAME_PATTERN.fullmatch(name):
        raise KitError(
            f"bot name {quoted(name)} must be 1-40 letters, digits, '-', '_' or '.',"
            " starting with a letter or digit",
            EXIT_BAD_FLAGS,
        )
    kit = find_kit(language)
    source = kit_path(kit)
    if destination.exists():
        raise KitError(f"{destination} already exists: choose a new directory", EXIT_BAD_FLAGS)
    try:
        copy_sources(source, destination)
        _rename(destination, kit.directory, name, where=str(destination))
        _make_readable(destination)
    except OSError as error:  # shutil.Error too: a full disk, no permission; no half copy left
        shutil.rmtree(destination, ignore_errors=True)
        raise KitError(
            f"cannot copy the {kit.language} kit to {destination}: {_reason(error)}"
        ) from None
    return destination


def _reason(error: OSError) -> str:
    """Why a copy failed, in a few words (shutil.Error lists every file with its error)."""
    if isinstance(error, shutil.Error) and error.args and isinstance(error.args[0], list):
        why = str(error.args[0][0][2]) if error.args[0] else str(error)
        number = re.search(r"\[Errno (\d+)\]", why)
        return os.strerror(int(number.group(1))) if number else why
    return error.strerror or str(error)


def copy_sources(source: Path, destination: Path) -> None:
    """Copy the bot directory ``source`` to ``destination`` without what its build makes."""
    try:
        spec = load_bot(source)
    except BotConfigError as error:
        raise KitError(f"{source} cannot be copied: {error}") from None
    built = _built_files(spec.runtime, spec.command)
    shutil.copytree(
        source, destination, symlinks=True,
        ignore=lambda directory, names: _skipped(source, Path(directory), names, built),
    )  # fmt: skip


def build_hint(directory: Path) -> str | None:
    """The command that builds a copied kit, if it needs building (quoted for a shell)."""
    if (directory / "build.sh").is_file():
        return shlex.quote(f"{directory}/build.sh")
    if (directory / "package.json").is_file():
        return f"npm ci --prefix {shlex.quote(str(directory))}"
    return None


def _built_files(runtime: str, command: tuple[str, ...]) -> frozenset[str]:
    """What a bot's build writes, relative to its directory: a native bot's program;
    a Java bot's jar (``-jar X``) and the native libraries beside it (``native/``)."""
    if runtime == "native" and command and command[0].startswith("./"):
        return frozenset({os.path.normpath(command[0])})
    if runtime == "java" and "-jar" in command[:-1]:
        return frozenset({os.path.normpath(command[command.index("-jar") + 1]), "native"})
    return frozenset()


def _skipped(root: Path, directory: Path, names: list[str], built: frozenset[str]) -> set[str]:
    relative = directory.relative_to(root)
    skipped = {name for name in names if name in BUILD_OUTPUTS or name.endswith(".pyc")}
    for name in names:
        path = (relative / name).as_posix()
        if path in GENERATED or path in built:
            skipped.add(name)
    return skipped


_TOML_NAME = re.compile(r'^name\s*=\s*"[^"\n]*"', re.MULTILINE)


def _rename(directory: Path, old: str, new: str, *, where: str) -> None:
    """The kit's name becomes ``new``; its path (``sample_bots/OLD``, as in its
    README's commands) becomes ``where``, the copy's path as the user gave it."""
    config = directory / "bot.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(_TOML_NAME.sub(f'name = "{new}"', text, count=1), encoding="utf-8")
    for path in sorted(directory.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        text = path.read_text(encoding="utf-8")
        if old in text:
            text = text.replace(f"sample_bots/{old}", where).replace(old, new)
            path.write_text(text, encoding="utf-8")


def _make_readable(directory: Path) -> None:
    """The bot runs as another uid: everything world-readable, directories searchable."""
    for path in [directory, *directory.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        extra = 0o555 if path.is_dir() or mode & 0o100 else 0o444
        path.chmod(mode | extra)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    new = commands.add_parser(
        "new", help="start a bot from a starter kit (--list shows the languages)",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    new.add_argument("language", nargs="?", help="the kit's language, e.g. python, cpp")
    new.add_argument("name", nargs="?", help="the new bot's name (also its directory)")
    new.add_argument("--dir", type=given_path, help="where to create it (default: ./NAME)")
    new.add_argument("--list", action="store_true", help="list the starter kits")
    new.set_defaults(func=run_new)


def run_new(args: argparse.Namespace) -> int:
    if args.list:
        return _print_list()
    if args.language is None or args.name is None:
        return fail(
            "bot new needs LANG and NAME (e.g. `arena bot new cpp my_bot`); --list shows the kits",
            EXIT_BAD_FLAGS,
        )
    destination = args.dir if args.dir is not None else Path(args.name)
    try:
        created = new_bot(args.language, args.name, destination)
    except KitError as error:
        return fail(str(error), error.status)
    except OSError as error:
        return fail(str(error))
    print(f"created {created} ({find_kit(args.language).language} kit, bot {args.name!r})")
    hint = build_hint(created)
    if hint:
        print(f"build it:  {hint}")
    where = shlex.quote(str(created))  # commands to paste into a shell, whatever the path
    print(f"check it:  arena bot check {where}")
    print(f"play it:   arena match {where} python_random")
    return 0


def _print_list() -> int:
    root = sample_bots_dir()
    for kit in KITS:
        path = root / kit.directory
        try:
            description = load_bot(path).description if path.is_dir() else "(not installed)"
        except BotConfigError as error:
            description = f"(broken: {error})"
        aliases = f" ({', '.join(kit.aliases)})" if kit.aliases else ""
        print(f"{kit.language + aliases:<26} {kit.directory:<15} {description}")
    return 0
