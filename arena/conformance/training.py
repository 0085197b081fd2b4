"""The training launch that writes a Java bot version's class-data archive.

The bot is played through ``TRAINING_SCENARIOS`` (two whole games on one
connection, both seats) by the conformance check's scripted referee, in its
sandbox, with ``-XX:ArchiveClassesAtExit`` (arena/sandbox/javacds.py): the
classes it loads to say Hello and to play are what its JVM archives when it
exits after MatchOver. The archive is kept only if the bot played both games
and exited with status 0; otherwise the version simply launches without one.
No match clock runs meanwhile: `arena bot add`, SubmitBot, UploadBot and a tournament
before its first match call it (`ensure_class_archive`), never a match.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

from arena.conformance.runner import _Checker
from arena.conformance.scenarios import SCENARIOS
from arena.logs import get_logger
from arena.referee.types import BotSpec, MatchConfig
from arena.sandbox import SandboxLimits, javacds, probe_host
from arena.sandbox.watchdog import work_directory

TRAINING_SCENARIOS = tuple(s for s in SCENARIOS if s.name in ("plain_seat0", "plain_seat1"))
TRAINING_EXIT_GRACE_S = 60.0
"""The JVM writes the archive as it exits: allow for that on a loaded machine."""


@dataclass(frozen=True)
class Training:
    """What a training run did: the archive's size (None: none kept) and why not."""

    archive: Path | None
    size_bytes: int | None
    seconds: float
    problem: str | None = None

    def text(self) -> str:
        if self.problem is not None:
            return f"no class-data archive: {self.problem}"
        assert self.size_bytes is not None
        return (f"class-data archive built ({self.size_bytes / 2**20:.1f} MiB,"
                f" {self.seconds:.1f} s)")  # fmt: skip


def needs_class_archive(spec: BotSpec) -> bool:
    """A Java bot with a shelf but no archive there for this JDK and these files."""
    return (
        spec.runtime == "java" and spec.class_archives is not None
        and javacds.usable_archive(spec.class_archives, spec.directory) is None
    )  # fmt: skip


_FAILED: set[tuple[Path, str]] = set()
"""Archives whose training failed in this process: not tried again before each match."""


def ensure_class_archive(spec: BotSpec, *, limits: SandboxLimits | None = None) -> Training | None:
    """Train ``spec``'s archive if it needs one (``needs_class_archive``) and its training
    has not failed in this process already; None if nothing was tried."""
    if not needs_class_archive(spec):
        return None
    assert spec.class_archives is not None
    wanted = (spec.class_archives, javacds.archive_key(spec.directory))
    if wanted in _FAILED:
        return None
    training = train_class_archive(spec, limits=limits)
    if training.archive is None:
        _FAILED.add(wanted)
    return training


def train_class_archive(spec: BotSpec, *, limits: SandboxLimits | None = None) -> Training:
    """Play the training scenarios with the archive written at exit; keep it on the shelf."""
    started = time.monotonic()
    shelf = spec.class_archives
    if spec.runtime != "java" or shelf is None:
        return Training(None, None, 0.0, "not a Java bot with a shelf for archives")
    if not probe_host().namespaces:
        return Training(None, None, 0.0, "the host cannot sandbox the training launch")
    base = limits or SandboxLimits()
    room_mb = javacds.MAX_ARCHIVE_BYTES // 2**20
    config = MatchConfig(limits=dataclasses.replace(
        base, max_file_size_mb=max(base.max_file_size_mb, room_mb)
    ))  # fmt: skip
    with work_directory("train-") as work:
        checker = _Checker(spec, config, Path(work), train=True,
                           exit_grace_s=TRAINING_EXIT_GRACE_S)  # fmt: skip
        report = checker.run(TRAINING_SCENARIOS)
    seconds = time.monotonic() - started
    sizes = [size for size in checker.archive_sizes if size is not None]
    log = get_logger(bot=spec.name, version=spec.version)
    if not report.passed or not sizes:
        failed = "; ".join(f"{r.name}: {r.problem}" for r in report.failed)
        problem = failed or "the JVM wrote no archive (see the bot's stderr)"
        log.warning("class_archive_not_built", problem=problem)
        return Training(None, None, seconds, problem)
    archive = javacds.archive_path(shelf, spec.directory, sizes[-1])
    javacds.prune(shelf.parent.parent)
    log.info("class_archive_built", bytes=sizes[-1], seconds=round(seconds, 2))
    return Training(archive, sizes[-1], seconds)
