"""Ray's temp directory on an arena node: in a directory only the node's user can open."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.commands.ray_tempdir import (
    default_temp_dir,
    flag_value,
    temp_dir_problem,
    with_private_temp_dir,
)

OTHER = 65534


@pytest.mark.parametrize(
    ("ray_start_args", "value"),
    [
        ("", None),
        ("--temp-dir=/t/ray", "/t/ray"),
        ("--block --temp-dir /t/ray", "/t/ray"),
        ("--temp-dir=/a/ray --temp-dir=/b/ray", "/b/ray"),  # the last wins, as in Ray
        ("--temp-dir", None),  # no value: Ray's own start says so
        ("--temp-dir-x=/t --node-ip-address=10.0.0.1", None),
    ],
)
def test_the_temp_dir_given_to_ray_start(ray_start_args: str, value: str | None) -> None:
    assert flag_value(ray_start_args, "--temp-dir") == value


def test_without_a_temp_dir_ray_gets_one_under_rays_own_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    temp = tmp_path / f"kahuna-ray-{os.geteuid()}" / "ray"
    assert default_temp_dir() == temp
    assert with_private_temp_dir("--block") == ([f"--temp-dir={temp}"], temp)
    assert with_private_temp_dir("--temp-dir=/x/ray") == ([], Path("/x/ray"))
    home = Path.home()
    assert with_private_temp_dir("--temp-dir=~/r/ray") == ([], home / "r" / "ray")


def test_a_missing_directory_is_made_for_this_user_alone(tmp_path: Path) -> None:
    temp = tmp_path / "deep" / "kahuna-ray" / "ray"
    assert temp_dir_problem(temp) is None
    assert stat.S_IMODE(temp.parent.stat().st_mode) == 0o700
    assert not temp.exists(), "Ray makes its own temp directory (and opens it to everyone)"
    assert temp_dir_problem(temp) is None, "the second start finds it as the first left it"


def _chown_other(path: Path) -> None:
    os.chown(path, OTHER, OTHER)


def _private(mode: int, *, owner: bool = False) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        private = root / "p"
        private.mkdir()
        private.chmod(mode)
        if owner:
            _chown_other(private)
        return private

    return make


def _link(root: Path) -> Path:
    (root / "elsewhere").mkdir(mode=0o700)
    (root / "p").symlink_to(root / "elsewhere")
    return root / "p"


def _above(mode: int, *, owner: bool = False) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        above = root / "above"
        above.mkdir()
        above.chmod(mode)
        if owner:
            _chown_other(above)
        return above / "p"  # made by the check, 0700

    return make


REFUSED = [
    # (case, makes the directory that holds Ray's temp directory, words of the refusal)
    ("owned by another user", _private(0o700, owner=True), "{p}, which holds Ray's temp"
     " directory, is owned by uid 65534, not by this node's user"),
    ("writable by others", _private(0o777), "{p}, which holds Ray's temp directory, is"
     " writable by other users (mode 0777): someone could have put links in it already"),
    ("readable by others", _private(0o755), "{p}, which holds Ray's temp directory, is open"
     " to other users (mode 0755), and Ray makes the temp directory writable by everyone"),
    ("a symbolic link", _link, "{p}, which holds Ray's temp directory, is a symbolic link"),
    ("under a directory others may write", _above(0o777), "{above} is writable by other"
     " users (mode 0777): they could replace {p}"),
    ("under another user's directory", _above(0o755, owner=True), "{above} is owned by uid"
     " 65534: its owner could replace {p}"),
]  # fmt: skip


CHOOSE = (
    'give Ray a temp directory inside a directory only you can open (--ray-start-args="'
    '--temp-dir=DIR/ray", DIR mode 0700)'
)


@pytest.mark.skipif(os.geteuid() != 0, reason="another user's directories need root")
@pytest.mark.parametrize(("make", "words"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_a_temp_dir_another_user_could_reach_is_refused(
    tmp_path: Path, make: Callable[[Path], Path], words: str
) -> None:
    private = make(tmp_path)
    problem = temp_dir_problem(private / "ray")
    expected = words.format(p=private, above=private.parent)
    assert problem is not None and problem.startswith(expected), problem
    assert problem.endswith(f"; {CHOOSE}"), problem  # a directory given: nothing removed


@pytest.mark.parametrize(
    ("mode", "fix"),
    [(0o777, "remove it (rm -rf {p}) and let the node make it again, or "),
     (0o755, "chmod 700 {p}, or ")],
)  # fmt: skip
def test_the_default_directory_may_be_made_again(tmp_path: Path, mode: int, fix: str) -> None:
    private = _private(mode)(tmp_path)
    problem = temp_dir_problem(private / "ray", default=True)
    assert problem is not None and problem.endswith(fix.format(p=private) + CHOOSE), problem


def test_a_given_temp_dir_in_tmp_itself_is_refused_and_tmp_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    problem = temp_dir_problem(shared / "ray")
    assert problem == (
        f"{shared}, which holds Ray's temp directory, is writable by other users (mode 1777):"
        f" someone could have put links in it already; {CHOOSE}"
    )
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777


def test_under_a_sticky_directory_such_as_tmp_it_is_fine(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    assert temp_dir_problem(shared / "kahuna-ray-0" / "ray") is None
