"""Which slot player a driver hands its next chain (``slot_players.pick_player``)."""

from __future__ import annotations

import pytest

pytest.importorskip("ray")

from arena.tournament.execution.slot_players import pick_player, player_name

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
