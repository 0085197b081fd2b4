"""Real sandboxed processes for the sandbox tests, and a leak check after each test.

Every bot command carries the test's marker in its command line; after each
test no process on the machine may carry it and no cgroup of the test's bots
may remain.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena.sandbox import BotProcess, SandboxLimits, launch_bot, probe_host
from arena.sandbox.cgroups import (
    CGROUP_ROOT,
    V1_CONTROLLERS,
    detect_version,
    own_cgroup_paths,
    read_proc_cgroup,
    v1_group,
)
from arena.sandbox.process import wait_gone


def marked_pids(marker: str) -> list[int]:
    """Every process whose command line contains ``marker``."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def cgroup_dirs(name: str) -> list[Path]:
    """Where a bot's cgroup would be on this host (whether or not it exists)."""
    version = detect_version(CGROUP_ROOT)
    if version == 2:
        return [CGROUP_ROOT / "kahuna-arena" / name]
    own = own_cgroup_paths(read_proc_cgroup())
    return [v1_group(CGROUP_ROOT, controller, own, name) for controller in V1_CONTROLLERS]


@dataclass
class Harness:
    """Launches small untrusted programs (shell or Python) with the test's marker."""

    root: Path
    bot_dir: Path
    socket_path: Path
    listener: socket.socket
    marker: str
    launched: list[BotProcess] = field(default_factory=list)

    def command(self, script: str, lang: str) -> list[str]:
        if lang == "sh":
            return ["/bin/sh", "-c", script, self.marker]
        if lang == "python":
            return ["python3", "-c", script, self.marker]
        if lang == "node":
            return ["node", "-e", script, self.marker]
        raise ValueError(lang)

    def launch(
        self,
        script: str,
        *,
        lang: str = "sh",
        runtime: str | None = None,
        limits: SandboxLimits | None = None,
        env: dict[str, str] | None = None,
        **options: Any,
    ) -> tuple[BotProcess, Path]:
        output = self.root / f"output-{len(self.launched)}.txt"
        bot = launch_bot(
            bot_dir=self.bot_dir,
            command=self.command(script, lang),
            runtime=runtime or ("native" if lang == "sh" else lang),
            env={"MARKER": self.marker, **(env or {})},
            socket_path=self.socket_path,
            limits=limits or SandboxLimits(),
            stderr_path=output,
            **options,
        )
        self.launched.append(bot)
        return bot, output

    def run(
        self, script: str, *, timeout_s: float = 20.0, **options: Any
    ) -> tuple[int | None, str]:
        """Run to completion (or kill at the timeout); exit status and combined output."""
        bot, output = self.launch(script, **options)
        status = bot.wait(timeout_s)
        bot.kill()
        return status, output.read_text()


@pytest.fixture(scope="session")
def host_ready() -> None:
    report = probe_host()
    if report.missing:
        pytest.fail(f"these tests need the full sandbox; host lacks: {report.missing}")


@pytest.fixture
def harness(tmp_path: Path, host_ready: None) -> Iterator[Harness]:
    bot_dir = tmp_path / "bot"
    bot_dir.mkdir()
    bot_dir.chmod(0o755)
    (bot_dir / "bot.txt").write_text("the bot's own file\n")
    (bot_dir / "bot.txt").chmod(0o644)
    socket_dir = Path(tempfile.mkdtemp(prefix="ksbx-", dir="/tmp"))  # short: < 108 chars
    socket_path = socket_dir / "ref.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(socket_path))
    listener.listen(8)
    marker = f"kahuna-sbx-test-{uuid.uuid4().hex[:12]}"
    harness = Harness(tmp_path, bot_dir, socket_path, listener, marker)
    try:
        yield harness
    finally:
        for bot in harness.launched:
            bot.kill()
        listener.close()
        shutil.rmtree(socket_dir, ignore_errors=True)
        assert wait_gone(marked_pids(marker)), f"processes left behind: {marked_pids(marker)}"
        left = [str(d) for bot in harness.launched for d in cgroup_dirs(bot.name) if d.exists()]
        assert not left, f"cgroups left behind: {left}"


def lines_of(text: str) -> Sequence[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]
