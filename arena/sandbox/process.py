"""Start one untrusted bot in its sandbox, watch it, and kill its whole tree."""

from __future__ import annotations

import itertools
import os
import resource
import secrets
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from arena.logs import get_logger
from arena.sandbox import seccomp
from arena.sandbox.affinity import pin_to_quota
from arena.sandbox.bwrap import (
    SETPRIV,
    SandboxFds,
    SandboxPlan,
    bwrap_argv,
    check_env,
    command_words,
    group_text,
    passwd_text,
)
from arena.sandbox.cgroups import CgroupError, create_bot_cgroup
from arena.sandbox.drain import Drain, drain_to
from arena.sandbox.limits import (
    RUNTIMES,
    SANDBOX_SOCKET,
    SANDBOX_UID,
    HostReport,
    SandboxConfigError,
    SandboxLimits,
    SandboxUnavailableError,
)
from arena.sandbox.probe import probe_host, unavailable_error
from arena.sandbox.running import BotProcess, Resources, release, wait_gone
from arena.sandbox.spawner import spawn
from arena.sandbox.staging import stage_sources
from arena.sandbox.uids import allocate_uid
from arena.sandbox.watchdog import ensure_watchdog

# The launcher: waits for "go" on stdin (sent once the parent has put it in the
# bot's cgroup, set its rlimits and its CPU affinity), then becomes bwrap with
# stdin on /dev/null.
GATE_EXIT_STATUS = 125  # the parent died or failed before saying "go"
GATE_SCRIPT = (
    f'IFS= read -r go && [ "$go" = go ] || exit {GATE_EXIT_STATUS}; exec "$@" </dev/null'
)
RESERVED_INSIDE = frozenset(
    {"/", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc",
     "/dev", "/tmp", "/bot"}
)
_launch_counter = itertools.count(1)


def _validate(
    bot_dir: Path,
    command: Sequence[str],
    runtime: str,
    env: Mapping[str, str],
    socket_path: Path,
    limits: SandboxLimits,
    extra_ro_binds: Sequence[tuple[Path, str]],
    stderr_path: Path | None,
    stdout_path: Path | None,
    writable_file: str | None = None,
) -> tuple[str, ...]:
    if runtime not in RUNTIMES:
        raise SandboxConfigError(f"unknown runtime {runtime!r} (expected one of {RUNTIMES})")
    if not isinstance(limits, SandboxLimits):
        raise SandboxConfigError(f"limits must be SandboxLimits, got {type(limits).__name__}")
    if not isinstance(env, Mapping):
        raise SandboxConfigError(f"env must be a mapping of names to values, got {env!r}")
    try:
        words = command_words(command)
        check_env(env)
    except ValueError as exc:
        raise SandboxConfigError(str(exc)) from exc
    if not bot_dir.is_absolute() or not bot_dir.is_dir():
        raise SandboxConfigError(f"bot directory {bot_dir} is not an existing absolute directory")
    unreadable = _unreadable_by_others(bot_dir)
    if unreadable:
        raise SandboxConfigError(
            f"bot directory {bot_dir}: not readable by the sandbox's unprivileged uid: "
            f"{', '.join(unreadable)}; make it and its files world-readable (chmod -R a+rX)"
        )
    if not socket_path.is_absolute() or not socket_path.exists():
        raise SandboxConfigError(f"referee socket {socket_path} does not exist")
    for host_path, inside in extra_ro_binds:
        if not Path(host_path).exists():
            raise SandboxConfigError(f"extra read-only bind source {host_path} does not exist")
        _check_inside("extra read-only bind target", inside)
    if writable_file is not None:
        _check_inside("writable file", writable_file)
        if writable_file in {inside for _, inside in extra_ro_binds} | {SANDBOX_SOCKET}:
            raise SandboxConfigError(f"writable file {writable_file!r} is bound already")
    for label, path in (("stderr_path", stderr_path), ("stdout_path", stdout_path)):
        if path is not None and not Path(path).parent.is_dir():
            raise SandboxConfigError(f"{label} {path}: its directory does not exist")
    return words


