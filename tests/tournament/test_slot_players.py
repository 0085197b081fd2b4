"""Which slot player a driver hands its next chain (``slot_players.pick_player``)."""

from __future__ import annotations

import pytest

pytest.importorskip("ray")

from collections.abc import Iterator

from arena.testing.waiting import assert_stays, wait_until
from arena.tournament.execution import ray_executor, slot_players
from arena.tournament.execution.executor import JobDone
from arena.tournament.execution.slot_players import SlotPlayer, pick_player, player_name

A, B = "a" * 8, "b" * 8  # two nodes' ids
PLAYERS = {player_name(node, slot): node for node in (A, B) for slot in range(2)}


@pytest.mark.parametrize(
    ("busy", "distrusted", "picked"),
    [
        (set(), {}, player_name(A, 0)),
        # each node's first slot before any node's second: chains spread over the nodes
        ({player_name(A, 0)}, {}, player_name(B, 0)),
        ({player_name(A, 0), player_name(B, 0)}, {}, player_name(A, 1)),
        # never a player on a node that sent a forged game, busy or not
        (set(), {A: "10.0.0.1"}, player_name(B, 0)),
        ({player_name(B, 0)}, {A: "10.0.0.1"}, player_name(B, 1)),
        ({player_name(B, 0), player_name(B, 1)}, {A: "10.0.0.1"}, None),
        (set(PLAYERS), {}, None),
    ],
)
def test_a_free_player_on_a_trusted_node_first_slots_first(
    busy: set[str], distrusted: dict[str, str], picked: str | None
) -> None:
    assert pick_player(PLAYERS, busy, distrusted) == picked


def test_slots_past_nine_order_by_number_not_text() -> None:
    players = {player_name(A, slot): A for slot in (2, 10)}
    assert pick_player(players, set(), {}) == player_name(A, 2)


@pytest.mark.parametrize(("jobs", "reported", "ends_itself"), [
    (1, 1, False),  # every job done: only its bots are being closed, the driver may leave
    (2, 1, True),  # a job still to play for a driver that is gone: the player ends itself
    (2, 0, True),
])
def test_a_player_ends_itself_for_a_dead_driver_only_while_jobs_are_left(
    monkeypatch: pytest.MonkeyPatch, jobs: int, reported: int, ends_itself: bool
) -> None:
    exits: list[int] = []
    driver_alive = [True]
    monkeypatch.setattr(slot_players, "_OWNER_CHECK_S", 0.01)
    monkeypatch.setattr(slot_players, "_job_alive", lambda owner: driver_alive[0])
    monkeypatch.setattr(slot_players.os, "_exit", exits.append)

    def chain(*_: object) -> Iterator[tuple[object, ...]]:
        yield tuple(JobDone(1, half, None) for half in range(reported))
        # the batch handed on; now its bots are being closed (or a job plays) and the
        # driver dies: the owner watch looks every 10 ms
        driver_alive[0] = False
        if ends_itself:
            wait_until(lambda: exits, "the player ending itself", 10, interval_s=0.005)
        else:
            assert_stays(lambda: not exits, 0.3, "the player alive", state=lambda: exits)

    monkeypatch.setattr(ray_executor, "_play", chain)
    groups = (tuple(object() for _ in range(jobs)),)
    list(SlotPlayer().play("driver", groups, {}, prestart=False))
    assert bool(exits) is ends_itself


def test_a_player_for_a_dead_driver_ends_itself_even_when_its_log_cannot_be_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exits: list[int] = []
    monkeypatch.setattr(slot_players, "_OWNER_CHECK_S", 0.01)
    monkeypatch.setattr(slot_players, "_job_alive", lambda owner: False)
    monkeypatch.setattr(slot_players.os, "_exit", exits.append)

    def unwritable(**_: object) -> object:
        raise ValueError("I/O operation on closed file.")

    monkeypatch.setattr(slot_players, "get_logger", unwritable)

    def chain(*_: object) -> Iterator[tuple[object, ...]]:
        yield ()
        # a job playing, the driver gone: the player ends itself all the same
        wait_until(lambda: exits, "the player ending itself", 10, interval_s=0.005)

    monkeypatch.setattr(ray_executor, "_play", chain)
    list(SlotPlayer().play("driver", ((object(), object()),), {}, prestart=False))
    assert exits[:1] == [1]  # (os._exit patched: the watch goes on calling it)
