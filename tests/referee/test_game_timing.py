"""Clocks: time beyond the per-action limit comes out of the bank (per seat)."""

from __future__ import annotations

import pytest

from arena.referee.game import Clock, GameTiming

CASES = [
    ("within the limit", [(0, 500.0)], [1000.0, 1000.0], [500.0, 0.0]),
    ("exactly the limit", [(0, 2000.0)], [1000.0, 1000.0], [2000.0, 0.0]),
    ("over the limit", [(1, 2300.0)], [1000.0, 700.0], [0.0, 2300.0]),
    ("over twice", [(0, 2600.0), (0, 2600.0)], [-200.0, 1000.0], [5200.0, 0.0]),
    ("bank never below zero", [(0, 9000.0)], [0.0, 1000.0], [9000.0, 0.0]),
]


@pytest.mark.parametrize(("charges", "bank_ms", "used_ms"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_answered(charges: list[tuple[int, float]], bank_ms: list[float],
                  used_ms: list[float]) -> None:
    log = GameTiming.start(action_ms=2000, bank_ms=1000)
    for seat, wall_ms in charges:
        log.answered(seat, wall_ms)
    assert [clock.bank_ms for clock in log.clocks] == [max(0.0, value) for value in bank_ms]
    assert [clock.used_ms for clock in log.clocks] == used_ms
    assert [timing["seat"] for timing in log.timings] == [seat for seat, _ in charges]


def test_allowance_is_limit_plus_bank() -> None:
    log = GameTiming.start(action_ms=2000, bank_ms=1000)
    log.answered(0, 2400.0)
    assert [clock.allowance_ms for clock in log.clocks] == [2600.0, 3000.0]


def test_deadline_and_elapsed_are_read_from_the_start() -> None:
    clock = Clock(action_ms=2000, bank_ms=500.0)
    clock.start(7_000_000_000)
    assert clock.deadline_ns == 7_000_000_000 + 2_500_000_000
    assert clock.elapsed_ms(7_001_500_000) == 1.5


def test_an_expired_request_uses_the_whole_allowance_and_leaves_the_bank() -> None:
    clock = Clock(action_ms=2000, bank_ms=500.0)
    clock.charge_expired()
    assert (clock.used_ms, clock.bank_ms) == (2500.0, 500.0)


MS = 1_000_000
SENT = [
    # (what happened, wire ms, stream free ms, the start after ``sent``), started at 10 ms
    ("on the wire at once", 10, 0, 10),
    ("the loop served other work first", 14, 0, 14),
    ("the stream was free before the request", 14, 3, 14),
    ("an earlier frame still on the stream: the bot's own delay", 14, 12, 12),
    ("the stream busy until the wire: all the bot's", 14, 14, 10),
    ("never earlier than the start", 9, 0, 10),
]


@pytest.mark.parametrize(("wire_ms", "free_ms", "start_ms"), [case[1:] for case in SENT],
                         ids=[case[0] for case in SENT])
def test_sent_takes_off_the_referees_delay_only(wire_ms: int, free_ms: int,
                                                start_ms: int) -> None:
    clock = Clock(action_ms=2000)
    clock.start(10 * MS)
    clock.sent(wire_ms * MS, free_ms * MS)
    assert clock.started_ns == start_ms * MS
    assert clock.deadline_ns == start_ms * MS + 2000 * MS
