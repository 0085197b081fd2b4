"""arena.tournament.policy.config: one source for each default and range, refusals naming
the field."""

from __future__ import annotations

import pytest

from arena.kahuna import Variant
from arena.referee.types import ACTION_MS_RANGE, BANK_MS_RANGE, TimeControl
from arena.store import TournamentConfig, TournamentFormat
from arena.tournament.policy.config import (
    GAMES_PER_MATCH_RANGE,
    SEED_RANGE,
    TournamentError,
    build_config,
    match_seed,
    max_swiss_rounds,
    parse_format,
)


def test_left_out_values_take_the_one_default() -> None:
    config = build_config()
    assert config == TournamentConfig()
    assert config.time_control == TimeControl() == TimeControl(2000, 30000)
    assert config.variant == Variant()


def test_given_values_are_kept() -> None:
    config = build_config(
        games_per_match=4, rounds=3, seed=9, action_ms=1500, bank_ms=0, strategic=True,
    )  # fmt: skip
    assert (config.games_per_match, config.rounds, config.seed) == (4, 3, 9)
    assert config.time_control == TimeControl(1500, 0)
    assert config.variant == Variant(strategic=True)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("games_per_match", GAMES_PER_MATCH_RANGE[0] - 1),
        ("games_per_match", GAMES_PER_MATCH_RANGE[1] + 1),
        ("seed", SEED_RANGE[0] - 1),
        ("action_ms", ACTION_MS_RANGE[0] - 1),
        ("action_ms", ACTION_MS_RANGE[1] + 1),
        ("bank_ms", BANK_MS_RANGE[0] - 1),
        ("bank_ms", BANK_MS_RANGE[1] + 1),
        ("rounds", 0),
    ],
    ids=["games-low", "games-high", "seed-low", "action-low", "action-high", "bank-low",
         "bank-high", "rounds-zero"],
)  # fmt: skip
def test_out_of_range_is_refused_naming_the_field(field: str, value: int) -> None:
    with pytest.raises(TournamentError, match=f"^{field} must be a whole number from"):
        build_config(**{field: value})


def test_the_stored_form_is_flat_and_round_trips() -> None:
    config = build_config(games_per_match=3, action_ms=100, bank_ms=200, tactical=True)
    stored = config.to_json()
    assert stored == {
        "games_per_match": 3, "rounds": None, "seed": 0, "action_ms": 100, "bank_ms": 200,
        "strategic": False, "tactical": True,
    }  # fmt: skip
    assert TournamentConfig.from_json(stored) == config


def test_formats_and_swiss_limits() -> None:
    assert parse_format("swiss") is TournamentFormat.SWISS
    with pytest.raises(TournamentError, match="format must be one of round_robin, swiss"):
        parse_format("knockout")
    assert [max_swiss_rounds(n) for n in (1, 2, 3, 4, 5)] == [1, 1, 3, 3, 5]
    assert match_seed(1, 2, 3, 4) == match_seed(1, 2, 4, 3)  # who meets whom, not who is first