def _check_inside(label: str, inside: object) -> None:
    if not isinstance(inside, str) or not inside.startswith("/") or ".." in inside.split("/"):
        raise SandboxConfigError(f"{label} {inside!r} must be absolute")
    top = "/" + inside.strip("/").split("/")[0]
    if top in RESERVED_INSIDE or inside.rstrip("/") == "/run/kahuna":
        raise SandboxConfigError(f"{label} {inside!r} would cover the sandbox's own {top}")


def _unreadable_by_others(bot_dir: Path, shown: int = 5) -> list[str]:
    """The directory itself and its direct entries that "other" cannot read (a
    cheap check of what a bot starts from; deeper files are the bot's business)."""
    bad = [] if bot_dir.stat().st_mode & 0o005 == 0o005 else ["."]
    with os.scandir(bot_dir) as entries:
        for entry in entries:
            if entry.is_symlink():
                continue
            needed = 0o005 if entry.is_dir() else 0o004
            if entry.stat().st_mode & needed != needed:
                bad.append(entry.name)
    return sorted(bad)[:shown]


def data_fd(text: str) -> int:
    fd = os.memfd_create("kahuna-data", 0)
    os.write(fd, text.encode())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _set_rlimits(pid: int, limits: SandboxLimits) -> None:
    file_size_bytes = limits.max_file_size_mb * 1024 * 1024
    resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0))
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (limits.max_open_files, limits.max_open_files))
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (file_size_bytes, file_size_bytes))


def _open_output(path: Path | None) -> IO[bytes] | int:
    if path is None:
        return subprocess.DEVNULL
    return open(path, "ab")


class _Outputs:
    """The gate's stdout and stderr. Through a pipe (``piped``) a real file is
    written by this process's drain thread (``arena.sandbox.drain``) up to the
    file-size limit, so the bot's fd 1 and 2 are ``pipe:[…]``, not the host file's
    name; past the limit the pipe's read end is closed and the bot's next write gets
    SIGPIPE. ``/dev/null`` is opened directly."""

    def __init__(
        self, stdout_path: Path | None, stderr_path: Path | None, limits: SandboxLimits,
        *, piped: bool,
    ) -> None:
        self.handles: dict[Path | None, IO[bytes] | int] = {}
        self.drainers: list[Drain] = []
        self._limit = limits.max_file_size_mb * 1024 * 1024
        self._piped = piped
        self.stderr = self._for(stderr_path)
        self.stdout = self._for(stdout_path if stdout_path is not None else stderr_path)

    def _for(self, path: Path | None) -> IO[bytes] | int:
        if path in self.handles:
            return self.handles[path]
        if path is None or not self._piped or Path(path) == Path(os.devnull):
            handle = _open_output(path)
        else:
            read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
            try:
                self.drainers.append(drain_to(read_fd, Path(path), self._limit))
            except BaseException:
                os.close(write_fd)
                raise
            handle = os.fdopen(write_fd, "wb", buffering=0)
        self.handles[path] = handle
        return handle

    def close(self) -> None:
        """Close the arena's copies (the gate has its own): the drainer sees EOF
        when the bot's tree is gone."""
        for handle in self.handles.values():
            if not isinstance(handle, int):
                handle.close()


