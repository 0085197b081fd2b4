"""The order the tournament runner hands matches to its workers (longest expected first)."""

from __future__ import annotations

import pytest

from arena.store import MatchRow
from arena.tournament.orchestration.runner import GAME_OVERHEAD_MS, longest_first


def _match(match_id: int, first: str, second: str, games: int = 2, played: int = 0) -> MatchRow:
    return MatchRow(
        id=match_id, tournament_id=1, round=1, first=first, second=second,
        first_version="v1", second_version="v1", games=games, seed=match_id,
        finished_at=None, games_played=tuple(range(played)),
    )  # fmt: skip


SLOW, FAST = 500.0, 20.0  # ms of thinking per game


@pytest.mark.parametrize(
    ("matches", "think", "order"),
    [
        pytest.param(
            [_match(1, "fast", "fast2"), _match(2, "slow", "fast"), _match(3, "slow", "slow2")],
            {"fast": FAST, "fast2": FAST, "slow": SLOW, "slow2": SLOW},
            [3, 2, 1],
            id="slowest-bots-first",
        ),
        pytest.param(
            [_match(1, "a", "b"), _match(2, "c", "d"), _match(3, "e", "f")],
            {},
            [1, 2, 3],
            id="nothing-known-keeps-the-schedule",
        ),
        pytest.param(
            [_match(1, "slow", "slow2", games=8, played=7), _match(2, "fast", "fast2", games=16)],
            {"fast": FAST, "fast2": FAST, "slow": SLOW, "slow2": SLOW},
            [2, 1],  # 1 game left of 1000 ms + overhead against 16 of 40 ms + overhead
            id="only-unplayed-games-count",
        ),
        pytest.param(
            [_match(1, "new", "fast"), _match(2, "fast", "fast2")],
            {"fast": FAST, "fast2": FAST, "slow": SLOW},
            [1, 2],  # a bot with no game counts as the mean of the known ones
            id="unknown-bot-is-the-mean",
        ),
    ],
)
def test_longest_first(
    matches: list[MatchRow], think: dict[str, float], order: list[int]
) -> None:
    think_ms = {(name, "v1"): ms for name, ms in think.items()}
    assert [m.id for m in longest_first(matches, think_ms)] == order


def test_overhead_makes_more_games_longer_when_bots_are_equal() -> None:
    think_ms = {("a", "v1"): 0.0, ("b", "v1"): 0.0}
    matches = [_match(1, "a", "b", games=2), _match(2, "a", "b", games=6)]
    assert GAME_OVERHEAD_MS > 0
    assert [m.id for m in longest_first(matches, think_ms)] == [2, 1]
