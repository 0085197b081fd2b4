"""A Ray node's match slots (arena.tournament.execution.node_slots): one task per slot, each
pinned with every thread of its process to the slot's CPUs, released however it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from arena.tournament.execution.cpu_placement import usable_cpus
from arena.tournament.execution.node_slots import SLOTS_ENV, Slot, configured_slots, node_slot

REPO = Path(__file__).resolve().parents[2]
TWO_CPUS = pytest.mark.skipif(len(usable_cpus()) < 2, reason="needs two CPUs to pin apart")


def _thread_cpus() -> dict[int, frozenset[int]]:
    return {
        int(task): frozenset(os.sched_getaffinity(int(task)))
        for task in os.listdir("/proc/self/task")
    }


@pytest.mark.parametrize(
    ("value", "slots"),
    [("", None), ("0", None), ("-1", None), ("two", None), ("2.5", None), ("3", 3), (" 4 ", 4)],
)
def test_configured_slots_reads_a_positive_count_or_nothing(
    monkeypatch: pytest.MonkeyPatch, value: str, slots: int | None
) -> None:
    monkeypatch.setenv(SLOTS_ENV, value)
    assert configured_slots() == slots


def test_tasks_of_a_node_take_different_slots_and_none_is_left_for_one_more(
    tmp_path: Path,
) -> None:
    cpus = usable_cpus()
    with node_slot(tmp_path, 2, cpus) as first, node_slot(tmp_path, 2, cpus) as second:
        assert {first.number, second.number} == {0, 1}
        with node_slot(tmp_path, 2, cpus) as third:
            assert third == Slot(None, None), "two tasks in one slot"
    with node_slot(tmp_path, 2, cpus) as again:
        assert again.number == 0, "a slot stayed taken after its task ended"


@TWO_CPUS
def test_every_thread_of_the_process_runs_on_the_slots_cpus_and_gets_the_node_back(
    tmp_path: Path,
) -> None:
    """Ray's threads exist before the task runs: pinning only the calling thread (as the
    local worker can, before it starts any) would leave them on every CPU."""
    cpus = usable_cpus()
    stop = threading.Event()
    earlier = threading.Thread(target=stop.wait, name="started-before")
    earlier.start()
    try:
        with node_slot(tmp_path, 2, cpus), node_slot(tmp_path, 2, cpus) as second:
            assert second.number == 1 and second.cpus is not None
            assert second.cpus < frozenset(cpus)
            pinned = _thread_cpus()
            assert earlier.native_id in pinned
            assert set(pinned.values()) == {second.cpus}, pinned
        assert set(_thread_cpus().values()) == {frozenset(cpus)}, "not given the node back"
    finally:
        stop.set()
        earlier.join()


def test_no_slot_count_or_one_cpu_pins_nothing(tmp_path: Path) -> None:
    cpus = usable_cpus()
    with node_slot(tmp_path, None, cpus) as unset:
        assert unset == Slot(None, None)
        assert set(_thread_cpus().values()) == {frozenset(cpus)}
    with node_slot(tmp_path, 3, cpus[:1]) as one_cpu:
        assert one_cpu.number == 0 and one_cpu.cpus is None


@pytest.mark.slow
def test_a_slot_of_a_task_killed_with_sigkill_is_free_again(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\n"
         "from pathlib import Path\n"
         "from arena.tournament.execution.node_slots import node_slot\n"
         f"with node_slot(Path({str(tmp_path)!r}), 1, (0,)) as slot:\n"
         "    print(slot.number, flush=True)\n"
         "    time.sleep(60)\n"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "0"
        with node_slot(tmp_path, 1, usable_cpus()) as taken:
            assert taken.number is None, "the living task's slot was handed out again"
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(10)
        with node_slot(tmp_path, 1, usable_cpus()) as freed:
            assert freed.number == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(10)
