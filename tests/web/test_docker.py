"""docker/: what can be checked without a Docker engine.

The compose file parses and keeps the settings the sandbox needs; every file
the Dockerfile copies exists; stages chain; the entrypoint is valid sh.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
DOCKERFILE = DOCKER / "Dockerfile"


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs with continuation lines joined and comments dropped."""
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        logical.append(pending + line)
        pending = ""
    if pending:
        logical.append(pending)
    pairs = []
    for line in logical:
        keyword, _, rest = line.partition(" ")
        pairs.append((keyword.upper(), rest.strip()))
    return pairs


def compose() -> dict[str, Any]:
    loaded = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_dockerfile_parser_joins_continuations_and_drops_comments() -> None:
    text = "# c\nFROM x AS y\nRUN a \\\n  # inner\n  && b\nCOPY a b\n"
    assert dockerfile_instructions(text) == [
        ("FROM", "x AS y"),
        ("RUN", "a && b"),
        ("COPY", "a b"),
    ]


def test_every_copied_source_exists_in_the_build_context() -> None:
    instructions = dockerfile_instructions(DOCKERFILE.read_text())
    copies = [args for keyword, args in instructions if keyword == "COPY"]
    assert copies, "the Dockerfile copies nothing"
    for args in copies:
        if args.startswith("["):
            parts = yaml.safe_load(args)
        else:
            parts = [p for p in shlex.split(args) if not p.startswith("--")]
        sources = parts[:-1]
        for source in sources:
            assert (REPO / source).exists(), f"Dockerfile copies {source}, which does not exist"


def test_stages_chain_and_known_targets_exist() -> None:
    instructions = dockerfile_instructions(DOCKERFILE.read_text())
    args = {
        m.group(1): m.group(2)
        for keyword, rest in instructions
        if keyword == "ARG" and (m := re.fullmatch(r"(\w+)=(\S+)", rest))
    }
    stages: list[str] = []
    for keyword, rest in instructions:
        if keyword != "FROM":
            continue
        image, _, name = rest.partition(" AS ")
        image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image)
        assert image in stages or image.startswith("debian:bookworm"), f"FROM {image}"
        stages.append(name.strip())
    assert stages == ["bot-runtime", "arena"]
    for service in compose()["services"].values():
        assert service["build"]["target"] in stages
        build = service["build"]
        assert (REPO / "docker" / build["context"] / build["dockerfile"]).is_file()


def test_arena_service_keeps_data_in_a_named_volume_and_publishes_its_ports() -> None:
    document = compose()
    arena = document["services"]["arena"]
    assert "arena-data" in document["volumes"]
    assert "arena-data:/data" in arena["volumes"]
    command = arena["command"]
    published = {int(p.split(":")[1]) for p in arena["ports"]}
    assert int(command[command.index("--port") + 1]) in published
    assert int(command[command.index("--web-port") + 1]) in published
    assert command[command.index("--data-dir") + 1] == "/data"


def test_arena_service_grants_what_bubblewrap_and_cgroups_need() -> None:
    arena = compose()["services"]["arena"]
    assert "SYS_ADMIN" in arena["cap_add"]
    assert "NET_ADMIN" in arena["cap_add"], "bwrap as root sets up the bots' loopback"
    assert "seccomp=unconfined" in arena["security_opt"]
    assert "apparmor=unconfined" in arena["security_opt"]
    assert arena["cgroup"] == "private"
    assert arena.get("privileged") is not True, "the smaller set of privileges suffices"


def test_arena_command_in_compose_matches_the_cli() -> None:
    from arena.cli import build_parser

    command = compose()["services"]["arena"]["command"]
    assert command[0] == "arena"
    try:
        build_parser().parse_args(command[1:])
    except SystemExit as exit_:
        pytest.fail(f"`{' '.join(command)}` is not a valid arena command line ({exit_})")


@pytest.mark.slow
def test_entrypoint_is_valid_sh_and_executable() -> None:
    entrypoint = DOCKER / "entrypoint.sh"
    assert entrypoint.stat().st_mode & 0o111
    subprocess.run(["sh", "-n", str(entrypoint)], check=True)


@pytest.mark.slow
def test_entrypoint_runs_its_command_when_cgroups_are_not_writable() -> None:
    result = subprocess.run(
        ["sh", str(DOCKER / "entrypoint.sh"), "echo", "started"],
        capture_output=True,
        text=True,
        check=False,
        timeout=10,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "started"


def test_dockerignore_keeps_every_copied_source() -> None:
    import fnmatch

    patterns = [
        line.strip()
        for line in (DOCKER / "Dockerfile.dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for keyword, args in dockerfile_instructions(DOCKERFILE.read_text()):
        if keyword != "COPY":
            continue
        for source in [p for p in shlex.split(args) if not p.startswith("--")][:-1]:
            for pattern in patterns:
                assert not fnmatch.fnmatch(source, pattern.removeprefix("**/")), (
                    f"{source} is copied but excluded by {pattern!r}"
                )
