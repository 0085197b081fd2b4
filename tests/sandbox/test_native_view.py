"""What a native bot sees is exactly what docs/design/SANDBOX.md says:
a probe lists the sandbox's directories and prints its environment, and the
test compares them with the documented block, entry by entry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.sandbox.bwrap import ETC_FILES, TOP_LEVEL_LINKS

from .conftest import Harness

pytestmark = pytest.mark.slow  # every test here starts a process or a server

SANDBOX_MD = Path(__file__).resolve().parents[2] / "docs" / "design" / "SANDBOX.md"
LISTED = ("/", "/etc", "/etc/ssl", "/dev", "/run", "/run/kahuna", "/tmp", "/bot")
PROBE = "; ".join(f'echo "== {path}"; ls -A {path}' for path in LISTED) + "; echo '== links'; " + (
    "for p in /bin /sbin /lib /lib32 /lib64 /libx32; do [ -L $p ] && echo \"$p $(readlink $p)\"; "
    "done; true"
)


def _documented() -> dict[str, str]:
    text = SANDBOX_MD.read_text()
    block = re.search(r"<!-- native-view: begin.*?```text\n(.*?)```\n<!-- native-view: end",
                      text, re.S)  # fmt: skip
    assert block, "docs/design/SANDBOX.md has lost its native-view block"
    rows = (line.split(None, 1) for line in block.group(1).splitlines() if line.strip())
    return {key: value.strip() for key, value in rows}


def _listing(output: str) -> dict[str, list[str]]:
    listing: dict[str, list[str]] = {}
    current = ""
    for line in output.splitlines():
        if line.startswith("== "):
            current = line[3:]
            listing[current] = []
        elif line:
            listing[current].append(line)
    return listing


def _expected_root(documented: str) -> set[str]:
    fixed = set(documented.split(",")[0].split())
    return fixed | {name for name in TOP_LEVEL_LINKS if (Path("/") / name).exists()}


def test_the_native_view_is_the_documented_one(harness: Harness) -> None:
    documented = _documented()
    assert set(documented) == {*LISTED, "env"}
    status, output = harness.run(PROBE)
    assert status == 0, output
    seen = _listing(output)
    assert set(seen["/"]) == _expected_root(documented["/"])
    for name, target in (line.split() for line in seen["links"]):
        assert target == str(Path("/").joinpath(name.lstrip("/")).readlink())  # as on the host
    bound_etc = {Path(p).relative_to("/etc").parts[0] for p in ETC_FILES if Path(p).exists()}
    assert set(documented["/etc"].split()) == bound_etc | {"passwd", "group"}
    for path in ("/etc", "/etc/ssl", "/dev", "/run", "/run/kahuna"):
        assert seen[path] == sorted(documented[path].split()), path
    assert documented["/tmp"] == "(empty)" and seen["/tmp"] == []
    assert documented["/bot"] == "the bot's own files" and seen["/bot"] == ["bot.txt"]


def test_the_environment_is_the_documented_one(harness: Harness) -> None:
    status, output = harness.run("/usr/bin/env", lang="sh", env={})  # MARKER: the harness's own
    assert status == 0, output
    seen = dict(line.split("=", 1) for line in output.splitlines() if line)
    seen.pop("MARKER")
    seen.pop("PWD", None)  # sh's own
    documented = dict(word.split("=", 1) for word in _documented()["env"].split())
    assert seen == documented
