"""Ray's temp directory on an arena node, inside a directory only the node's user can open.

Ray keeps a node's sockets (its raylet's, its object store's), its logs and files it
rewrites every few seconds (``logs/debug_state.txt``) under its temp directory
(``--temp-dir``, default ``/tmp/ray``), and makes that directory and every one it
makes there writable by everyone (mode 0777, no sticky bit), whoever owns them. On a
node in Ray's default place any user of the machine could read the node's logs,
move its raylet's socket away (every Ray worker and driver started there after that
crashes), or put a symbolic link where the raylet writes and have it overwrite any
file the node's user may write. So ``arena ray-head`` and ``arena ray-worker`` give
Ray a temp directory inside one only the node's user can open
(``<tmp>/kahuna-ray-<uid>/ray``, the first made 0700), and refuse a ``--temp-dir`` that another
user could open, or replace on the way to it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import stat
import tempfile
from pathlib import Path

from arena.tournament.execution.bot_bundles import NotOwnDirectory, open_own_directory

CHOOSE = (
    "give Ray a temp directory inside a directory only you can open"
    ' (--ray-start-args="--temp-dir=DIR/ray", DIR mode 0700)'
)


def flag_value(ray_start_args: str, flag: str) -> str | None:
    """The value of ``flag`` (``--name``) in ``ray_start_args``, as ``--name=V`` or
    ``--name V``, the last one given; None if it is not given (or has no value)."""
    extra = shlex.split(ray_start_args)
    value = None
    for index, word in enumerate(extra):
        if word.startswith(f"{flag}="):
            value = word.split("=", 1)[1]
        elif word == flag and index + 1 < len(extra):
            value = extra[index + 1]
    return value


def default_temp_dir() -> Path:
    """Where the arena's node keeps Ray's files unless ``--temp-dir`` says otherwise:
    under the directory Ray would use (``$RAY_TMPDIR``, else the system's temporary
    directory), in ``kahuna-ray-<uid>``."""
    base = os.environ.get("RAY_TMPDIR") or tempfile.gettempdir()
    return Path(base) / f"kahuna-ray-{os.geteuid()}" / "ray"


def _ancestor_problem(private: Path) -> str | None:
    """Why another user could replace ``private`` through a directory above it (one
    they own, or may write without a sticky bit), or None."""
    me = os.geteuid()
    above = Path(os.path.realpath(private.parent))
    for ancestor in (above, *above.parents):
        try:
            info = os.stat(ancestor)
        except OSError as error:
            return f"cannot check {ancestor}, above Ray's temp directory: {error.strerror}"
        if info.st_uid not in (0, me):
            return (
                f"{ancestor} is owned by uid {info.st_uid}: its owner could replace"
                f" {private}, which holds Ray's temp directory; {CHOOSE}"
            )
        if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
            return (
                f"{ancestor} is writable by other users (mode {stat.S_IMODE(info.st_mode):04o}):"
                f" they could replace {private}, which holds Ray's temp directory; {CHOOSE}"
            )
    return None


def temp_dir_problem(temp_dir: Path, *, default: bool = False) -> str | None:
    """Why Ray's temp directory ``temp_dir`` would be open to other users, or None: the
    directory that holds it (made mode 0700 if missing) must be this user's, not a
    link, and closed to everyone else, and no directory above it replaceable by
    another user. Ray itself makes ``temp_dir`` writable by everyone: only the one
    above it can keep others out. Only for the ``default`` one does the answer offer
    to remove or chmod that directory: a directory given may be anything (``/tmp``)."""
    temp_dir = Path(os.path.abspath(temp_dir))
    private = temp_dir.parent
    if private == temp_dir:
        return f"Ray's temp directory cannot be {temp_dir}; {CHOOSE}"
    quoted = shlex.quote(str(private))
    fix = f"remove it (rm -rf {quoted}) and let the node make it again, or {CHOOSE}"
    if not default:
        fix = CHOOSE
    try:
        private.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(private, 0o700)
        fd, info = open_own_directory(private)
    except NotOwnDirectory as refused:
        seen = refused.info
        if seen is None:
            return f"{private}, which holds Ray's temp directory, is {refused.kind}; {fix}"
        if refused.kind == "owned":
            return (
                f"{private}, which holds Ray's temp directory, is owned by uid {seen.st_uid},"
                f" not by this node's user (uid {os.geteuid()}): its owner could read and"
                f" replace the node's sockets and logs; {fix}"
            )
        return (
            f"{private}, which holds Ray's temp directory, is writable by other users (mode"
            f" {stat.S_IMODE(seen.st_mode):04o}): someone could have put links in it already;"
            f" {fix}"
        )
    except OSError as error:
        return f"cannot make {private} for Ray's temp directory: {error.strerror}; {CHOOSE}"
    os.close(fd)
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        return (
            f"{private}, which holds Ray's temp directory, is open to other users (mode"
            f" {mode:04o}), and Ray makes the temp directory writable by everyone: they could"
            f" read and replace the node's sockets and logs; "
            + (f"chmod 700 {quoted}, or {CHOOSE}" if default else CHOOSE)
        )
    return _ancestor_problem(private)


def with_private_temp_dir(ray_start_args: str) -> tuple[list[str], Path]:
    """The ``ray start`` flags to add for a private temp directory (none when
    ``ray_start_args`` gives ``--temp-dir``), and the temp directory Ray will use."""
    given = flag_value(ray_start_args, "--temp-dir")
    if given is not None:
        return [], Path(os.path.expanduser(given))  # as Ray reads it
    temp_dir = default_temp_dir()
    return [f"--temp-dir={temp_dir}"], temp_dir
