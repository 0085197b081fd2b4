"""Halves: no bot process plays both games of a paired deal (issue 9, item 2).

``halves`` is checked on its own; then a real sandboxed match is played by
``run_halves`` with every message each process receives recorded: a process
is what one Welcome greets (the referee welcomes each launched process once),
and each process must see every deal at most once, in one seat -- its GameStart
indices and the deals of the GameOver records it receives never repeat.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee import MatchConfig, TimeControl
from arena.referee.endpoint import WireTap
from arena.referee.halves import half_configs, halves, run_halves

from .conftest import MakeBot


def test_halves_split_even_and_odd_indices_when_paired() -> None:
    assert halves(range(6), paired=True) == ((0, 2, 4), (1, 3, 5))
    assert halves((1, 2, 5), paired=True) == ((2,), (1, 5))
    assert halves((3,), paired=True) == ((3,),)
    assert halves(range(4), paired=False) == ((0, 1, 2, 3),)
    assert halves((), paired=True) == ()
    # a remote bot's owner can link its processes: its paired games stay one run
    assert halves(range(4), paired=True, remote=True) == ((0, 1, 2, 3),)


def test_no_half_holds_both_games_of_a_deal() -> None:
    for games in range(1, 12):
        config = MatchConfig(games=games)
        runs = half_configs(config)
        played = sorted(index for run in runs for index in run.indices_to_play)
        assert played == list(range(games))
        for run in runs:
            deals = [run.deal_index(index) for index in run.indices_to_play]
            assert len(deals) == len(set(deals))
    resumed = half_configs(MatchConfig(games=8, game_indices=(1, 3, 4, 7)))
    assert [run.indices_to_play for run in resumed] == [(4,), (1, 3, 7)]
    assert [run.indices_to_play for run in half_configs(MatchConfig(games=5, paired=False))] == [
        (0, 1, 2, 3, 4)
    ]


Process = tuple[int, int, int]  # (half, slot, nth Welcome of that slot in that half)


@pytest.mark.slow
def test_every_sandboxed_process_sees_each_deal_at_most_once(make_bot: MakeBot) -> None:
    bot_a, bot_b = make_bot("random", name="a"), make_bot("random", name="b")
    config = MatchConfig(games=8, time_control=TimeControl(2000, 2000))
    received: dict[int, list[tuple[int, bytes]]] = defaultdict(list)

    def tap_of(half: int) -> WireTap:
        return lambda slot, raw: received[half].append((slot, raw))

    order: list[int] = []
    report = run_halves(config, bot_a, bot_b, wire_tap_of_half=tap_of,
                        on_game=lambda game: order.append(game.index))  # fmt: skip
    assert [game.index for game in report.games] == list(range(8))
    assert sorted(order) == list(range(8))
    assert all(game.reason != "forfeit" for game in report.games)
    assert sum(report.score.values()) == 8
    games_of: dict[Process, list[int]] = defaultdict(list)
    deals_of: dict[Process, list[str]] = defaultdict(list)
    welcomed: dict[Process, int] = {}
    match_over: dict[Process, int] = {}
    for half, messages in received.items():
        welcomes = [0, 0]
        for slot, raw in messages:
            message = referee_pb2.PlayResponse.FromString(raw)
            kind = message.WhichOneof("kind")
            if kind == "welcome":
                welcomes[slot] += 1
            process = (half, slot, welcomes[slot])
            if kind == "welcome":
                welcomed[process] = message.welcome.games
            elif kind == "game_start":
                games_of[process].append(message.game_start.game_index)
            elif kind == "game_over":
                deals_of[process].append(json.dumps(json.loads(message.game_over.record_json)["deal"]))
            elif kind == "match_over":
                match_over[process] = message.match_over.games
    assert len(received) == 2
    assert len(welcomed) == 4, "one process per bot per half (none restarted)"
    for process, games in games_of.items():
        deals = [config.deal_index(index) for index in games]
        assert len(deals) == len(set(deals)), f"{process} was dealt a deal twice: {games}"
        assert len({index % 2 for index in games}) == 1, f"{process} played both halves"
        assert len(deals_of[process]) == len(set(deals_of[process])) == len(games)
        assert welcomed[process] == match_over[process] == len(games) == 4
    for slot in (0, 1):  # each bot played every game, across its two processes
        played = sorted(i for p, games in games_of.items() if p[1] == slot for i in games)
        assert played == list(range(8))
    records = {game.index: json.dumps(game.record["deal"]) for game in report.games}
    assert all(records[2 * k] == records[2 * k + 1] for k in range(4)), "deals still paired"
