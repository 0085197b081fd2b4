"""docker/compose.ray.yaml: a cluster locked as docs/DISTRIBUTED.md says, checked without a
Docker engine. Every container holds the token and runs with Ray's token authentication on;
the head is `arena ray-head`; no Ray port is published; the token stays out of the image."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from arena.cli import build_parser

DOCKER = Path(__file__).resolve().parents[2] / "docker"
TOKEN_IN_CONTAINER = "/run/kahuna/ray_token"


def services() -> dict[str, Any]:
    loaded = yaml.safe_load((DOCKER / "compose.ray.yaml").read_text())
    assert isinstance(loaded, dict)
    found = loaded["services"]
    assert set(found) == {"ray-head", "ray-worker", "arena"}
    return dict(found)


@pytest.mark.parametrize("name", ["ray-head", "ray-worker", "arena"])
def test_every_container_holds_the_token_with_authentication_on(name: str) -> None:
    service = services()[name]
    environment = service["environment"]
    assert environment["RAY_AUTH_MODE"] == "token"
    assert environment["RAY_AUTH_TOKEN_PATH"] == TOKEN_IN_CONTAINER
    mounts = [v for v in service["volumes"] if v.endswith(f":{TOKEN_IN_CONTAINER}:ro")]
    assert len(mounts) == 1, service["volumes"]
    assert "insecure" not in " ".join(map(str, service["command"]))


def _arena_commands() -> list[list[str]]:
    found = []
    for service in services().values():
        command = service["command"]
        if command[:2] == ["sh", "-c"]:
            parts = [shlex.split(p) for p in command[2].split("&&")]
            found += [p[1:] if p[0] == "exec" else p for p in parts]
        else:
            found.append(command)
    return [c for c in found if c[0] == "arena"]


def test_the_head_is_arena_ray_head_and_every_arena_command_parses() -> None:
    assert services()["ray-head"]["command"][:2] == ["arena", "ray-head"]
    commands = _arena_commands()
    assert {c[1] for c in commands} == {"ray-head", "ray-worker", "serve"}
    for command in commands:
        try:
            build_parser().parse_args(command[1:])
        except SystemExit as exit_:
            pytest.fail(f"`{' '.join(command)}` is not a valid arena command line ({exit_})")


def test_no_ray_port_is_published() -> None:
    published = [p for s in services().values() for p in s.get("ports", [])]
    assert published == ["50051:50051", "8080:8080"]


def test_the_token_file_stays_out_of_the_image() -> None:
    import fnmatch

    patterns = [line.strip().removeprefix("**/")
                for line in (DOCKER / "Dockerfile.dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]  # fmt: skip
    assert any(fnmatch.fnmatch("ray_token", p) for p in patterns), patterns
