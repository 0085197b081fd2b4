"""docker/compose.ray.yaml: a cluster locked as docs/DISTRIBUTED.md says, checked without a
Docker engine. Every container holds the token and runs with Ray's token authentication on;
the head is `arena ray-head`; no Ray port is published; the token stays out of the image."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from arena.cli import build_parser

REPO = Path(__file__).resolve().parents[2]

DOCKER = Path(__file__).resolve().parents[2] / "docker"
TOKEN_IN_CONTAINER = "/run/kahuna/ray_token"
TOKEN_MOUNTED = "/run/kahuna-host/ray_token"


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
    assert environment["KAHUNA_RAY_TOKEN_FROM"] == TOKEN_MOUNTED
    mounts = [v for v in service["volumes"] if v.endswith(f":{TOKEN_MOUNTED}:ro")]
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


HOST_USER = 65534  # the host's user who made docker/ray_token; the container runs as root
PROBLEM = "from arena.tournament.execution.ray_auth import token_problem; print(token_problem())"

ENTRYPOINT_CASES = [
    # (case, mode of the mounted token, through the entrypoint, exit code, words of the output)
    ("the documented way: a 0600 token of the host's user, copied", 0o600, True, 0, "None"),
    ("the mounted file itself, another user's (control)", 0o600, False, 0,
     f"belongs to nobody (uid {HOST_USER}), not to root (uid 0)"),
    ("a mounted token other users of the host can read", 0o644, True, 1,
     "is open to other users of the host (mode 644): chmod 600 it on the host"),
    ("no token made before `compose up` (docker mounts a directory)", None, True, 1,
     "no Ray token at {mounted}: make one with `arena ray-token create docker/ray_token`"),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="a token of another user needs root's chown")
@pytest.mark.parametrize(
    ("mode", "through_entrypoint", "code", "words"),
    [c[1:] for c in ENTRYPOINT_CASES], ids=[c[0] for c in ENTRYPOINT_CASES],
)  # fmt: skip
def test_the_token_compose_mounts_is_accepted_after_the_entrypoint_copies_it(
    tmp_path: Path, mode: int | None, through_entrypoint: bool, code: int, words: str
) -> None:
    """The token as compose mounts it (the host user's file) is what the arena refuses;
    docker/entrypoint.sh, run as the container runs it (as root, the compose environment
    with its paths under ``tmp_path``), hands the arena a copy it accepts."""
    mounted = tmp_path / TOKEN_MOUNTED.lstrip("/")
    mounted.parent.mkdir(parents=True)
    if mode is None:
        mounted.mkdir()  # what docker mounts for a host path that does not exist
    else:
        mounted.write_text("ab" * 32)
        mounted.chmod(mode)
    os.chown(mounted, HOST_USER, HOST_USER)
    copied = tmp_path / TOKEN_IN_CONTAINER.lstrip("/")
    compose_env = {k: str(v) for k, v in services()["arena"]["environment"].items()}
    env = {**compose_env, "PATH": os.environ["PATH"], "PYTHONPATH": str(REPO),
           "KAHUNA_RAY_TOKEN_FROM": str(mounted),
           "RAY_AUTH_TOKEN_PATH": str(copied if through_entrypoint else mounted)}  # fmt: skip
    command = [sys.executable, "-c", PROBLEM]
    if through_entrypoint:
        command = ["sh", str(DOCKER / "entrypoint.sh"), *command]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == code, done.stdout + done.stderr
    assert words.format(mounted=mounted) in done.stdout + done.stderr, done.stdout + done.stderr
    if code == 0 and through_entrypoint:
        assert copied.read_text() == "ab" * 32
        assert copied.stat().st_mode & 0o777 == 0o600 and copied.stat().st_uid == 0
        assert copied.parent.stat().st_mode & 0o077 == 0
    elif code != 0:
        assert not copied.exists(), "an exposed token was copied"
