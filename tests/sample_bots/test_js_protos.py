"""js_random loads the .proto files from its own directory (the sandbox mounts
only the bot directory): its copies must equal proto/ byte for byte.
Fix a failure with `npm run sync-protos --prefix sample_bots/js_random`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "proto" / "kahuna" / "v1"
COPY = REPO / "sample_bots" / "js_random" / "proto" / "kahuna" / "v1"


def test_proto_copies_equal_the_repository_protos() -> None:
    sources = sorted(path.name for path in SOURCE.glob("*.proto"))
    assert sources, "no protos in proto/kahuna/v1"
    assert sorted(path.name for path in COPY.glob("*.proto")) == sources
    for name in sources:
        assert (COPY / name).read_bytes() == (SOURCE / name).read_bytes(), f"{name} drifted"


def test_sync_protos_check_mode_agrees() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    done = subprocess.run(
        ["node", "sync-protos.js", "--check"],
        cwd=COPY.parents[2], capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
