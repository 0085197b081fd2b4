"""GameOver carries a game's record only to processes that will not play its deal again.

A paired match played as one half (``run_match``: what a match with a remote bot
under ``--paired-remote`` does) plays games 2k and 2k+1 of one deal with the same
two processes, so game 2k's record (its whole deal and reshuffles) must not reach
them before game 2k+1. Halves (``arena.referee.halves``) never replay a deal, so
there every GameOver has its record.
"""

from __future__ import annotations

import json

import pytest

from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee import MatchConfig, TimeControl, run_match
from arena.referee.results import deal_replayed_in_half

from .conftest import MakeBot

CASES = [
    # (games, paired, game_indices, game_index, replayed later in this run)
    (4, True, None, 0, True),
    (4, True, None, 1, False),
    (4, True, None, 2, True),
    (4, True, None, 3, False),
    (4, False, None, 0, False),
    (4, True, (0, 2), 0, False),  # the even half: game 1 is another process's
    (4, True, (1, 3), 1, False),
    (4, True, (0, 1, 3), 0, True),  # a resumed single run that still has game 1
    (4, True, (2, 3), 2, True),
    (3, True, None, 2, False),  # an odd last game has no partner
]


@pytest.mark.parametrize(("games", "paired", "indices", "index", "expected"), CASES)
def test_which_games_replay_their_deal_in_the_same_run(
    games: int, paired: bool, indices: tuple[int, ...] | None, index: int, expected: bool
) -> None:
    config = MatchConfig(games=games, paired=paired, game_indices=indices)
    assert deal_replayed_in_half(config, index) is expected


@pytest.mark.slow
@pytest.mark.parametrize("paired", [True, False], ids=["paired", "unpaired"])
def test_a_single_run_sends_a_record_only_once_its_deal_is_played_out(
    make_bot: MakeBot, paired: bool
) -> None:
    bot_a, bot_b = make_bot("random", name="a"), make_bot("random", name="b")
    wire: list[tuple[int, bytes]] = []
    config = MatchConfig(games=4, paired=paired, time_control=TimeControl(2000, 2000))
    report = run_match(config, bot_a, bot_b, wire_tap=lambda slot, raw: wire.append((slot, raw)))
    sent: dict[int, list[str]] = {0: [], 1: []}
    for slot, raw in wire:
        message = referee_pb2.PlayResponse.FromString(raw)
        if message.WhichOneof("kind") == "game_over":
            sent[slot].append(message.game_over.record_json)
    expected_full = [True, True, True, True] if not paired else [False, True, False, True]
    for slot in (0, 1):
        assert [bool(text) for text in sent[slot]] == expected_full, f"slot {slot}"
        for text, game in zip(sent[slot], report.games, strict=True):
            if text:
                assert json.loads(text)["deal"] == game.record["deal"]
    # the stored records are whole either way
    assert all("deal" in game.record for game in report.games)
