"""Each starter kit's proto/ copy (Go, Rust, Java, C++, TypeScript) equals the
repository's bot-facing protos: the sandbox, and a kit copied by `arena bot new`,
see only the bot's directory. Fix a drift with scripts/sync-kit-protos."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from .building import REPO

pytestmark = pytest.mark.slow  # every test here starts a process or a server

SCRIPT = REPO / "scripts" / "sync-kit-protos"


def test_kit_protos_match_the_repository() -> None:
    done = subprocess.run([str(SCRIPT), "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_check_names_a_drifted_copy(tmp_path: Path) -> None:
    # the script run on a copy of the repository layout with one kit proto changed
    for relative in ("scripts/sync-kit-protos", "proto/kahuna/v1/game.proto",
                     "proto/kahuna/v1/referee.proto"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / relative, tmp_path / relative)
    for kit in ("go_random", "rust_random", "java_random", "cpp_random", "ts_random"):
        kit_protos = Path("sample_bots") / kit / "proto"
        shutil.copytree(REPO / kit_protos, tmp_path / kit_protos)
    drifted = tmp_path / "sample_bots" / "rust_random" / "proto" / "kahuna" / "v1" / "game.proto"
    drifted.write_text(drifted.read_text() + "// edited\n")
    script = tmp_path / "scripts" / "sync-kit-protos"
    done = subprocess.run([str(script), "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "rust_random/proto/kahuna/v1/game.proto differs" in done.stderr
    fixed = subprocess.run([str(script)], capture_output=True, text=True, check=False)
    assert fixed.returncode == 0, fixed.stderr
    assert subprocess.run([str(script), "--check"], check=False).returncode == 0
