"""The bubblewrap command line for one bot: namespaces and a private filesystem.

Pure: takes what to run and returns argv; the caller opens the file
descriptors (seccomp program, passwd, group) that argv refers to.
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from arena.sandbox.limits import BOT_DIR_INSIDE, SANDBOX_SOCKET, SANDBOX_UID, SandboxLimits

BWRAP = "/usr/bin/bwrap"
SETPRIV = "/usr/bin/setpriv"
TOP_LEVEL_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    "/etc/ssl/openssl.cnf",  # node reads it at start-up
)
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def passwd_text(uid: int = SANDBOX_UID) -> str:
    """The sandbox's /etc/passwd: root and the bot's uid (its own from the pool, as root)."""
    return (
        "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
        f"bot:x:{uid}:{uid}:kahuna bot:/tmp:/usr/sbin/nologin\n"
    )


def group_text(uid: int = SANDBOX_UID) -> str:
    return f"root:x:0:\nbot:x:{uid}:\n"


PASSWD_TEXT = passwd_text()
GROUP_TEXT = group_text()


@dataclass(frozen=True)
class SandboxFds:
    """Descriptors bwrap reads its data from (all inherited by the launcher)."""

    passwd: int
    group: int
    seccomp: int | None


@dataclass(frozen=True)
class SandboxPlan:
    """Everything that decides a bot's bwrap command line."""

    bot_dir: Path
    command: tuple[str, ...]
    runtime: str
    env: Mapping[str, str]
    socket_path: Path
    limits: SandboxLimits
    extra_ro_binds: tuple[tuple[Path, str], ...] = ()
    writable_file: tuple[Path, str] | None = None  # (host file, inside): bound read-write
    share_net: bool = False  # only to prove the seccomp layer on its own
    as_root: bool = field(default_factory=lambda: os.geteuid() == 0)
    uid: int = SANDBOX_UID  # the host uid (and gid) setpriv switches to, as root
    empty_file: Path | None = None  # bound over Python's start-up hooks (None: not masked)


def runtime_trees(runtime: str) -> tuple[list[Path], str]:
    """Host directories a runtime needs bound read-only, and the PATH to use."""
    if runtime == "python":
        prefixes: list[Path] = []
        for prefix in (sys.prefix, sys.base_prefix):  # a venv first, then its base
            path = Path(prefix).resolve()
            if path not in prefixes:
                prefixes.append(path)
        extra = [p for p in prefixes if not _under(p, Path("/usr"))]
        bins = ":".join(str(p / "bin") for p in prefixes)
        return extra, f"{bins}:{SYSTEM_PATH}"
    if runtime == "node":
        node = shutil.which("node") or "/usr/bin/node"
        tree = Path(os.path.realpath(node)).parent.parent
        if _under(tree, Path("/usr")):
            return [], SYSTEM_PATH
        return [tree], f"{tree / 'bin'}:{SYSTEM_PATH}"
    if runtime == "java":
        return java_trees()
    return [], SYSTEM_PATH


def python_start_hooks() -> list[str]:
    """The host's ``.pth`` files in the site directories of the interpreter bots run.

    ``site`` executes the ``import`` lines of every ``.pth`` file at each interpreter
    start: code of the host's installation (an editable install's import finder that
    points into the arena's source tree, a machine's certificate hook, setuptools'
    ``distutils`` shim), none of it the bot's. The sandbox masks each with an empty file
    (docs/design/SANDBOX.md, "Python's start-up hooks"); the directories are scanned at each
    launch, so a package installed while the arena runs is masked from the next on.
    """
    found: list[str] = []
    for directory in site.getsitepackages():
        try:
            with os.scandir(directory) as entries:
                found += sorted(e.path for e in entries if e.name.endswith(".pth"))
        except OSError:
            continue
    return found


def java_home() -> Path:
    """The home of the JDK that ``java`` on PATH runs (the one the sandbox binds)."""
    java = shutil.which("java") or "/usr/bin/java"
    return Path(os.path.realpath(java)).parent.parent


@functools.cache
def java_trees() -> tuple[list[Path], str]:
    """The host JDK of ``java`` on PATH, and the /etc directories its tree links to.

    Debian's JDK keeps its configuration in /etc/java-<N>-openjdk (the tree's
    ``conf/security/java.security``, ``jvm.cfg`` ... are symlinks there): without
    it ``java.security.Security`` fails to load. That directory is bound whole;
    any other /etc file the tree links to (``lib/security/cacerts``) alone. A
    JDK outside /usr (Temurin in /opt, say) is bound at its own path and its
    ``bin`` goes first on PATH.
    """
    home = java_home()
    etc_paths: set[Path] = set()
    for root, _dirs, files in os.walk(home):
        for name in files:
            target = Path(os.path.realpath(Path(root) / name))
            if not _under(target, Path("/etc")) or not target.exists():
                continue
            top = Path("/etc") / target.parts[2]  # /etc/java-17-openjdk: bound whole
            etc_paths.add(top if top.name.startswith("java") else target)
    trees = sorted(etc_paths)
    if _under(home, Path("/usr")):
        return trees, SYSTEM_PATH
    return [home, *trees], f"{home / 'bin'}:{SYSTEM_PATH}"


