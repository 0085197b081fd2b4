"""A bot whose build has not run is named as such, before anything launches it.

Table-driven over the runtimes: the file a command runs (a native program, a
Java jar, a Node script, node_modules a package.json needs) missing or not
executable is "not built", with the way to build it; a built bot, a bare
program name (found on PATH) and a Python bot are not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.referee import load_bot, unbuilt

NATIVE = 'command = ["./bot"]\nruntime = "native"'
JAVA = 'command = ["java", "-Xshare:auto", "-jar", "bot.jar"]\nruntime = "java"'
NODE = 'command = ["node", "--enable-source-maps", "dist/bot.js"]\nruntime = "node"'
DEPENDENCIES = json.dumps({"dependencies": {"@grpc/grpc-js": "1.14.7"}})

# (case, bot.toml's command and runtime, files {path: mode, or text for package.json},
#  the refusal, or None: built)
CASES: list[tuple[str, str, dict[str, int | str], str | None]] = [
    ("native, no binary", NATIVE, {"build.sh": 0o755},
     "g is not built (no ./bot): run ./build.sh first"),
    ("native, not executable", NATIVE, {"build.sh": 0o755, "bot": 0o644},
     "g is not built (./bot is not executable): run ./build.sh first"),
    ("native, no build.sh", NATIVE, {}, "g is not built (no ./bot): build it first"),
    ("native, built", NATIVE, {"build.sh": 0o755, "bot": 0o755}, None),
    ("native, on PATH", 'command = ["kahuna-bot"]\nruntime = "native"', {}, None),
    ("java, no jar", JAVA, {"build.sh": 0o755},
     "g is not built (no bot.jar): run ./build.sh first"),
    ("java, built", JAVA, {"build.sh": 0o755, "bot.jar": 0o644}, None),
    ("node, no script", NODE, {"build.sh": 0o755},
     "g is not built (no dist/bot.js): run ./build.sh first"),
    ("node, no node_modules", 'command = ["node", "bot.js"]\nruntime = "node"',
     {"bot.js": 0o644, "package.json": DEPENDENCIES},
     "g is not built (no node_modules): run npm ci first"),
    ("node, nothing to install", 'command = ["node", "bot.js"]\nruntime = "node"',
     {"bot.js": 0o644, "package.json": "{}"}, None),
    ("node, built", NODE, {"build.sh": 0o755, "dist/bot.js": 0o644}, None),
    ("python", 'command = ["python3", "bot.py"]\nruntime = "python"', {}, None),
    # out of the directory: never looked at (an upload's refusal must not tell which host
    # files exist); the sandbox decides what such a command finds
    ("native, up and out", 'command = ["./../../no/such/bot"]\nruntime = "native"', {}, None),
    ("native, absolute", 'command = ["/no/such/bot"]\nruntime = "native"', {}, None),
    ("java, jar out", 'command = ["java", "-jar", "../../x.jar"]\nruntime = "java"', {}, None),
    ("node, script out", 'command = ["node", "../x.js"]\nruntime = "node"', {}, None),
]  # fmt: skip


def make_bot(directory: Path, toml: str, files: dict[str, int | str]) -> Path:
    directory.mkdir()
    (directory / "bot.toml").write_text(f'name = "g"\n{toml}\n')
    for name, content in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content)
        else:
            path.write_text("#!/bin/sh\n")
            path.chmod(content)
    return directory


@pytest.mark.parametrize(("toml", "files", "refusal"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])  # fmt: skip
def test_a_missing_build_output_is_named_with_how_to_build(
    tmp_path: Path, toml: str, files: dict[str, int | str], refusal: str | None
) -> None:
    assert unbuilt(load_bot(make_bot(tmp_path / "g", toml, files))) == refusal
