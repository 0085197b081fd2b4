"""One bot of a match: its private endpoint, its process, its launches.

A ``BotSlot`` is what the referee knows about bot A or bot B for the whole
match, whatever seat it sits in. It launches the bot in the sandbox with a
fresh token per launch, and cuts it off (Goodbye, stream closed, process
tree killed) when a failure leaves the connection unusable.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from arena.logs import get_logger
from arena.protocol import messages
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee.bytecode import compiled_tree
from arena.referee.endpoint import BotEndpoint, OnWire
from arena.referee.judge import Ended, Phase, ReplyWindow
from arena.referee.remote import (
    REMOTE_RUNTIME,
    RemoteSeat,
    SeatOffer,
    SeatOfferHook,
    expires_at_ms,
)
from arena.referee.types import BotSpec, BotStatus, MatchConfig
from arena.resources import PYTHON_BOT_MOUNTS
from arena.sandbox import SANDBOX_SOCKET, BotProcess, SandboxLimits, javacds, launch_bot

STDERR_KEPT_CHARS = 300
"""How much of the start and of the end of a failed bot's stderr is kept (each)."""
EXIT_GRACE_S = 1.0
"""A stream that ends is a crash if the process exits within this, else a disconnect
(0.3 s was too short for a Python bot unwinding a traceback on a loaded machine:
its crash read as a disconnect). A failed game waits this long at most, charged to
nobody."""