def _under(path: Path, ancestor: Path) -> bool:
    return path == ancestor or ancestor in path.parents


class _Mounts:
    """Accumulates mount arguments, creating parent directories world-readable."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self.made: set[str] = {"/", "/tmp", "/proc", "/dev", "/usr"}

    def parents(self, dest: str) -> None:
        for parent in reversed(PurePosixPath(dest).parents):
            if str(parent) not in self.made:
                self.args += ["--perms", "0755", "--dir", str(parent)]
                self.made.add(str(parent))

    def add(self, option: str, source: str, dest: str) -> None:
        self.parents(dest)
        self.args += [option, source, dest]
        self.made.add(dest)


def bwrap_argv(plan: SandboxPlan, fds: SandboxFds, *, bwrap: str = BWRAP) -> list[str]:
    """The full command: bwrap, its options, then the bot's command."""
    trees, path_value = runtime_trees(plan.runtime)
    argv = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
    if not plan.share_net:
        argv.append("--unshare-net")
    if not plan.as_root:  # unprivileged: a user namespace maps our uid to the bot's
        argv += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    argv += ["--hostname", "kahuna-bot", "--die-with-parent", "--new-session"]
    mounts = _Mounts()
    mounts.add("--ro-bind", "/usr", "/usr")
    for name in TOP_LEVEL_LINKS:
        host = Path("/") / name
        if host.is_symlink():
            argv += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            mounts.add("--ro-bind", str(host), f"/{name}")
    for etc_path in ETC_FILES:
        mounts.add("--ro-bind-try", etc_path, etc_path)
    # world-readable (bwrap's default is 0600 root), so the bot's uid has a name
    mounts.args += ["--perms", "0644", "--ro-bind-data", str(fds.passwd), "/etc/passwd"]
    mounts.args += ["--perms", "0644", "--ro-bind-data", str(fds.group), "/etc/group"]
    argv += mounts.args
    mounts.args = []
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--perms", "1777", "--size", str(plan.limits.tmp_size_mb * 1024 * 1024)]
    argv += ["--tmpfs", "/tmp"]
    for tree in trees:
        mounts.add("--ro-bind", str(tree), str(tree))
    if plan.runtime == "python" and plan.empty_file is not None:
        for hook in python_start_hooks():  # inside trees bound above: no parents to make
            mounts.args += ["--ro-bind", str(plan.empty_file), hook]
    for host_path, inside in plan.extra_ro_binds:
        mounts.add("--ro-bind", str(host_path), inside)
    mounts.add("--ro-bind", str(plan.bot_dir), BOT_DIR_INSIDE)
    mounts.add("--ro-bind", str(plan.socket_path), SANDBOX_SOCKET)
    if plan.writable_file is not None:
        host_file, inside = plan.writable_file
        mounts.add("--bind", str(host_file), inside)
    argv += mounts.args
    argv += ["--chdir", BOT_DIR_INSIDE, "--clearenv"]
    base_env = {"PATH": path_value, "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
    for key, value in {**base_env, **plan.env}.items():
        argv += ["--setenv", key, value]
    if fds.seccomp is not None:
        argv += ["--seccomp", str(fds.seccomp)]
    if plan.as_root:  # no user namespace: bwrap keeps two capabilities for setpriv only
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--"]
        argv += drop_to_bot_uid(plan.uid)
    else:
        argv.append("--")
    return argv + list(plan.command)


def drop_to_bot_uid(uid: int = SANDBOX_UID) -> list[str]:
    """setpriv: become the unprivileged uid with no capabilities left at all."""
    return [
        SETPRIV,
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
    ]


def check_env(env: Mapping[str, str]) -> None:
    """Refuse environment entries that cannot be passed to a process."""
    for key, value in env.items():
        if not isinstance(key, str) or not key or "=" in key or "\0" in key:
            raise ValueError(f"invalid environment variable name {key!r}")
        if not isinstance(value, str) or "\0" in value:
            raise ValueError(f"invalid value for environment variable {key}: {value!r}")


def command_words(command: Sequence[str]) -> tuple[str, ...]:
    words = tuple(command)
    if not words or not all(isinstance(word, str) and word and "\0" not in word for word in words):
        raise ValueError(f"command must be a non-empty list of non-empty strings, got {command!r}")
    return words
