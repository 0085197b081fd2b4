"""tests/scheduling.py: whole files to a worker, the longest first."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests import scheduling

REPO = Path(__file__).resolve().parents[1]


def test_every_file_named_exists() -> None:
    named = scheduling.COSTLIEST
    assert [path for path in named if not (REPO / path).is_file()] == []
    assert len(set(scheduling.COSTLIEST)) == len(scheduling.COSTLIEST)


def test_a_test_belongs_to_its_file() -> None:
    assert scheduling.unit_of("tests/kits/test_kits.py::test_a[go_random]") == (
        "tests/kits/test_kits.py"
    )


def test_files_that_share_a_fixture_are_one_unit() -> None:
    named = {*scheduling.SHARED, *scheduling.SHARED.values()}
    assert [path for path in named if not (REPO / path).is_file()] == []
    assert not set(scheduling.SHARED) & set(scheduling.COSTLIEST)  # ranked by their unit
    for path, unit in scheduling.SHARED.items():
        assert scheduling.unit_of(f"{path}::test_a[x]") == unit == scheduling.unit_of(unit)


class _Config:
    """What xdist's schedulers read of pytest's config: two workers, a --dist value."""

    def __init__(self, dist: str) -> None:
        self.option = SimpleNamespace(loadscopereorder=True)
        self._values = {"dist": dist, "tx": ["2*popen"]}

    def getvalue(self, name: str) -> Any:
        return self._values[name]


class _Worker:
    """A worker as a scheduler sees it: it is sent test indices and may be shut down."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[list[int]] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.append(list(indices))

    def shutdown(self) -> None:
        self.shutting_down = True


COLLECTED = [  # as a worker collects them after the sort: costliest units first
    "tests/tournament/test_ray_cluster.py::test_a",
    "tests/tournament/test_ray_cluster.py::test_b",
    "tests/kits/test_any_name.py::test_c[go]",
    "tests/kits/test_any_name.py::test_c[rust]",
    "tests/kahuna/test_rules.py::test_d",
    "tests/kahuna/test_board.py::test_e",
]


def test_units_go_out_whole_in_collection_order() -> None:
    scheduler = scheduling.pytest_xdist_make_scheduler(_Config("load"), None)  # type: ignore[arg-type]
    first, second = _Worker("gw0"), _Worker("gw1")
    for worker in (first, second):
        scheduler.add_node(worker)
        scheduler.add_node_collection(worker, COLLECTED)
    scheduler.schedule()
    assert first.sent[0] == [0, 1]  # the first file, whole
    assert second.sent[0] == [2, 3]  # the next file, whole
    for worker in (first, second):
        for batch in list(worker.sent):
            for index in batch:
                scheduler.mark_test_complete(worker, index)
    sent = sorted(index for worker in (first, second) for batch in worker.sent for index in batch)
    assert sent == list(range(len(COLLECTED)))  # every test once
    assert all(len(batch) == 1 for worker in (first, second) for batch in worker.sent[1:])


def test_a_dist_asked_for_by_name_is_left_to_xdist() -> None:
    assert scheduling.pytest_xdist_make_scheduler(_Config("loadscope"), None) is None  # type: ignore[arg-type]


class _Item:
    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid


def test_a_worker_sorts_the_costliest_first_and_keeps_the_rest_in_order() -> None:
    items = [_Item(nodeid) for nodeid in reversed(COLLECTED)]
    worker = SimpleNamespace(workerinput={})
    scheduling.pytest_collection_modifyitems(worker, items)  # type: ignore[arg-type]
    assert [item.nodeid for item in items] == [COLLECTED[i] for i in (1, 0, 3, 2, 5, 4)]
    alone = [_Item(nodeid) for nodeid in reversed(COLLECTED)]
    scheduling.pytest_collection_modifyitems(SimpleNamespace(), alone)  # type: ignore[arg-type]
    assert [item.nodeid for item in alone] == list(reversed(COLLECTED))  # no -n: untouched
