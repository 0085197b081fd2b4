"""`arena ray-worker`'s reading of its flags (the processes: test_ray_nodes.py)."""

from __future__ import annotations

import pytest

from arena.commands.ray_worker import node_ip_of


@pytest.mark.parametrize(
    ("ray_start_args", "node_ip"),
    [
        ("", None),
        ("--node-ip-address=10.0.0.5", "10.0.0.5"),
        ("--block --node-ip-address 10.0.0.6", "10.0.0.6"),
        ("--node-ip-address=10.0.0.5 --node-ip-address=10.0.0.7", "10.0.0.7"),  # the last wins
        ("--node-ip-address", None),  # no value: Ray's own start says so
        ("--temp-dir=/tmp/r --block", None),
    ],
)
def test_the_node_address_the_slot_players_are_made_from(
    ray_start_args: str, node_ip: str | None
) -> None:
    assert node_ip_of(ray_start_args) == node_ip
