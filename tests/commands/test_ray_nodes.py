"""`arena ray-token`, `arena ray-head` and `arena ray-worker` as real processes: the token
made once and kept private, and no node, head or driver that runs without it."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
HEAD = "10.231.255.1:6379"  # exists nowhere: every refusal here comes before the network


def arena(*args: str, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(home),
             "TMPDIR": str(home), **env},
    )  # fmt: skip


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    made = tmp_path / "home"
    made.mkdir()
    return made


def test_a_token_is_made_once_readable_by_its_owner_alone(home: Path) -> None:
    done = arena("ray-token", "create", home=home)
    assert done.returncode == 0, done.stderr
    token = home / ".ray" / "auth_token"
    assert re.fullmatch(r"[0-9a-f]{64}", token.read_text()), "not 256 random bits in hex"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert stat.S_IMODE(token.parent.stat().st_mode) == 0o700
    assert "~/.ray/auth_token on every machine" in done.stdout, done.stdout
    first = token.read_text()
    again = arena("ray-token", "create", home=home)
    assert again.returncode == 1
    assert again.stderr.strip().startswith(f"arena: {token} already exists"), again.stderr
    assert token.read_text() == first, "an existing token was overwritten"
    other = arena("ray-token", "create", home=home, RAY_AUTH_TOKEN_PATH=str(home / "t"))
    assert other.returncode == 0 and (home / "t").read_text() != first, other.stderr
    assert f"RAY_AUTH_TOKEN_PATH={home / 't'}" in other.stdout, other.stdout


def _token(home: Path, mode: int = 0o600, text: str = "ab" * 32) -> dict[str, str]:
    path = home / "token"
    path.write_text(text)
    path.chmod(mode)
    return {"RAY_AUTH_TOKEN_PATH": str(path)}


UNLOCKED = [
    # (case, environment made in HOME, words of the refusal)
    ("no token", lambda home: {}, "no Ray token at {home}/.ray/auth_token"),
    ("a token others can read", lambda home: _token(home, 0o644),
     "the Ray token {home}/token is readable by other users (mode 0644): chmod 600"),
    ("an empty token", lambda home: _token(home, text=""), "the Ray token {home}/token is empty"),
    ("authentication turned off", lambda home: {**_token(home), "RAY_AUTH_MODE": "disabled"},
     "RAY_AUTH_MODE=disabled turns Ray's authentication off"),
]  # fmt: skip


@pytest.mark.parametrize(("make", "words"), [c[1:] for c in UNLOCKED], ids=[c[0] for c in UNLOCKED])
@pytest.mark.parametrize(
    "command",
    [["ray-worker", HEAD, "--dry-run"], ["ray-head", "--dry-run"],
     ["tournament", "run", "cup", "r1", "r2", "--ray", HEAD]],
    ids=["ray-worker", "ray-head", "driver"],
)  # fmt: skip
def test_no_node_head_or_driver_starts_without_the_token(
    home: Path, make: object, words: str, command: list[str]
) -> None:
    env = make(home)  # type: ignore[operator]
    data = home / "data"
    done = arena(*command, "--data-dir", str(data), home=home, **env) if command[0] == (
        "tournament") else arena(*command, home=home, **env)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    message = done.stderr.strip().splitlines()[-1]
    assert message.startswith("arena: ") and words.format(home=home) in message, message
    if "no Ray token" in words:
        assert "arena ray-token create" in message, message
    assert not (data / "arena.db").exists() or "cup" not in (data / "arena.db").read_bytes().decode(
        errors="replace"
    )  # fmt: skip


def test_a_worker_with_a_planted_cache_does_not_join(home: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    done = arena("ray-worker", HEAD, "--dry-run", "--cache", str(cache), home=home, **_token(home))
    assert done.returncode == 1, done.stdout
    assert done.stderr.strip() == (
        f"arena: bot cache {cache} is writable by other users (mode 0777): someone else could"
        f" plant bots in it; remove it (rm -rf {cache}) and let the node make it again, or"
        " choose another directory (arena ray-worker --cache DIR, $KAHUNA_RAY_CACHE)"
    )


def test_the_head_asks_for_the_token_and_starts_no_dashboard_or_ray_client(home: Path) -> None:
    done = arena("ray-head", "--dry-run", home=home, **_token(home))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "RAY_enable_metrics_collection=0 RAY_AUTH_MODE=token ray start --head --port=6379"
        " --num-cpus=0 --include-log-monitor=false --disable-usage-stats"
        f" --include-dashboard=false --temp-dir={home}/kahuna-ray-{os.geteuid()}/ray"
    )
    asked = arena("ray-head", "--dry-run", "--dashboard", "127.0.0.1", "--ray-client", "10001",
                  home=home, **_token(home))  # fmt: skip
    asked_for = (
        " --include-dashboard=true --dashboard-host=127.0.0.1 --ray-client-server-port=10001 "
    )
    assert asked_for in asked.stdout, asked.stdout
    insecure = arena("ray-head", "--dry-run", "--insecure", home=home)
    assert insecure.returncode == 0 and "RAY_AUTH_MODE" not in insecure.stdout, insecure.stderr
    assert "WARNING: no token authentication" in insecure.stderr


def test_an_insecure_worker_joins_without_a_token_and_says_so(home: Path) -> None:
    from arena.sandbox.probe import probe_host

    if not probe_host().complete:
        pytest.skip("this host cannot sandbox: ray-worker refuses before the token matters")
    done = arena("ray-worker", HEAD, "--dry-run", "--insecure", "--cache", str(home / "c"),
                 home=home)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "WARNING: --insecure" in done.stderr
    assert os.path.isdir(home / "c")


def test_a_worker_whose_cache_cannot_be_made_says_so(home: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    cache = tmp_path / "file" / "cache"  # under a file: no directory can be made there
    done = arena("ray-worker", HEAD, "--dry-run", "--cache", str(cache), home=home, **_token(home))
    message = done.stderr.strip()
    assert done.returncode == 1 and "Traceback" not in message, message
    assert message.startswith(f"arena: cannot make the bot cache {cache}: "), message
    assert message.endswith(" (--cache DIR chooses another)"), message


@pytest.mark.parametrize(
    "command", [["ray-worker", HEAD, "--dry-run"], ["ray-head", "--dry-run"]],
    ids=["ray-worker", "ray-head"],
)  # fmt: skip
def test_a_node_whose_ray_directory_others_can_open_does_not_start(
    home: Path, tmp_path: Path, command: list[str]
) -> None:
    """Another user made the directory that would hold Ray's temp directory first (in a
    shared /tmp), open to everyone: the node refuses it rather than start Ray in it."""
    planted = home / f"kahuna-ray-{os.geteuid()}"  # where TMPDIR=home puts it
    planted.mkdir()
    planted.chmod(0o777)
    done = arena(*command, "--cache", str(tmp_path / "cache"), home=home, **_token(home)) if (
        command[0] == "ray-worker") else arena(*command, home=home, **_token(home))  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().startswith(
        f"arena: {planted}, which holds Ray's temp directory, is writable by other users"
        f" (mode 0777): someone could have put links in it already; remove it (rm -rf {planted})"
    ), done.stderr
