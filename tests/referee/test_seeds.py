"""Deals keyed by the match secret: what changes a deal and what does not."""

from __future__ import annotations

import pytest

from arena.kahuna import deal_from_seed
from arena.referee import MatchConfig
from arena.referee.seeds import SECRET_BYTES, deal_seed, new_secret, secret_from_seed

SECRET = bytes(range(SECRET_BYTES))
OTHER = bytes([1]) + SECRET[1:]  # one bit apart


def _deals(config: MatchConfig) -> list[tuple[str, ...]]:
    return [
        deal_from_seed(deal_seed(config.secret, config.seed, config.deal_index(game)))
        for game in range(config.games)
    ]


def test_games_2k_and_2k_plus_1_share_a_deal_and_pairs_differ() -> None:
    deals = _deals(MatchConfig(games=8, secret=SECRET))
    assert [deals[2 * k] == deals[2 * k + 1] for k in range(4)] == [True] * 4
    assert len(set(deals)) == 4


def test_unpaired_games_each_get_a_fresh_deal() -> None:
    deals = _deals(MatchConfig(games=8, secret=SECRET, paired=False))
    assert len(set(deals)) == 8
    assert deals[0] == _deals(MatchConfig(games=8, secret=SECRET))[0]  # deal 0 is deal 0


CHANGES = [
    ("other-secret", {"secret": OTHER}),
    ("fresh-secret", {"secret": new_secret()}),
    ("seeded-secret", {"secret": secret_from_seed(0)}),
    ("other-match-seed", {"seed": 1}),
]


@pytest.mark.parametrize("change", [c[1] for c in CHANGES], ids=[c[0] for c in CHANGES])
def test_every_deal_depends_on_the_secret_and_the_match(change: dict[str, object]) -> None:
    base = _deals(MatchConfig(games=20, secret=SECRET))
    changed = _deals(MatchConfig(games=20, **change))  # type: ignore[arg-type]
    assert all(a != b for a, b in zip(base[::2], changed[::2], strict=True))


def test_the_same_secret_gives_the_same_deals() -> None:
    assert _deals(MatchConfig(games=6, secret=SECRET)) == _deals(
        MatchConfig(games=6, secret=bytes(SECRET))
    )
    assert secret_from_seed(7) == secret_from_seed(7) != secret_from_seed(8)


def test_fresh_secrets_are_random_bytes() -> None:
    drawn = {new_secret() for _ in range(100)}
    assert len(drawn) == 100
    assert {len(secret) for secret in drawn} == {SECRET_BYTES}
