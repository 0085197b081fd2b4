"""The freezer's judgement of a bot's CPU on its opponent's turns (``next_level``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.referee.freezer import BUSY_CPU_MS, BUSY_LEVEL_MS, BUSY_SHARE, next_level

Turn = tuple[float, float]  # CPU ms the bot used during one opponent turn, its wall ms


def busy_at(turns: list[Turn]) -> int | None:
    """The index of the opponent turn after which the bot is busy; None if never."""
    level = 0.0
    for index, (cpu_ms, wall_ms) in enumerate(turns):
        level = next_level(level, cpu_ms, wall_ms)
        if level > BUSY_LEVEL_MS:
            return index
    return None


# Figures from benchmarks/freezer.py --charges (benchmarks/RESULTS.md): a bot waiting on
# its stream is charged for its runtime's timers however long its opponent's turn: the
# random test bot up to 3.7 ms in 600 ms turns (0.6%), java_random up to 3.1 ms in a
# 300 ms turn (1.0%); after a fast turn, its own reply's tail, p99 0.1 ms and at most
# 0.65 ms next to six spinning processes at load 20.
WAITING: list[tuple[str, list[Turn]]] = [
    ("fast turns", [(0.02, 0.4)] * 500),
    ("fast turns, each tail at the allowance", [(0.1, 0.4)] * 500),
    ("fast turns, a tail of 0.65 ms in 20", ([(0.65, 2.0)] + [(0.02, 0.5)] * 19) * 25),
    ("turns of 420 ms", [(1.15, 420.0)] * 200),
    ("turns of 600 ms", [(3.7, 600.0)] * 200),
    ("a JVM's turns of 300 ms", [(3.1, 300.0)] * 200),
    ("turns of 2 s", [(12.0, 2000.0)] * 100),
    ("one 4 ms stall among fast turns", [(0.05, 0.7)] * 10 + [(4.0, 10.0)] + [(0.05, 0.7)] * 9),
    ("a JVM compiling early", [(1.3, 1.5), (1.2, 1.5)] + [(0.05, 1.0)] * 200),
]

PONDERING: list[tuple[str, list[Turn], int]] = [
    ("3 ms on each 20 ms turn", [(3.0, 20.0)] * 50, 2),
    ("8 ms on every third 20 ms turn", [(8.0, 20.0), (0.1, 20.0), (0.1, 20.0)] * 20, 4),
    ("3 ms on each 100 ms turn", [(3.0, 100.0)] * 50, 8),
    ("the whole of one long turn", [(0.1, 1.0)] * 5 + [(900.0, 1000.0)], 5),
    ("six children on 1 ms turns", [(1.6, 1.0)] * 50, 4),
    ("0.3 ms of each 0.45 ms turn", [(0.3, 0.45)] * 50, 25),
]


@pytest.mark.parametrize(("turns"), [t for _, t in WAITING], ids=[n for n, _ in WAITING])
def test_a_bot_that_waits_is_never_busy(turns: list[Turn]) -> None:
    assert busy_at(turns) is None


@pytest.mark.parametrize(
    ("turns", "within"), [(t, w) for _, t, w in PONDERING], ids=[n for n, _, _ in PONDERING]
)
def test_a_bot_that_ponders_is_busy_within_a_few_turns(turns: list[Turn], within: int) -> None:
    found = busy_at(turns)
    assert found is not None and found <= within, found


turn = st.tuples(
    st.floats(min_value=0, max_value=1000, allow_nan=False),
    st.floats(min_value=0, max_value=5000, allow_nan=False),
)


@given(st.lists(turn, max_size=200))
def test_a_bot_never_busy_took_at_most_its_allowance_and_the_level(turns: list[Turn]) -> None:
    """What a bot that is never frozen can take of its opponents' turns is bounded:
    ``BUSY_CPU_MS`` and ``BUSY_SHARE`` of each, and ``BUSY_LEVEL_MS`` once."""
    if busy_at(turns) is None:
        allowance = sum(BUSY_CPU_MS + BUSY_SHARE * wall for _, wall in turns)
        assert sum(cpu for cpu, _ in turns) <= allowance + BUSY_LEVEL_MS + 1e-6


@given(turn, st.floats(min_value=0, max_value=100, allow_nan=False))
def test_the_level_never_falls_below_zero_and_grows_with_cpu(t: Turn, level: float) -> None:
    cpu_ms, wall_ms = t
    assert next_level(level, cpu_ms, wall_ms) >= 0
    assert next_level(level, cpu_ms + 1, wall_ms) >= next_level(level, cpu_ms, wall_ms)


def test_the_bot_contract_states_the_allowance_the_freezer_gives() -> None:
    """sample_bots/README.md tells bot authors how much they may compute on their
    opponent's time; it must say what ``next_level`` allows."""
    contract = Path(__file__).resolve().parents[2] / "sample_bots" / "README.md"
    words = " ".join(contract.read_text(encoding="utf-8").split())
    stated = (f"{BUSY_CPU_MS:g} ms plus {BUSY_SHARE:.0%} of each opponent turn,"
              f" and {BUSY_LEVEL_MS:g} ms more in all")  # fmt: skip
    assert stated in words
