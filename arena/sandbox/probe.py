"""What this host can give the sandbox, found by trying each layer for real."""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import subprocess
from pathlib import Path

from arena.sandbox import seccomp
from arena.sandbox.bwrap import BWRAP, SETPRIV
from arena.sandbox.cgroups import CGROUP_ROOT, CgroupError, create_bot_cgroup, detect_version
from arena.sandbox.limits import HostReport, SandboxLimits, SandboxUnavailableError

PROBE_TIMEOUT_S = 10.0


def _namespace_args(bwrap: str = BWRAP) -> list[str]:
    args = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
    if os.geteuid() != 0:
        args.append("--unshare-user")
    return [*args, "--ro-bind", "/", "/", "--proc", "/proc", "--die-with-parent"]


def _run_bwrap(args: list[str], pass_fds: tuple[int, ...] = ()) -> str | None:
    """None if bwrap ran ``true`` successfully, else its complaint."""
    try:
        done = subprocess.run(
            [*args, "true"],
            pass_fds=pass_fds,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = done.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit status {done.returncode}"


def probe_namespaces(bwrap: str = BWRAP) -> str | None:
    if not Path(bwrap).is_file() or shutil.which(bwrap) is None:
        return f"namespaces: {bwrap} not found (install the Debian package bubblewrap)"
    if os.geteuid() == 0 and not Path(SETPRIV).is_file():
        return f"namespaces: {SETPRIV} not found (install the Debian package util-linux)"
    complaint = _run_bwrap(_namespace_args(bwrap))
    if complaint is not None:
        return f"namespaces: bwrap cannot create pid/net/ipc/uts/mount namespaces: {complaint}"
    return None


def probe_seccomp() -> str | None:
    try:
        program = seccomp.build_filter()
    except seccomp.SeccompUnsupportedError as exc:
        return f"seccomp: {exc}"
    status = Path("/proc/self/status").read_text()
    if "Seccomp:" not in status:
        return "seccomp: the kernel has no seccomp support (no Seccomp: in /proc/self/status)"
    fd = seccomp.filter_fd(program)
    try:
        complaint = _run_bwrap([*_namespace_args(), "--seccomp", str(fd)], pass_fds=(fd,))
    finally:
        os.close(fd)
    if complaint is not None:
        return f"seccomp: bwrap could not load the filter: {complaint}"
    return None


def probe_cgroups(root: Path = CGROUP_ROOT) -> tuple[int | None, str | None]:
    version = detect_version(root)
    if version is None:
        return None, f"cgroups: no v1 or v2 hierarchy mounted at {root}"
    try:
        name = f"probe-{os.getpid()}-{secrets.token_hex(3)}"
        group = create_bot_cgroup(name, SandboxLimits(), root=root)
    except CgroupError as exc:
        return version, f"cgroups: v{version} hierarchy is not writable: {exc}"
    group.remove()
    return version, None


@functools.lru_cache(maxsize=1)
def _cached_probe() -> HostReport:
    namespace_problem = probe_namespaces()
    seccomp_problem = probe_seccomp() if namespace_problem is None else (
        "seccomp: needs bwrap namespaces to load the filter"
    )
    cgroup_version, cgroup_problem = probe_cgroups()
    missing = tuple(
        problem
        for problem in (namespace_problem, cgroup_problem, seccomp_problem)
        if problem is not None
    )
    return HostReport(
        namespaces=namespace_problem is None,
        cgroup_version=cgroup_version if cgroup_problem is None else None,
        seccomp=seccomp_problem is None,
        missing=missing,
    )


def probe_host(*, refresh: bool = False) -> HostReport:
    """Try every layer once (cached for the life of the process)."""
    if refresh:
        _cached_probe.cache_clear()
    return _cached_probe()


def unavailable_error(report: HostReport) -> SandboxUnavailableError:
    return SandboxUnavailableError(
        "the bot sandbox is unavailable on this host: "
        + "; ".join(report.missing)
        + ". Untrusted bots are refused; pass the explicit unsafe flag to run them "
        "without these layers."
    )
