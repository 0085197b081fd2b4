"""js_random loads the bot-facing .proto files (referee.proto and what it
imports) from its own directory, since the sandbox mounts only the bot
directory: its copies must equal proto/ byte for byte, and be nothing else.
Fix a failure with `npm run sync-protos --prefix sample_bots/js_random`."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROTO_ROOT = REPO / "proto"
JS_BOT = REPO / "sample_bots" / "js_random"
COPY_ROOT = JS_BOT / "proto"
IMPORT = re.compile(r'^import\s+"([^"]+)";', re.MULTILINE)


def bot_protos(entry: str = "kahuna/v1/referee.proto") -> set[str]:
    found: set[str] = set()
    pending = [entry]
    while pending:
        name = pending.pop()
        if name not in found:
            found.add(name)
            text = (PROTO_ROOT / name).read_text(encoding="utf-8")
            pending += [imp for imp in IMPORT.findall(text) if not imp.startswith("google/")]
    return found


def test_bot_facing_protos_are_referee_and_game() -> None:
    assert bot_protos() == {"kahuna/v1/referee.proto", "kahuna/v1/game.proto"}


def test_proto_copies_equal_the_repository_protos() -> None:
    copies = {path.relative_to(COPY_ROOT).as_posix() for path in COPY_ROOT.rglob("*.proto")}
    assert copies == bot_protos()
    for name in sorted(copies):
        assert (COPY_ROOT / name).read_bytes() == (PROTO_ROOT / name).read_bytes(), name


@pytest.mark.slow
def test_sync_protos_check_mode_agrees() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    done = subprocess.run(
        ["node", "sync-protos.js", "--check"],
        cwd=JS_BOT, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
