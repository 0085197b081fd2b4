"""What a sandbox may use, what the host can give, and the errors for both."""

from __future__ import annotations

from dataclasses import dataclass

SANDBOX_SOCKET = "/run/kahuna/referee.sock"
"""Where the referee's Unix socket appears inside every sandbox."""

BOT_DIR_INSIDE = "/bot"
"""Where the bot's directory is mounted (read-only) and the working directory."""

SANDBOX_UID = 65534
"""The uid (and gid) of a bot inside an unprivileged arena's user namespace, and
in the probe. As root each bot gets a host uid of its own (``arena.sandbox.uids``)."""

RUNTIMES = ("python", "node", "java", "native")


class SandboxUnavailableError(RuntimeError):
    """The host lacks a layer the sandbox needs; the message names it exactly."""


class SandboxConfigError(ValueError):
    """A launch request that cannot be honoured (bad limits, missing directory, ...)."""


@dataclass(frozen=True)
class SandboxLimits:
    """Per-bot limits; every tournament may choose its own."""

    memory_mb: int = 512
    max_processes: int = 64
    cpu_cores: float = 1.0
    max_open_files: int = 256
    max_file_size_mb: int = 16
    tmp_size_mb: int = 64

    def __post_init__(self) -> None:
        minimums: dict[str, float] = {
            "memory_mb": 16,
            "max_processes": 4,
            "cpu_cores": 0.01,
            "max_open_files": 16,
            "max_file_size_mb": 1,
            "tmp_size_mb": 1,
        }
        for name, minimum in minimums.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SandboxConfigError(f"sandbox limit {name} must be a number, got {value!r}")
            if value < minimum:
                raise SandboxConfigError(
                    f"sandbox limit {name} must be at least {minimum}, got {value!r}"
                )
            if name != "cpu_cores" and not isinstance(value, int):
                raise SandboxConfigError(
                    f"sandbox limit {name} must be a whole number, got {value!r}"
                )


@dataclass(frozen=True)
class HostReport:
    """What this host offers the sandbox (see :func:`arena.sandbox.probe_host`)."""

    namespaces: bool
    cgroup_version: int | None
    seccomp: bool
    missing: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return not self.missing
