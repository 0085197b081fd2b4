"""MatchConfig: validation of every field that can be wrong, and playing only some games."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.kahuna import HandicapBridge
from arena.referee import MatchConfig, TimeControl, load_bot, run_match
from arena.referee.handicap import parse_handicap

REPO = Path(__file__).resolve().parents[2]

BAD_CONFIGS: list[tuple[str, dict[str, Any], str]] = [
    ("no-games", {"games": 0}, "games must be"),
    ("negative-seed", {"seed": -1}, "seed must be"),
    ("secret-short", {"secret": bytes(31)}, "a match secret is 32 bytes"),
    ("secret-text", {"secret": "0" * 32}, "a match secret is 32 bytes"),
    ("empty-indices", {"game_indices": ()}, "non-empty tuple"),
    ("indices-list", {"game_indices": [0, 1]}, "non-empty tuple"),
    ("index-too-big", {"games": 4, "game_indices": (1, 4)}, "game index 4 is not in 0..3"),
    ("index-negative", {"game_indices": (-1,)}, "game index -1"),
    ("index-bool", {"game_indices": (True,)}, "game index True"),
    ("index-repeated", {"games": 4, "game_indices": (1, 1)}, "increasing without repeats"),
    ("index-decreasing", {"games": 4, "game_indices": (3, 2)}, "increasing without repeats"),
    ("handicap-empty", {"handicap": []}, "non-empty tuple of bridges"),
    ("handicap-two-seats",
     {"handicap": (HandicapBridge(0, "ALOA-BARI"), HandicapBridge(1, "ELAI-HUNA"))}, "one seat"),
    ("handicap-seat-2", {"handicap": (HandicapBridge(2, "ALOA-BARI"),)}, "one seat, 0 or 1"),
    ("handicap-unknown-line", {"handicap": (HandicapBridge(0, "aloa-bari"),)}, "unknown line"),
    ("handicap-twice",
     {"handicap": (HandicapBridge(0, "ALOA-BARI"), HandicapBridge(0, "ALOA-BARI"))}, "twice"),
    ("handicap-four",
     {"handicap": tuple(HandicapBridge(0, line) for line in
                        ("ALOA-BARI", "ALOA-HUNA", "ELAI-HUNA", "BARI-DUDA"))}, "1 to 3"),
]


@pytest.mark.parametrize(
    ("fields", "message"),
    [case[1:] for case in BAD_CONFIGS],
    ids=[case[0] for case in BAD_CONFIGS],
)
def test_a_bad_config_is_refused_naming_the_field(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MatchConfig(**fields)


@pytest.mark.parametrize(
    ("fields", "indices"),
    [({"games": 3}, (0, 1, 2)), ({"games": 6, "game_indices": (2, 5)}, (2, 5))],
    ids=["all", "some"],
)
def test_indices_to_play(fields: dict[str, Any], indices: tuple[int, ...]) -> None:
    assert MatchConfig(**fields).indices_to_play == indices


PARSED = [
    ("one", "0:ALOA-BARI", ((0, "ALOA-BARI"),)),
    ("lenient", " 1 : huna-elai , bari-aloa", ((1, "ELAI-HUNA"), (1, "ALOA-BARI"))),
]


@pytest.mark.parametrize(("text", "bridges"), [c[1:] for c in PARSED], ids=[c[0] for c in PARSED])
def test_parse_handicap(text: str, bridges: tuple[tuple[int, str], ...]) -> None:
    assert parse_handicap(text) == tuple(HandicapBridge(*bridge) for bridge in bridges)


BAD_TEXTS = [
    ("no-colon", "ALOA-BARI", "is not SEAT:LINE"),
    ("seat-word", "one:ALOA-BARI", "seat must be 0 or 1"),
    ("no-line", "0:", "handicap line ''"),
    ("bad-island", "0:ALOA-NOPE", "handicap line 'ALOA-NOPE'"),
    ("twice", "1:ALOA-BARI,bari-aloa", "twice"),
]


@pytest.mark.parametrize(("text", "message"), [c[1:] for c in BAD_TEXTS],
                         ids=[c[0] for c in BAD_TEXTS])  # fmt: skip
def test_parse_handicap_names_the_problem(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_handicap(text)


def _played(record: dict[str, Any]) -> tuple[object, ...]:
    meta = record["match"]
    return (record["deal"], record["actions"], record.get("result"), meta["bots"],
            meta["deal_index"], meta["paired"], meta["game_index"])  # fmt: skip


@pytest.mark.slow
def test_some_games_keep_the_seats_and_deals_of_their_index() -> None:
    bot = load_bot(REPO / "sample_bots" / "python_random")
    control = TimeControl(3000, 30000)
    secret = bytes(range(32))
    whole = run_match(MatchConfig(games=4, secret=secret, time_control=control), bot, bot)
    part = run_match(
        MatchConfig(games=4, secret=secret, time_control=control, game_indices=(1, 2)), bot, bot
    )
    assert [game.index for game in part.games] == [1, 2]
    assert [_played(game.record) for game in part.games] == [
        _played(whole.games[index].record) for index in (1, 2)
    ]
    assert [g.bots_by_seat for g in part.games] == [whole.games[i].bots_by_seat for i in (1, 2)]
    assert sum(part.score.values()) == 2
