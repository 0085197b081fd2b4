"""Which CPUs each match worker of a tournament runs on.

A match is a ping-pong: the referee asks, one bot answers, the referee asks
the other. Left to the scheduler, two matches on two cores keep migrating
between the cores, and every hand-off between a referee and a bot that
landed on the other core is a cross-CPU wake-up (an inter-processor
interrupt, expensive in a virtual machine). On a 2-core virtual machine
two concurrent matches then run at about 60% of twice one match's rate, and
pinned one to a core each at about twice the rate (``benchmarks/tournament.py
games`` times both; its figures go to benchmarks/RESULTS.md).

So each worker gets its own share of the CPUs the runner may use: with
``concurrency`` workers and ``n`` CPUs, the CPUs are split into
``min(concurrency, n)`` groups of consecutive CPUs and worker ``k`` takes
group ``k mod groups``. One worker (or one CPU) means no pinning at all.
The affinity is inherited by the worker's bots (bwrap and the bot process
tree), so a match and its bots share their CPUs, and the opponents of a
match always compete on the same terms. A bot's own CPU limit (its cgroup
quota, ``SandboxLimits.cpu_cores``) is unchanged.
"""

from __future__ import annotations

import os


def usable_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on, in order."""
    return tuple(sorted(os.sched_getaffinity(0)))


def cpu_groups(cpus: tuple[int, ...], concurrency: int) -> tuple[frozenset[int], ...]:
    """``min(concurrency, len(cpus))`` groups of consecutive CPUs, sizes differing by at most 1."""
    if not cpus:
        raise ValueError("no CPU to place workers on")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    count = min(concurrency, len(cpus))
    size, extra = divmod(len(cpus), count)
    groups: list[frozenset[int]] = []
    start = 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        groups.append(frozenset(cpus[start:end]))
        start = end
    return tuple(groups)


def worker_cpus(cpus: tuple[int, ...], concurrency: int, worker: int) -> frozenset[int] | None:
    """The CPUs of worker number ``worker`` (0, 1, ...); None when it should not be pinned."""
    groups = cpu_groups(cpus, concurrency)
    if len(groups) < 2:
        return None
    return groups[worker % len(groups)]


def pin_this_process(cpus: frozenset[int]) -> bool:
    """Restrict this process (and what it starts later) to ``cpus``; False if the host refused."""
    try:
        os.sched_setaffinity(0, cpus)
    except OSError:
        return False
    return True
