"""The prestart decision (``decide_prestart``): one table of every case, and its refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.referee import prestart
from arena.referee.botdir import REMOTE_RUNTIME
from arena.referee.prestart import Prestart, decide_prestart
from arena.referee.types import BotSpec


def _bot(runtime: str) -> BotSpec:
    return BotSpec(name=runtime, version="v1", directory=Path("/nonexistent"),
                   command=("run",), runtime=runtime)  # fmt: skip


LOCAL = _bot("python")
REMOTE = _bot(REMOTE_RUNTIME)


@pytest.mark.parametrize(
    ("cpus", "bots", "wanted", "expected"),
    [
        (2, (LOCAL, LOCAL), True, Prestart(True, prestart.ON)),
        (8, (LOCAL, LOCAL), True, Prestart(True, prestart.ON)),
        (2, (), True, Prestart(True, prestart.ON)),  # nothing known of the bots yet
        (1, (LOCAL, LOCAL), True, Prestart(False, prestart.ONE_CPU)),
        (1, (), True, Prestart(False, prestart.ONE_CPU)),
        (4, (LOCAL, REMOTE), True, Prestart(False, prestart.REMOTE)),
        (4, (REMOTE, LOCAL), True, Prestart(False, prestart.REMOTE)),
        (1, (REMOTE, REMOTE), True, Prestart(False, prestart.REMOTE)),
        (4, (LOCAL, LOCAL), False, Prestart(False, prestart.NOT_WANTED)),
        (1, (LOCAL, REMOTE), False, Prestart(False, prestart.NOT_WANTED)),
    ],
)  # fmt: skip
def test_the_prestart_is_on_only_with_a_cpu_to_spare_and_no_remote_bot(
    cpus: int, bots: tuple[BotSpec, ...], wanted: bool, expected: Prestart
) -> None:
    assert decide_prestart(cpus=cpus, bots=bots, wanted=wanted) == expected


@pytest.mark.parametrize("cpus", [0, -1])
def test_a_worker_without_a_cpu_is_refused_naming_the_count(cpus: int) -> None:
    with pytest.raises(ValueError, match=f"at least 1 CPU, not {cpus}"):
        decide_prestart(cpus=cpus)


@given(
    st.integers(1, 512),
    st.lists(st.sampled_from([LOCAL, REMOTE]), max_size=2),
    st.booleans(),
)
def test_every_decision_says_why(cpus: int, bots: list[BotSpec], wanted: bool) -> None:
    decision = decide_prestart(cpus=cpus, bots=bots, wanted=wanted)
    assert decision.reason in (prestart.ON, prestart.ONE_CPU, prestart.REMOTE, prestart.NOT_WANTED)
    assert decision.on == (decision.reason == prestart.ON)
    assert decision.on == (wanted and cpus > 1 and REMOTE not in bots)