def _start_gated(
    argv: list[str],
    *,
    name: str,
    limits: SandboxLimits,
    pass_fds: tuple[int, ...],
    cwd: Path | None,
    env: Mapping[str, str] | None,
    stdout_path: Path | None,
    stderr_path: Path | None,
    use_cgroup: bool,
    piped_output: bool = False,
    idle: bool = False,
) -> Resources:
    """Fork the gate, put it in the cgroup (in the idle class first, with ``idle``) and set
    rlimits, then let it exec ``argv``."""
    if use_cgroup:
        ensure_watchdog()
    try:
        cgroup = create_bot_cgroup(name, limits) if use_cgroup else None
    except CgroupError as exc:
        raise SandboxUnavailableError(f"cgroups: {exc}") from exc
    if idle and cgroup is not None:
        cgroup.set_idle(True)  # refused: it runs as any bot does (logged)
    try:
        outputs = _Outputs(stdout_path, stderr_path, limits, piped=piped_output)
    except BaseException:
        if cgroup is not None:
            cgroup.remove()
        raise

    def fork_gate() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            ["/bin/sh", "-c", GATE_SCRIPT, "kahuna-gate", *argv],
            stdin=subprocess.PIPE,
            stdout=outputs.stdout,
            stderr=outputs.stderr,
            pass_fds=pass_fds,
            cwd=cwd,
            env=dict(env) if env is not None else {"PATH": "/usr/bin:/bin"},
            start_new_session=True,
        )

    try:
        proc = spawn(fork_gate)
    except OSError:
        outputs.close()
        for drainer in outputs.drainers:
            drainer.wait(5.0)  # EOF: the only write end is closed
        if cgroup is not None:
            cgroup.remove()
        raise
    outputs.close()
    resources = Resources(
        name, proc, cgroup, None if use_cgroup else proc.pid, drainers=tuple(outputs.drainers)
    )
    try:
        if cgroup is not None:
            cgroup.add_pid(proc.pid)
        _set_rlimits(proc.pid, limits)
        pin_to_quota(proc.pid, limits.cpu_cores)
        assert proc.stdin is not None
        proc.stdin.write(b"go\n")
        proc.stdin.close()
    except BaseException:
        release(resources)
        raise
    return resources


def launch_bot(
    *,
    bot_dir: Path,
    command: Sequence[str],
    runtime: str,
    env: Mapping[str, str],
    socket_path: Path,
    limits: SandboxLimits,
    extra_ro_binds: Sequence[tuple[Path, str]] = (),
    stderr_path: Path | None = None,
    unsafe: bool = False,
    stdout_path: Path | None = None,
    host: HostReport | None = None,
    share_net: bool = False,
    writable_file: str | None = None,
    idle: bool = False,
) -> BotProcess:
    """Start ``command`` in ``bot_dir`` inside the sandbox; see docs/design/SANDBOX.md.

    Inside, the bot directory is ``/bot`` (read-only, the working directory) and
    the referee socket is ``SANDBOX_SOCKET``. ``host`` overrides the probe (to
    exercise the unsafe path); ``share_net`` keeps the host network namespace so
    that tests can prove the seccomp filter alone refuses IP sockets.
    ``writable_file``: where an empty file the bot may write appears inside (a
    Java class-data archive written at exit); ``BotProcess.take_written`` moves
    what it wrote out once it has exited. Sandboxed launches only.
    ``idle``: the bot's cgroup is in the idle scheduling class from before its first
    instruction (``BotProcess.set_idle``: a launch ahead of its turn).
    """
    bot_dir = Path(bot_dir)
    socket_path = Path(socket_path)
    words = _validate(
        bot_dir, command, runtime, env, socket_path, limits, extra_ro_binds,
        stderr_path, stdout_path, writable_file,
    )
    report = host if host is not None else probe_host()
    if report.missing and not unsafe:
        raise unavailable_error(report)
    name = f"bot-{os.getpid()}-{next(_launch_counter)}-{secrets.token_hex(3)}"
    log = get_logger(bot=name, runtime=runtime)
    use_cgroup = report.cgroup_version is not None
    if not report.namespaces:
        if writable_file is not None:
            raise SandboxConfigError("a writable file needs the sandbox's namespaces")
        return _launch_unsafe(
            words, bot_dir, env, socket_path, limits, report, name,
            stdout_path=stdout_path, stderr_path=stderr_path, use_cgroup=use_cgroup,
            idle=idle,
        )
    # As root each bot gets a host uid of its own (per-user kernel limits are not
    # shared); unprivileged, bwrap maps the arena's own uid and there is no choice.
    lease = allocate_uid() if os.geteuid() == 0 else None
    try:
        # mountinfo shows each bind's source path: bind from a neutral staging copy
        staged = stage_sources(
            bot_dir.resolve(), socket_path,
            tuple((Path(src).resolve(), dest) for src, dest in extra_ro_binds),
            writable_owner=None if writable_file is None else (
                lease.uid if lease is not None else os.geteuid()
            ),
        )
    except BaseException:
        if lease is not None:
            lease.release()
        raise
    plan = SandboxPlan(
        uid=lease.uid if lease is not None else SANDBOX_UID,
        bot_dir=staged.bot_dir,
        command=words,
        runtime=runtime,
        env=dict(env),
        socket_path=staged.socket_path,
        limits=limits,
        extra_ro_binds=staged.extra_ro_binds,
        writable_file=(
            None if staged.writable is None or writable_file is None
            else (staged.writable, writable_file)
        ),
        share_net=share_net,
        empty_file=staged.empty,
    )
    try:
        resources = _launch_sandboxed(
            plan, report, name, stdout_path=stdout_path, stderr_path=stderr_path, idle=idle
        )
    except BaseException:
        staged.remove()
        if lease is not None:
            lease.release()
        raise
    resources.uid_lease = lease
    resources.staged = staged
    bot = BotProcess(resources, sandboxed=True)
    if report.missing:
        log.warning("sandbox_unsafe_launched", missing=list(report.missing), pid=resources.proc.pid)
    log.info(
        "sandbox_launched", pid=resources.proc.pid, cgroup=resources.cgroup is not None,
        uid=plan.uid,
    )
    return bot


