"""A bot sees as many CPUs as its quota gives it: nproc and
sched_getaffinity inside the sandbox, not the machine's count."""

from __future__ import annotations

import math
import os

import pytest

from arena.sandbox import SandboxLimits
from arena.sandbox.affinity import quota_cpus

from .conftest import Harness

PROBE = 'echo "nproc=$(nproc)"; grep Cpus_allowed_list /proc/self/status'


@pytest.mark.parametrize(
    ("cores", "usable", "size"),
    [
        pytest.param(1.0, (0, 1), 1, id="one-of-two"),
        pytest.param(0.25, (0, 1, 2, 3), 1, id="a-fraction-is-one"),
        pytest.param(1.5, (0, 1, 2, 3), 2, id="rounded-up"),
        pytest.param(2.0, (0, 1), None, id="all-of-them"),
        pytest.param(8.0, (4, 5), None, id="more-than-there-are"),
        pytest.param(1.0, (3,), None, id="one-cpu-machine"),
    ],
)
def test_quota_cpus_are_the_quota_rounded_up(
    cores: float, usable: tuple[int, ...], size: int | None
) -> None:
    cpus = quota_cpus(cores, usable)
    assert (None if cpus is None else len(cpus)) == size
    assert cpus is None or cpus <= set(usable)


def test_successive_bots_take_successive_cpus() -> None:
    taken = [quota_cpus(1.0, (0, 1, 2)) for _ in range(3)]
    assert {cpu for cpus in taken if cpus for cpu in cpus} == {0, 1, 2}


def _seen(harness: Harness, cores: float) -> tuple[int, str]:
    status, output = harness.run(PROBE, limits=SandboxLimits(cpu_cores=cores))
    assert status == 0, output
    nproc = int(output.split("nproc=")[1].split()[0])
    allowed = output.split("Cpus_allowed_list:")[1].split()[0]
    return nproc, allowed


@pytest.mark.slow
@pytest.mark.parametrize("cores", [1.0, 0.5, 2.0])
def test_nproc_inside_the_sandbox_matches_the_quota(harness: Harness, cores: float) -> None:
    usable = len(os.sched_getaffinity(0))
    nproc, allowed = _seen(harness, cores)
    assert nproc == min(usable, math.ceil(cores)), allowed
