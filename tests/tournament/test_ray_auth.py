"""The Ray token file as ``ray_auth.token_problem`` judges it, without a cluster: accepted
only as ssh accepts a private key, a file of the user who runs the process that no other
user can read or write; every refusal names the file, its owner or mode, and the fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.tournament.execution.ray_auth import TokenError, require_token, token_problem

OTHER_UID = 65534  # nobody

MODES = [
    # (mode, words of the refusal, or None for a token that is accepted)
    (0o600, None),
    (0o400, None),
    (0o644, "is readable by other users (mode 0644): chmod 600 {path}"),
    (0o640, "is readable by other users (mode 0640): chmod 600 {path}"),
    (0o604, "is readable by other users (mode 0604): chmod 600 {path}"),
    (0o620, "is writable by other users (mode 0620): chmod 600 {path}"),
    (0o602, "is writable by other users (mode 0602): chmod 600 {path}"),
    (0o601, "is executable by other users (mode 0601): chmod 600 {path}"),
]


def _token(tmp_path: Path, mode: int, uid: int | None = None) -> dict[str, str]:
    path = tmp_path / "auth_token"
    path.write_text("ab" * 32)
    path.chmod(mode)
    if uid is not None:
        os.chown(path, uid, -1)
    return {"RAY_AUTH_TOKEN_PATH": str(path)}


@pytest.mark.parametrize(("mode", "words"), MODES, ids=[f"{m:04o}" for m, _ in MODES])
def test_a_token_others_can_read_or_write_is_refused(
    tmp_path: Path, mode: int, words: str | None
) -> None:
    env = _token(tmp_path, mode)
    problem = token_problem(env)
    if words is None:
        assert problem is None
        require_token(env)
        assert env["RAY_AUTH_MODE"] == "token"
        return
    path = env["RAY_AUTH_TOKEN_PATH"]
    assert problem == f"the Ray token {path} " + words.format(path=path)
    with pytest.raises(TokenError, match="chmod 600"):
        require_token(env)


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")

OWNERS = [
    # (case, owner of the file, mode, the process's effective uid or None for the test's own)
    ("another user's 0600 file, read by root", OTHER_UID, 0o600, None),
    ("another user's 0400 file, read by root", OTHER_UID, 0o400, None),
    ("root's file, read by another user", 0, 0o600, OTHER_UID),
]


@needs_root
@pytest.mark.parametrize(
    ("owner", "mode", "euid"), [c[1:] for c in OWNERS], ids=[c[0] for c in OWNERS]
)
def test_a_token_of_another_user_is_refused_naming_its_owner(
    tmp_path: Path, owner: int, mode: int, euid: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _token(tmp_path, mode, uid=owner)
    path = env["RAY_AUTH_TOKEN_PATH"]
    if euid is not None:
        monkeypatch.setattr(os, "geteuid", lambda: euid)
    me = os.geteuid()
    problem = token_problem(env)
    assert problem is not None
    named = {0: "root (uid 0)", OTHER_UID: f"nobody (uid {OTHER_UID})"}
    assert problem.startswith(
        f"the Ray token {path} belongs to {named[owner]}, not to {named[me]} who runs this"
        " process"
    ), problem
    fix = "root" if me == 0 else "nobody"
    assert problem.endswith(f": chown {fix} {path} && chmod 600 {path}"), problem
    with pytest.raises(TokenError, match="belongs to"):
        require_token(env)


@needs_root
def test_a_token_of_a_uid_without_a_name_is_refused_by_number(tmp_path: Path) -> None:
    env = _token(tmp_path, 0o600, uid=4_000_000)
    problem = token_problem(env)
    assert problem is not None and "belongs to uid 4000000, not to root (uid 0)" in problem


def test_the_owners_own_0600_token_is_accepted(tmp_path: Path) -> None:
    assert token_problem(_token(tmp_path, 0o600)) is None
