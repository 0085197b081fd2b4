"""How many CPUs a bot sees: as many as its CPU quota allows.

The quota (``SandboxLimits.cpu_cores``, a cgroup CPU limit) bounds the CPU
time a bot's tree may use, but the kernel still reports every CPU of the
machine, so ``nproc``, ``os.cpu_count`` users and Go's ``GOMAXPROCS`` size
their thread pools for a machine the bot cannot use. So the launcher pins
each bot to ``ceil(cpu_cores)`` of the CPUs it may run on itself (those of
the match worker, when a tournament pins workers): ``nproc`` and
``sched_getaffinity`` inside then say what the quota gives. Successive
launches take successive CPUs of that set, so two bots of a match do not
share one CPU where there are several. A bot that widens its own affinity
gains nothing: the quota still holds. (``os.cpu_count()`` and
``/proc/cpuinfo`` still count the machine's CPUs.)
"""

from __future__ import annotations

import itertools
import math
import os

_next_start = itertools.count()


def quota_cpus(cpu_cores: float, usable: tuple[int, ...]) -> frozenset[int] | None:
    """``ceil(cpu_cores)`` CPUs of ``usable`` for the next bot, taken in turn; None when
    the quota is at least all of them (nothing to restrict)."""
    wanted = max(1, math.ceil(cpu_cores))
    if wanted >= len(usable):
        return None
    start = next(_next_start) * wanted
    return frozenset(usable[(start + offset) % len(usable)] for offset in range(wanted))


def pin_to_quota(pid: int, cpu_cores: float) -> frozenset[int] | None:
    """Restrict ``pid`` (before it starts the bot: its children inherit it) to the CPUs
    its quota allows; the CPUs, or None when nothing was restricted."""
    cpus = quota_cpus(cpu_cores, tuple(sorted(os.sched_getaffinity(0))))
    if cpus is not None:
        os.sched_setaffinity(pid, cpus)
    return cpus
