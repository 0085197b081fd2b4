"""The bot format: a directory with a ``bot.toml``.

```toml
name = "greedy"                   # 1-40 chars: letters, digits, - _ .
command = ["python3", "bot.py"]   # argument list, run in the bot directory
                                  # (at most 64 arguments, 4096 bytes each, 32 KiB in all)
runtime = "python"                # "python" | "node" | "java" | "native" | "remote"
description = "optional"
author = "optional"
```

The version is a content hash: sha256 over every regular file of the
directory (``node_modules`` included: it is code the bot runs), taken in
sorted order of relative path, each as path, NUL, size, NUL, contents.
``__pycache__`` directories and ``*.pyc`` files are skipped because
running the bot creates them. Symlinks are hashed by their target text.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from arena.quoting import clipped, quoted
from arena.referee.types import BotSpec

RUNTIMES = ("python", "node", "java", "native", "remote")
REMOTE_RUNTIME = "remote"
"""A bot its owner hosts: no command (docs/reference/PROTOCOL.md, "Remote bots")."""
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,39}")
KNOWN_KEYS = frozenset({"name", "command", "runtime", "description", "author"})
VERSION_HEX_CHARS = 16
MAX_BOT_TOML_BYTES = 1024 * 1024
MAX_COMMAND_ARGS = 64
MAX_COMMAND_ARG_BYTES = 4096
MAX_COMMAND_BYTES = 32 * 1024
"""Bounds on ``command``: far inside what exec accepts (E2BIG), checked when it is read."""


class BotConfigError(ValueError):
    """A bot directory that cannot be used; the message names the file and field."""


def load_bot(directory: Path) -> BotSpec:
    """Read and validate ``directory/bot.toml``."""
    directory = Path(directory)
    try:
        is_directory = directory.is_dir()
    except OSError as error:  # a name longer than the file system takes, say
        raise BotConfigError(f"{clipped(str(directory))}: {error.strerror}") from None
    if not is_directory:
        raise BotConfigError(f"{directory}: not a directory")
    config_path = directory / "bot.toml"
    if not config_path.is_file():
        raise BotConfigError(f"{config_path}: no bot.toml in the bot directory")
    config = _read_toml(config_path)
    unknown = sorted(set(config) - KNOWN_KEYS)
    if unknown:
        raise BotConfigError(f"{config_path}: unknown field {unknown[0]!r}")
    name = _name(config_path, config.get("name"))
    runtime = config.get("runtime")
    if runtime == REMOTE_RUNTIME:
        if "command" in config:
            raise BotConfigError(
                f"{config_path}: a remote bot has no field 'command' (its owner runs it)"
            )
        command: tuple[str, ...] = ()
    else:
        command = _command(config_path, config.get("command"))
    if runtime not in RUNTIMES:
        raise BotConfigError(
            f"{config_path}: field 'runtime' must be one of {', '.join(RUNTIMES)}, "
            f"got {quoted(runtime)}"
        )
    texts = {key: config.get(key, "") for key in ("description", "author")}
    for key, value in texts.items():
        if not isinstance(value, str) or len(value) > 500:
            raise BotConfigError(f"{config_path}: field {key!r} must be a string of <= 500 chars")
    try:
        version = content_hash(directory)
    except OSError as error:  # a file or folder the arena cannot read: it could not run it
        where = error.filename or directory
        raise BotConfigError(f"{where}: cannot be read: {error.strerror}") from None
    return BotSpec(
        name=name,
        version=version,
        directory=directory.resolve(),
        command=command,
        runtime=runtime,
        description=texts["description"],
        author=texts["author"],
    )


def _read_toml(config_path: Path) -> dict[str, Any]:
    """bot.toml as a table; BotConfigError naming the file for anything that is not one."""
    try:
        with config_path.open("rb") as stream:
            raw = stream.read(MAX_BOT_TOML_BYTES + 1)
    except OSError as error:
        raise BotConfigError(f"{config_path}: cannot be read: {error.strerror}") from None
    if len(raw) > MAX_BOT_TOML_BYTES:
        raise BotConfigError(f"{config_path}: larger than {MAX_BOT_TOML_BYTES} bytes")
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise BotConfigError(f"{config_path}: not valid TOML: {error}") from None
    except RecursionError:  # tomllib recurses once per level of nesting
        raise BotConfigError(f"{config_path}: not valid TOML: nested too deeply") from None


def _name(config_path: Path, value: object) -> str:
    if value is None:
        raise BotConfigError(f"{config_path}: missing field 'name'")
    if not isinstance(value, str) or not NAME_PATTERN.fullmatch(value):
        raise BotConfigError(
            f"{config_path}: field 'name' must be 1-40 letters, digits, '-', '_' or '.', "
            f"starting with a letter or digit, got {quoted(value)}"
        )
    return value


def _command(config_path: Path, value: object) -> tuple[str, ...]:
    if value is None:
        raise BotConfigError(f"{config_path}: missing field 'command'")
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(part, str) and part and "\0" not in part for part in value)
    ):
        raise BotConfigError(
            f"{config_path}: field 'command' must be a non-empty list of non-empty strings, "
            f"got {quoted(value)}"
        )
    if len(value) > MAX_COMMAND_ARGS:
        raise BotConfigError(
            f"{config_path}: field 'command' has {len(value)} arguments; the limit is"
            f" {MAX_COMMAND_ARGS}"
        )
    sizes = [len(part.encode("utf-8")) for part in value]
    for index, size in enumerate(sizes):
        if size > MAX_COMMAND_ARG_BYTES:
            raise BotConfigError(
                f"{config_path}: field 'command' argument {index} is {size} bytes; the limit"
                f" is {MAX_COMMAND_ARG_BYTES}"
            )
    if sum(sizes) > MAX_COMMAND_BYTES:
        raise BotConfigError(
            f"{config_path}: field 'command' is {sum(sizes)} bytes in all; the limit is"
            f" {MAX_COMMAND_BYTES}"
        )
    return tuple(value)


def unbuilt(spec: BotSpec) -> str | None:
    """Why ``spec`` cannot start because its build has not run, or None.

    The file its command runs must be in the directory: a native bot's program
    (``./bot``, executable), a Java bot's jar (``-jar X``), a Node bot's script
    and, when its package.json has dependencies, its ``node_modules``. Without
    this check the bot would forfeit every game with the sandbox's exec error.
    """
    missing = _missing_build_output(spec)
    if missing is None:
        return None
    if (spec.directory / "build.sh").is_file():
        how = "run ./build.sh first"
    elif spec.runtime == "node" and (spec.directory / "package.json").is_file():
        how = "run npm ci first"
    else:
        how = "build it first"
    return f"{spec.name} is not built ({missing}): {how}"


def _missing_build_output(spec: BotSpec) -> str | None:
    command, root = spec.command, spec.directory
    if spec.runtime == "native" and "/" in command[0]:  # a bare name is looked up on PATH
        program = _inside(root, command[0])
        if program is None:
            return None
        if not program.is_file():
            return f"no {command[0]}"
        return None if program.stat().st_mode & 0o111 else f"{command[0]} is not executable"
    if spec.runtime == "java" and "-jar" in command[:-1]:
        jar = command[command.index("-jar") + 1]
        path = _inside(root, jar)
        return None if path is None or path.is_file() else f"no {jar}"
    if spec.runtime == "node":
        script = next((part for part in command[1:] if not part.startswith("-")), None)
        path = None if script is None else _inside(root, script)
        if path is not None and not path.is_file():
            return f"no {script}"
        if _has_dependencies(root / "package.json") and not (root / "node_modules").is_dir():
            return "no node_modules"
    return None


def _inside(root: Path, relative: str) -> Path | None:
    """``relative`` in the bot directory ``root``; None for a path out of it (absolute, or
    up through ``..``): nothing outside the directory is looked at, so a refusal never
    tells an uploader which files the host has."""
    normal = os.path.normpath(relative)
    if os.path.isabs(normal) or normal == ".." or normal.startswith("../"):
        return None
    return root / normal


def _has_dependencies(package_json: Path) -> bool:
    try:
        manifest = json.loads(package_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and bool(manifest.get("dependencies"))


def content_hash(directory: Path) -> str:
    """The bot's version: see the module docstring."""
    digest = hashlib.sha256()
    for relative in _files(directory):
        path = directory / relative
        if path.is_symlink():
            target = os.readlink(path).encode()
            digest.update(relative.encode() + b"\0" + str(len(target)).encode() + b"\0")
            digest.update(target)
            continue
        with path.open("rb") as stream:  # in chunks: a big file is not held in memory
            size = os.fstat(stream.fileno()).st_size
            digest.update(relative.encode() + b"\0" + str(size).encode() + b"\0")
            left = size
            while left > 0 and (chunk := stream.read(min(left, _HASH_CHUNK_BYTES))):
                digest.update(chunk)
                left -= len(chunk)
    return digest.hexdigest()[:VERSION_HEX_CHARS]


_HASH_CHUNK_BYTES = 1 << 20


def _raise(error: OSError) -> None:
    raise error


def _files(directory: Path) -> list[str]:
    found: list[str] = []
    for root, dirs, files in os.walk(directory, onerror=_raise):  # never skip a folder
        dirs[:] = [name for name in dirs if name != "__pycache__"]
        for name in files:
            if name.endswith(".pyc"):
                continue
            path = Path(root) / name
            if path.is_symlink() or path.is_file():
                found.append(path.relative_to(directory).as_posix())
    return sorted(found)
