"""Which CPUs each tournament worker gets (arena.tournament.execution.cpu_placement)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.tournament.execution.cpu_placement import (
    cpu_groups,
    pin_this_process,
    usable_cpus,
    worker_cpus,
)


@pytest.mark.parametrize(
    ("cpus", "concurrency", "groups"),
    [
        ((0, 1), 2, [{0}, {1}]),
        ((0, 1), 1, [{0, 1}]),
        ((0, 1), 5, [{0}, {1}]),  # more workers than CPUs: they share
        ((0, 1, 2, 3, 4, 5, 6, 7), 2, [{0, 1, 2, 3}, {4, 5, 6, 7}]),
        ((0, 1, 2, 3, 4, 5, 6, 7), 3, [{0, 1, 2}, {3, 4, 5}, {6, 7}]),
        ((2, 5, 7), 2, [{2, 5}, {7}]),  # a restricted affinity mask is respected
        ((3,), 4, [{3}]),
    ],
)
def test_cpu_groups(cpus: tuple[int, ...], concurrency: int, groups: list[set[int]]) -> None:
    assert [set(g) for g in cpu_groups(cpus, concurrency)] == groups


@pytest.mark.parametrize(("cpus", "concurrency"), [((), 2), ((0, 1), 0), ((0, 1), -1)])
def test_cpu_groups_refuses_nonsense(cpus: tuple[int, ...], concurrency: int) -> None:
    with pytest.raises(ValueError, match=r"CPU|concurrency"):
        cpu_groups(cpus, concurrency)


@given(
    cpus=st.sets(st.integers(0, 255), min_size=1, max_size=64).map(lambda s: tuple(sorted(s))),
    concurrency=st.integers(1, 100),
)
def test_groups_partition_the_cpus_evenly(cpus: tuple[int, ...], concurrency: int) -> None:
    groups = cpu_groups(cpus, concurrency)
    assert len(groups) == min(concurrency, len(cpus))
    assert sorted(c for g in groups for c in g) == list(cpus)  # every CPU once
    sizes = [len(g) for g in groups]
    assert max(sizes) - min(sizes) <= 1
    for worker in range(concurrency):
        placed = worker_cpus(cpus, concurrency, worker)
        if len(groups) == 1:
            assert placed is None  # one group: no pinning at all
        else:
            assert placed == groups[worker % len(groups)]


@pytest.mark.slow
def test_pinning_applies_to_the_process_and_what_it_starts() -> None:
    cpus = usable_cpus()
    code = (
        "import os, subprocess, sys\n"
        "from arena.tournament.execution.cpu_placement import pin_this_process\n"
        f"assert pin_this_process(frozenset({{{cpus[-1]}}}))\n"
        "print(sorted(os.sched_getaffinity(0)))\n"
        "child = 'import os; print(sorted(os.sched_getaffinity(0)))'\n"
        "print(subprocess.run([sys.executable, '-c', child], capture_output=True, text=True,"
        " check=True).stdout.strip())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[:2] == [f"[{cpus[-1]}]", f"[{cpus[-1]}]"]
    assert sorted(os.sched_getaffinity(0)) == list(cpus)  # this process is untouched


def test_pinning_to_a_cpu_that_does_not_exist_is_refused_not_raised() -> None:
    assert pin_this_process(frozenset({100_000})) is False