@dataclass
class BotSlot:
    """Bot A (index 0) or bot B (index 1) of a match."""

    index: int
    spec: BotSpec
    name: str
    endpoint: BotEndpoint
    work_dir: Path
    expect: ReplyWindow = field(default_factory=lambda: ReplyWindow(token=""))
    process: BotProcess | RemoteSeat | None = None
    launches: int = 0
    ready: bool = False
    last_failure: BotStatus | None = None
    next_request_id: int = 1
    offer_seat: SeatOfferHook | None = None  # how a remote bot's seat is offered
    match_id: str = ""  # the referee's match id, for seat offers
    train_class_archive: bool = False
    """A Java bot's launches write a class-data archive at exit (arena/sandbox/javacds.py)
    instead of using one; ``take_class_archive`` keeps it."""
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    """The sandbox limits of its latest launch."""

    def can_launch(self, max_restarts: int) -> bool:
        return self.launches <= max_restarts

    def launch(self, config: MatchConfig, sandboxed_paths: bool, *, idle: bool = False) -> None:
        """Start the bot (again) with a fresh token; it must now say Hello. ``idle``: in the
        idle scheduling class (launched ahead of its turn, ``BotProcess.set_idle``)."""
        self.kill()
        self.launches += 1
        self.limits = config.limits
        self.endpoint.new_launch()
        self.expect = ReplyWindow(token=secrets.token_urlsafe(24), phase=Phase.AWAIT_HELLO)
        if self.spec.runtime == REMOTE_RUNTIME:
            self._offer(config)
            return
        env = {
            "KAHUNA_REFEREE": f"unix://{SANDBOX_SOCKET}",
            "KAHUNA_TOKEN": self.expect.token,
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        binds: list[tuple[Path, str]] = []
        if self.spec.runtime == "python":  # the generated code and the SDK (arena/resources.py)
            if sandboxed_paths:
                binds = [(compiled_tree(mount.host_dir()), mount.inside)
                         for mount in PYTHON_BOT_MOUNTS]  # fmt: skip
            env["PYTHONPATH"] = ":".join(m.path_entry(sandboxed_paths) for m in PYTHON_BOT_MOUNTS)
        writable = None
        if self.spec.runtime == "java" and self.spec.class_archives is not None and sandboxed_paths:
            if self.train_class_archive:
                env[javacds.OPTIONS_ENV] = javacds.DUMP_OPTIONS
                writable = javacds.ARCHIVE_INSIDE
            else:
                archive = javacds.usable_archive(self.spec.class_archives, self.spec.directory)
                if archive is not None:
                    binds.append((archive, javacds.ARCHIVE_INSIDE))
                    env[javacds.OPTIONS_ENV] = javacds.USE_OPTIONS
        self.process = launch_bot(
            bot_dir=self.spec.directory,
            command=self.spec.command,
            runtime=self.spec.runtime,
            env=env,
            socket_path=self.endpoint.socket_path,
            limits=config.limits,
            extra_ro_binds=binds,
            stderr_path=self.stderr_path,
            stdout_path=Path(os.devnull),
            unsafe=config.unsafe,
            writable_file=writable,
            idle=idle,
        )
        get_logger(bot=self.name, slot=self.index).info(
            "bot_launched", launch=self.launches, pid=self.process.pid,
            class_archive=env.get(javacds.OPTIONS_ENV, ""),
        )

    def take_class_archive(self) -> int | None:
        """Once a training launch has exited: move the archive its JVM wrote to the
        version's shelf (replacing the shelf's others); its size, or None if none."""
        process, shelf = self.process, self.spec.class_archives
        if not self.train_class_archive or not isinstance(process, BotProcess) or shelf is None:
            return None
        incoming = shelf / f".incoming-{secrets.token_hex(4)}"
        size = process.take_written(incoming, javacds.MAX_ARCHIVE_BYTES)
        if size is not None:
            archive = javacds.archive_path(shelf, self.spec.directory, size)
            incoming.replace(archive)
            javacds.keep_only(archive)
        return size

    def _offer(self, config: MatchConfig) -> None:
        """A remote bot: offer the seat (token, socket, deadline) instead of launching."""
        if self.offer_seat is None:
            raise ValueError(f"bot {self.spec.name!r} is remote: it plays only through arena serve")
        self.process = RemoteSeat(self.endpoint)
        self.offer_seat(
            SeatOffer(
                slot=self.index, bot=self.spec.name, version=self.spec.version,
                token=self.expect.token, socket_path=str(self.endpoint.socket_path),
                referee_match=self.match_id,
                expires_at_ms=expires_at_ms(config.hello_timeout_ms),
            )
        )  # fmt: skip
        get_logger(bot=self.name, slot=self.index).info("seat_offered", launch=self.launches)

    @property
    def stderr_path(self) -> Path:
        return self.work_dir / f"bot{self.index}-{self.launches}.stderr"

    def stderr_excerpt(self) -> str:
        """The first and the last lines the bot wrote to stderr (``STDERR_KEPT_CHARS`` of
        each at most, whole lines where they fit), with a marker where the middle was
        left out: a Go panic or a Java exception names its cause on its first line, an
        interpreter's traceback at its end."""
        try:
            with self.stderr_path.open("rb") as stream:
                head = stream.read(STDERR_KEPT_CHARS * 4).decode("utf-8", "replace")
                stream.seek(0, 2)
                size = stream.tell()
                stream.seek(max(0, size - STDERR_KEPT_CHARS * 4))
                tail = stream.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return excerpt(head, tail, whole=size <= STDERR_KEPT_CHARS * 4)

    def take_request_id(self) -> int:
        request_id = self.next_request_id
        self.next_request_id += 1
        return request_id

    def send(
        self, message: referee_pb2.PlayResponse | bytes, on_wire: OnWire | None = None
    ) -> None:
        """Send a message (or an already serialised frame) if the bot is connected;
        ``on_wire`` as in ``BotEndpoint.send``."""
        if self.ready:
            frame = message if isinstance(message, bytes) else message.SerializeToString()
            self.endpoint.send(frame, on_wire)

    def cut_off(self, status: BotStatus, reason: str) -> None:
        """Say Goodbye, end the stream, kill the process tree."""
        if self.endpoint.connected:
            self.endpoint.send(messages.goodbye_frame(status, reason))
        self.endpoint.close_stream()
        self.endpoint.generation += 1  # whatever the old stream still says is ignored
        self.ready = False
        self.kill()
        self.process = None

    def ended(self, exit_code: int | None) -> Ended:
        """The end of this bot's stream or process, with the limits it ran into (or, for
        a remote bot's seat, why the arena ended its stream)."""
        process = self.process
        cut = process.cut_words() if isinstance(process, RemoteSeat) else ""
        return Ended(self.index, exit_code, self.limits_words(), cut)

    def limits_words(self) -> str:
        """The sandbox limits the running (or just ended) process ran into, in words the
        bot's author can act on; "" if none (or no cgroup says so)."""
        process = self.process
        hit = process.limits_hit() if isinstance(process, BotProcess) else ()
        words = []
        if "memory" in hit:
            words.append(f"out of memory: the sandbox's limit is {self.limits.memory_mb} MiB")
        elif "memory_full" in hit:
            words.append(
                f"it reached the sandbox's memory limit of {self.limits.memory_mb} MiB, where"
                " the kernel takes back its memory as it runs and it slows down"
            )
        if "processes" in hit:
            words.append(
                "a fork or a new thread failed: the sandbox's limit is"
                f" {self.limits.max_processes} processes and threads"
            )
        return "; ".join(words)

    def exit_code_soon(self) -> int | None:
        """The process's exit status if it ends within a short grace, else None."""
        if self.process is None:
            return None
        return self.process.wait(EXIT_GRACE_S)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()


def excerpt(head: str, tail: str, *, whole: bool) -> str:
    """``STDERR_KEPT_CHARS`` of the start of a text (``head``) and of its end (``tail``),
    cut at line ends where a line ends near the cut; ``whole``: ``head`` is all of it."""
    text = head.strip()
    if whole and len(text) <= 2 * STDERR_KEPT_CHARS:
        return text
    first = head[:STDERR_KEPT_CHARS]
    if "\n" in first[STDERR_KEPT_CHARS // 3 :]:
        first = first[: first.rindex("\n")]
    last = tail[-STDERR_KEPT_CHARS:]
    if "\n" in last[: 2 * STDERR_KEPT_CHARS // 3]:
        last = last[last.index("\n") + 1 :]
    return f"{first.rstrip()}\n[...]\n{last.rstrip()}"