def _launch_sandboxed(
    plan: SandboxPlan,
    report: HostReport,
    name: str,
    *,
    stdout_path: Path | None,
    stderr_path: Path | None,
    idle: bool = False,
) -> Resources:
    """bwrap with its data (passwd, group, seccomp program) on inherited memfds."""
    try:
        os.chmod(plan.socket_path, 0o666)  # the bot's uid must be able to connect
    except OSError as exc:
        raise SandboxConfigError(
            f"cannot let the bot connect to referee socket {plan.socket_path}: {exc.strerror}"
        ) from exc
    fds = SandboxFds(
        passwd=data_fd(passwd_text(plan.uid)),
        group=data_fd(group_text(plan.uid)),
        seccomp=seccomp.filter_fd() if report.seccomp else None,
    )
    open_fds = tuple(fd for fd in (fds.passwd, fds.group, fds.seccomp) if fd is not None)
    try:
        return _start_gated(
            bwrap_argv(plan, fds), name=name, limits=plan.limits, pass_fds=open_fds,
            cwd=None, env=None, stdout_path=stdout_path, stderr_path=stderr_path,
            use_cgroup=report.cgroup_version is not None, piped_output=True, idle=idle,
        )
    finally:
        for fd in open_fds:
            os.close(fd)


def _launch_unsafe(
    words: tuple[str, ...],
    bot_dir: Path,
    env: Mapping[str, str],
    socket_path: Path,
    limits: SandboxLimits,
    report: HostReport,
    name: str,
    *,
    stdout_path: Path | None,
    stderr_path: Path | None,
    use_cgroup: bool,
    idle: bool = False,
) -> BotProcess:
    """No namespaces: a plain process in its own session, rlimits and cgroup if any."""
    real_socket = str(socket_path.resolve())
    bot_env = {key: value.replace(SANDBOX_SOCKET, real_socket) for key, value in env.items()}
    bot_env.setdefault("PATH", os.environ.get("PATH", "/usr/bin:/bin"))
    argv = [SETPRIV, "--pdeathsig", "KILL", "--", *words]
    resources = _start_gated(
        argv, name=name, limits=limits, pass_fds=(), cwd=bot_dir, env=bot_env,
        stdout_path=stdout_path, stderr_path=stderr_path, use_cgroup=use_cgroup, idle=idle,
    )
    get_logger(bot=name).warning(
        "sandbox_unsafe_launched",
        pid=resources.proc.pid,
        missing=list(report.missing),
        note="bot runs without namespaces, seccomp or a private filesystem",
    )
    return BotProcess(resources, sandboxed=False)


__all__ = ["BotProcess", "SandboxUnavailableError", "launch_bot", "wait_gone"]
