"""A helper process that kills an arena process's bots once that process is gone.

bwrap's ``--die-with-parent`` does not survive the credential changes of a
privileged (root) launch, and ``atexit`` does not run when the arena is
SIGKILLed. So the first launch in each arena process starts this watchdog with
a pipe on its stdin; the arena never writes to it. When the arena dies, however
it dies, the pipe reaches end of file and the watchdog kills every process in
the bot cgroups named after the arena's pid and removes the groups, and removes
the work directories of its matches, checks and training runs (bot sockets,
stderr files) named after that pid (``work_prefix``): a worker SIGKILLed by a
stopping runner, or a check killed the same way, cannot remove its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from arena.logs import get_logger
from arena.resources import package_dir
from arena.sandbox.cgroups import groups_of_creator

WATCHDOG_CODE = "import sys; from arena.sandbox.watchdog import main; sys.exit(main(sys.argv[1:]))"
_lock = threading.Lock()
_watchdog: tuple[int, subprocess.Popen[bytes], int] | None = None  # (owner pid, proc, pipe)
_stopped_by_its_owner = False
STOPPED_BY_OWNER = "stopped-by-owner"
"""The watchdog's third argument when its creator is a worker its owner ends with SIGKILL."""


def stopped_by_its_owner() -> None:
    """This process is a match worker that its runner stops with SIGKILL (at a Ctrl-C, a
    SIGTERM, a ladder's stop): the bots its watchdog then kills are no news to report as
    a warning on the user's terminal, beside the runner's one line; the runner reports a
    worker lost otherwise itself. They are logged at info level."""
    global _stopped_by_its_owner
    _stopped_by_its_owner = True


def _forget_after_fork() -> None:
    """A forked child starts its own watchdog (its bots are named after its pid)."""
    global _lock, _watchdog
    _lock = threading.Lock()
    if _watchdog is not None:
        os.close(_watchdog[2])  # or the parent's watchdog would wait for this child too
    _watchdog = None


os.register_at_fork(after_in_child=_forget_after_fork)


def work_root() -> str:
    """Where match work directories go: a temp root short enough for gRPC's Unix socket
    path limit (a match's, a check's and a training run's bot sockets live under it)."""
    root = tempfile.gettempdir()
    return root if len(root) < 60 else "/tmp"


def work_prefix(pid: int | None = None) -> str:
    """The name start of the work directories arena process ``pid`` (default: this one)
    makes under ``work_root``: its watchdog removes those it left (``clean_up_after``)."""
    return f"kahuna-{os.getpid() if pid is None else pid}-"


def work_directory(kind: str = "") -> tempfile.TemporaryDirectory[str]:
    """A new work directory (``kind``: "check-", "train-"; "" for a match) under
    ``work_root``, named after this process (``work_prefix``): when the process dies
    without removing it (SIGKILL), its watchdog does."""
    return tempfile.TemporaryDirectory(prefix=work_prefix() + kind, dir=work_root())


def clean_up_after(creator_pid: int, *, expected: bool = False) -> list[str]:
    """Kill and remove every bot group ``creator_pid`` left, and remove the match work
    and check directories it left; the names removed. The groups are logged as a warning, at info
    level when ``expected`` (``stopped_by_its_owner``)."""
    removed: list[str] = []
    for group in groups_of_creator(creator_pid):
        group.kill_all()
        if group.remove():
            removed.append(group.name)
    if removed:
        log = get_logger(creator_pid=creator_pid)
        (log.info if expected else log.warning)("orphaned_bots_killed", groups=removed)
    for work in sorted(Path(work_root()).glob(work_prefix(creator_pid) + "*")):
        if work.is_dir() and not work.is_symlink():
            shutil.rmtree(work, ignore_errors=True)
            removed.append(work.name)
    return removed


def ensure_watchdog() -> None:
    """Start this process's watchdog unless it is already running."""
    global _watchdog
    with _lock:
        if _watchdog is not None and _watchdog[0] == os.getpid() and _watchdog[1].poll() is None:
            return
        read_end, write_end = os.pipe()  # both close-on-exec: no bot inherits them
        package_root = str(package_dir("arena").parent)  # where this arena is imported from
        python_path = os.pathsep.join(
            p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p
        )
        argv = [sys.executable, "-c", WATCHDOG_CODE, "kahuna-watchdog", str(os.getpid())]
        if _stopped_by_its_owner:
            argv.append(STOPPED_BY_OWNER)
        try:
            proc = subprocess.Popen(
                argv,
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
                env={**os.environ, "PYTHONPATH": python_path},
            )
        finally:
            os.close(read_end)
        _watchdog = (os.getpid(), proc, write_end)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or not argv[1].isdigit() or argv[2:] not in ([], [STOPPED_BY_OWNER]):
        print(f"usage: kahuna-watchdog CREATOR_PID [{STOPPED_BY_OWNER}]", file=sys.stderr)
        return 2
    while sys.stdin.buffer.read(4096):
        pass  # the creator never writes; end of file means it is gone
    clean_up_after(int(argv[1]), expected=argv[2:] == [STOPPED_BY_OWNER])
    return 0

