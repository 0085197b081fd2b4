"""Many launches, in sequence and from several threads at once: nothing leaks."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from arena.sandbox import BotProcess, SandboxLimits
from arena.testing.waiting import assert_stays, wait_until

from .conftest import Harness, cgroup_dirs, marked_pids

pytestmark = pytest.mark.slow  # every test here starts a process or a server


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


def test_concurrent_launches_from_threads(harness: Harness) -> None:
    def start(index: int) -> BotProcess:
        bot, _output = harness.launch("sleep 300; : $0", limits=SandboxLimits(max_processes=8))
        return bot

    with ThreadPoolExecutor(max_workers=4) as pool:
        bots = list(pool.map(start, range(8)))
    assert len({bot.name for bot in bots}) == 8
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
