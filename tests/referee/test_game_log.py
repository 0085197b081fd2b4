"""Clocks: time beyond the per-action limit comes out of the bank (per seat)."""

from __future__ import annotations

import pytest

from arena.referee.game import GameLog

CASES = [
    ("within the limit", [(0, 500.0)], [1000.0, 1000.0], [500.0, 0.0]),
    ("exactly the limit", [(0, 2000.0)], [1000.0, 1000.0], [2000.0, 0.0]),
    ("over the limit", [(1, 2300.0)], [1000.0, 700.0], [0.0, 2300.0]),
    ("over twice", [(0, 2600.0), (0, 2600.0)], [-200.0, 1000.0], [5200.0, 0.0]),
    ("bank never below zero", [(0, 9000.0)], [0.0, 1000.0], [9000.0, 0.0]),
]


@pytest.mark.parametrize(("charges", "bank_ms", "time_ms"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_charge(charges: list[tuple[int, float]], bank_ms: list[float],
                time_ms: list[float]) -> None:
    log = GameLog.start(action_ms=2000, bank_ms=1000)
    for seat, wall_ms in charges:
        log.charge(seat, wall_ms)
    assert log.bank_ms == [max(0.0, value) for value in bank_ms]
    assert log.time_ms == time_ms
    assert [timing["seat"] for timing in log.timings] == [seat for seat, _ in charges]


def test_allowance_is_limit_plus_bank() -> None:
    log = GameLog.start(action_ms=2000, bank_ms=1000)
    log.charge(0, 2400.0)
    assert (log.allowance_ms(0), log.allowance_ms(1)) == (2600.0, 3000.0)
