"""arena.sandbox.drain: bots' output pipes copied to files by one thread, up to a limit.

Real pipes and real writers (threads of this process, and sandboxed bots): what is
written arrives whole, in order and at once; the limit cuts the file at exactly its
size and the writer gets EPIPE; a launch starts no drainer process.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from arena.sandbox import SandboxLimits, drain
from arena.sandbox.drain import drain_to
from arena.testing.crowd import Crowd
from arena.testing.waiting import assert_stays, wait_until

from .conftest import Harness


def _pipe_to(path: Path, limit: int) -> tuple[int, object]:
    read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
    return write_fd, drain_to(read_fd, path, limit)


def test_everything_written_arrives_in_order_and_the_drain_ends_at_eof(tmp_path: Path) -> None:
    path = tmp_path / "out"
    write_fd, drain = _pipe_to(path, 1 << 20)
    chunks = [bytes([i]) * (i * 97 % 5000 + 1) for i in range(200)]
    for chunk in chunks:
        os.write(write_fd, chunk)
    assert_stays(lambda: not drain.wait(0), 0.05, "the drain open while its writer is")  # type: ignore[attr-defined]
    os.close(write_fd)
    assert drain.wait(5)  # type: ignore[attr-defined]
    assert path.read_bytes() == b"".join(chunks)


def test_each_read_is_in_the_file_at_once(tmp_path: Path) -> None:
    path = tmp_path / "out"
    write_fd, drain = _pipe_to(path, 1 << 20)
    os.write(write_fd, b"first line\n")
    # the writer is still there
    wait_until(lambda: path.read_bytes() == b"first line\n", "the line in the file", 5,
               interval_s=0.005, state=path.read_bytes)  # fmt: skip
    os.close(write_fd)
    assert drain.wait(5)  # type: ignore[attr-defined]


@pytest.mark.parametrize("limit", [1, 1000, 65536, 65537, 200_000])
def test_the_limit_cuts_the_file_at_its_size_and_the_writer_gets_epipe(
    tmp_path: Path, limit: int
) -> None:
    path = tmp_path / "out"
    write_fd, drain = _pipe_to(path, limit)
    written = 0
    with pytest.raises(BrokenPipeError):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            written += os.write(write_fd, b"x" * 4096)
    os.close(write_fd)
    assert drain.wait(5)  # type: ignore[attr-defined]
    assert path.stat().st_size == limit
    assert written >= limit


def test_many_pipes_at_once_each_to_its_file(tmp_path: Path) -> None:
    """Twelve writers at once, each through a pipe of its own: each file gets its own
    writer's lines, whole and in order.

    The race, forced: every writer writes more than a pipe holds, then waits until all
    twelve have got that far, so none gets there unless the one thread drains every pipe
    at once (a pump that served one pipe to its end first would leave eleven writers
    blocked); then all write the rest together."""
    crowd = Crowd(PIPES, "the middle of every writer's output")
    drains = []
    failed: list[BaseException] = []

    def write(index: int, fd: int) -> None:
        try:
            for block in range(BLOCKS):
                if block == BLOCKS // 2:
                    crowd.arrive()
                os.write(fd, _block(index, block))
        except BaseException as error:  # the test's thread reports it
            failed.append(error)
        finally:
            os.close(fd)

    threads = []
    for index in range(PIPES):
        write_fd, drain = _pipe_to(tmp_path / f"out{index}", 1 << 24)
        capacity = fcntl.fcntl(write_fd, fcntl.F_GETPIPE_SZ)
        assert (BLOCKS // 2) * len(_block(index, 0)) > capacity  # the first half overfills it
        drains.append(drain)
        threads.append(threading.Thread(target=write, args=(index, write_fd), daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failed == [] and crowd.arrived == PIPES
    for index, drain in enumerate(drains):
        assert drain.wait(5)  # type: ignore[attr-defined]
        expected = b"".join(_block(index, block) for block in range(BLOCKS))
        assert (tmp_path / f"out{index}").read_bytes() == expected


PIPES = 12
BLOCKS = 20


def _block(index: int, block: int) -> bytes:
    """Lines ``index:line`` numbered on from block to block (a misplaced byte shows)."""
    first = block * 1000
    return "".join(f"{index}:{line:06d}\n" for line in range(first, first + 1000)).encode()


def test_drains_made_at_once_by_a_new_process_share_one_pump(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first drains of a process (a forked worker's first launches), made from eight
    threads at once: one pump thread serves them all, and each file gets its own line.

    The race, forced: the pump, made on first use, is made only once all eight have
    asked for it, so any way in for a second pump is taken."""
    asked: list[int] = []
    made: list[int] = []
    pump, pump_class = drain._pump, drain._Pump

    def asking() -> Any:
        asked.append(1)
        return pump()

    def making() -> Any:
        made.append(1)
        wait_until(lambda: len(asked) == PIPES, "every drain asking for the pump", 10,
                   interval_s=0.005, state=lambda: len(asked))  # fmt: skip
        return pump_class()

    monkeypatch.setattr(drain, "_current", None)  # this process's first drains
    monkeypatch.setattr(drain, "_pump", asking)
    monkeypatch.setattr(drain, "_Pump", making)
    crowd = Crowd(PIPES, "a drain's making")
    made_drains: list[tuple[int, int, Any]] = []

    def make(index: int) -> None:
        crowd.arrive()
        made_drains.append((index, *_pipe_to(tmp_path / f"out{index}", 1 << 20)))

    threads = [threading.Thread(target=make, args=(i,)) for i in range(PIPES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(made_drains) == PIPES
    assert len(made) == 1, f"{len(made)} pumps made for one process"
    for index, write_fd, each in made_drains:
        os.write(write_fd, f"line {index}\n".encode())
        os.close(write_fd)
        assert each.wait(5)  # type: ignore[attr-defined]
        assert (tmp_path / f"out{index}").read_text() == f"line {index}\n"


def test_a_stopped_drain_closes_its_pipe(tmp_path: Path) -> None:
    path = tmp_path / "out"
    write_fd, drain = _pipe_to(path, 1 << 20)
    os.write(write_fd, b"kept\n")
    wait_until(lambda: path.read_bytes() == b"kept\n", "the drain's first read", 5,
               interval_s=0.005, state=path.read_bytes)  # fmt: skip
    drain.stop()  # type: ignore[attr-defined]
    assert drain.wait(0)  # type: ignore[attr-defined]
    with pytest.raises(BrokenPipeError):
        os.write(write_fd, b"after the stop\n")
    os.close(write_fd)
    assert (tmp_path / "out").read_bytes() == b"kept\n"


def _children() -> set[int]:
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        text = (task / "children").read_text()
        found |= {int(pid) for pid in text.split()}
    return found


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


@pytest.mark.slow
def test_a_launch_starts_no_drainer_process(harness: Harness) -> None:
    before = _children()
    bot, output = harness.launch("echo started >&2; sleep 5", limits=SandboxLimits())
    wait_until(lambda: "started" in output.read_text(), "the bot's first line", 10)
    started = {_comm(pid) for pid in _children() - before}
    bot.kill()
    assert "bwrap" in started  # the gate, exec'd into bwrap
    assert not started & {"head", "stdbuf"}  # no drainer process: one thread drains every pipe
