"""Untrusted bot processes: bubblewrap namespaces, seccomp, cgroups, rlimits.

See docs/design/SANDBOX.md for what each layer does and what it needs from the host.
"""

from arena.sandbox.limits import (
    BOT_DIR_INSIDE,
    SANDBOX_SOCKET,
    SANDBOX_UID,
    HostReport,
    SandboxConfigError,
    SandboxLimits,
    SandboxUnavailableError,
)
from arena.sandbox.probe import probe_host
from arena.sandbox.process import BotProcess, launch_bot

__all__ = [
    "BOT_DIR_INSIDE",
    "SANDBOX_SOCKET",
    "SANDBOX_UID",
    "BotProcess",
    "HostReport",
    "SandboxConfigError",
    "SandboxLimits",
    "SandboxUnavailableError",
    "launch_bot",
    "probe_host",
]
