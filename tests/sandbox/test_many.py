"""Many launches, in sequence and from several threads at once: nothing leaks."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import pytest

from arena.sandbox import BotProcess, SandboxLimits, process, spawner, watchdog
from arena.testing.crowd import Crowd
from arena.testing.waiting import assert_stays, wait_until

from .conftest import Harness, cgroup_dirs, marked_pids

pytestmark = pytest.mark.slow  # every test here starts a process or a server
LAUNCHES = 8


def open_fds() -> set[tuple[str, str]]:
    """This process's descriptors as (number, what it points at)."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            found.add((fd, os.readlink(f"/proc/self/fd/{fd}")))
        except FileNotFoundError:  # the listing's own descriptor, or one closed meanwhile
            continue
    return found


def leaked_since(before: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """Descriptors open now that were not before (others closing theirs is no leak)."""
    return open_fds() - before


def test_sequential_launches_leak_no_descriptors_or_groups(harness: Harness) -> None:
    harness.launch("true")[0].kill()  # the first launch starts the watchdog (one pipe)
    before = open_fds()
    for _ in range(20):
        bot, _ = harness.launch("echo hi")
        assert bot.wait(20) == 0
        bot.kill()
    assert leaked_since(before) == set()
    assert not [d for bot in harness.launched for d in cgroup_dirs(bot.name) if d.exists()]


def test_bots_outlive_the_thread_that_launched_them(harness: Harness) -> None:
    with ThreadPoolExecutor(max_workers=1) as pool:  # the pool's thread exits at the end
        bot, _output = pool.submit(harness.launch, "sleep 300; : $0").result()
    wait_until(lambda: len(marked_pids(harness.marker)) >= 2, "the bot running", 10)
    # the thread has exited (the pool joined it): a signal at its exit lands at once
    assert_stays(lambda: bot.poll() is None, 0.3, "the bot running after its thread's exit",
                 state=bot.poll)  # fmt: skip
    bot.kill()


@contextlib.contextmanager
def _first_watchdog(monkeypatch: pytest.MonkeyPatch, asked: Callable[[], int]) -> Iterator[
    list[subprocess.Popen[bytes]]
]:  # fmt: skip
    """This process's first watchdog, started anew (as in a process that launched nothing
    yet) once ``asked()`` says every launch has asked for it; the watchdogs started, and
    at the end ended (their bots gone by then: nothing is left to clean up)."""
    started: list[subprocess.Popen[bytes]] = []

    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        wait_until(lambda: asked() == LAUNCHES, "every launch asking for the watchdog", 30,
                   interval_s=0.005, state=asked)  # fmt: skip
        started.append(subprocess.Popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(watchdog, "_watchdog", None)
    monkeypatch.setattr(watchdog, "subprocess", SimpleNamespace(
        Popen=popen, DEVNULL=subprocess.DEVNULL))  # fmt: skip
    try:
        yield started
    finally:
        made = watchdog._watchdog
        if made is not None and made[1] in started:
            os.close(made[2])  # its end of file: it cleans up (nothing) and exits
        for proc in started:  # one that no end of file reaches (a second) is killed
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_concurrent_launches_from_threads(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight launches from eight threads at once, the first of this process: each bot has
    a name, a uid and a cgroup of its own, all outlive the threads that launched them,
    and nothing is left once they are killed.

    The race, forced: every launch is held as it begins (checks done) until all eight
    have begun, and again at the spawner's door (its uid, staging, cgroup and pipes
    made) until all eight are there, so every launch overlaps every other over all of
    that. The watchdog and the spawner, each made on first use (the process's first
    launch, here forced), are made only once all eight have asked for them: a way in
    for a second is taken (a second spawner's thread, dropped, would take the
    parent-death signal of the bots it forked)."""
    begun, at_door = Crowd(LAUNCHES, "a launch's start"), Crowd(LAUNCHES, "the spawner's door")
    monkeypatch.setattr(process, "probe_host", begun.gather(process.probe_host))
    asked: list[int] = []
    made: list[int] = []
    asked_watchdog: list[int] = []

    def ensure() -> None:
        asked_watchdog.append(1)
        watchdog.ensure_watchdog()

    def spawn(function: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
        at_door.arrive()
        asked.append(threading.get_ident())
        return spawner.spawn(function)

    def executor(*args: Any, **kwargs: Any) -> ThreadPoolExecutor:
        made.append(threading.get_ident())
        wait_until(lambda: len(asked) == LAUNCHES, "every launch asking for the spawner", 30,
                   interval_s=0.005, state=lambda: len(asked))  # fmt: skip
        return ThreadPoolExecutor(*args, **kwargs)

    monkeypatch.setattr(process, "ensure_watchdog", ensure)
    monkeypatch.setattr(process, "spawn", spawn)
    monkeypatch.setattr(spawner, "_spawner", None)  # this process's first launch
    monkeypatch.setattr(spawner, "ThreadPoolExecutor", executor)
    bots: list[BotProcess] = []
    failed: list[BaseException] = []

    def start() -> None:
        try:
            bot, _output = harness.launch("sleep 300; : $0", limits=SandboxLimits(max_processes=8))
            bots.append(bot)
        except BaseException as error:  # the test's thread reports it
            failed.append(error)

    with _first_watchdog(monkeypatch, lambda: len(asked_watchdog)) as watchdogs:
        threads = [threading.Thread(target=start) for _ in range(LAUNCHES)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        try:
            assert not any(thread.is_alive() for thread in threads), "a launch still running"
            assert failed == [] and len(bots) == LAUNCHES
            assert len(watchdogs) == 1, f"{len(watchdogs)} watchdogs started for one process"
            assert len(made) == 1, f"{len(made)} spawners made for one process"
            assert len({bot.name for bot in bots}) == len({bot.uid for bot in bots}) == LAUNCHES
            for bot in bots:  # each bot in its own group
                procs = [(d / "cgroup.procs").read_text().split() for d in cgroup_dirs(bot.name)]
                assert all(str(bot.pid) in each for each in procs), (bot.name, procs)
            # every launching thread has exited: a bot forked from a thread now gone is dead
            assert_stays(lambda: all(bot.poll() is None for bot in bots), 0.3,
                         "every bot running after its thread's exit",
                         state=lambda: [bot.poll() for bot in bots])  # fmt: skip
        finally:
            with ThreadPoolExecutor(max_workers=4) as pool:
                list(pool.map(lambda bot: bot.kill(), bots))
    assert all(bot.poll() is not None for bot in bots)
    assert marked_pids(harness.marker) == []


@pytest.mark.soak
def test_soak_hundreds_of_launches_from_threads(harness: Harness) -> None:
    harness.launch("true")[0].kill()
    fds_before = open_fds()

    def cycle(index: int) -> int | None:
        script = "sleep 300; : $0" if index % 3 else "bomb() { bomb | bomb & }; bomb; : $0"
        bot, _output = harness.launch(script, limits=SandboxLimits(max_processes=12))
        time.sleep(0.05)  # the bot's own life: the bomb forks for a while, then is killed
        bot.kill()
        return bot.poll()

    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = list(pool.map(cycle, range(300)))
    assert all(status is not None for status in statuses)
    assert leaked_since(fds_before) == set()
    assert marked_pids(harness.marker) == []
