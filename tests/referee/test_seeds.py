"""The derivation: secret + match identity -> seed material -> deals; what changes a deal."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from arena.kahuna import deal_from_seed
from arena.referee import MatchConfig
from arena.referee.seeds import (
    SECRET_BYTES,
    STANDALONE,
    MatchIdentity,
    deal_seed,
    match_seed_material,
    new_secret,
    secret_from_seed,
)

SECRET = bytes(range(SECRET_BYTES))
OTHER = bytes([1]) + SECRET[1:]  # one bit apart


def _deals(config: MatchConfig) -> list[tuple[str, ...]]:
    return [
        deal_from_seed(deal_seed(config.secret, config.deal_index(game)))
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


IDENTITY = MatchIdentity(3, ("alpha", "v1"), ("beta", "v2"))
IDENTITY_CHANGES = [
    ("other-round", MatchIdentity(4, ("alpha", "v1"), ("beta", "v2"))),
    ("seats-swapped", MatchIdentity(3, ("beta", "v2"), ("alpha", "v1"))),
    ("other-version", MatchIdentity(3, ("alpha", "v2"), ("beta", "v2"))),
    ("other-bot", MatchIdentity(3, ("alpha", "v1"), ("gamma", "v2"))),
    ("standalone", STANDALONE),
]


@pytest.mark.parametrize(
    "other", [c[1] for c in IDENTITY_CHANGES], ids=[c[0] for c in IDENTITY_CHANGES]
)
def test_every_part_of_the_identity_changes_the_seed_material(other: MatchIdentity) -> None:
    assert match_seed_material(SECRET, IDENTITY) != match_seed_material(SECRET, other)
    material = match_seed_material(SECRET, IDENTITY)
    changed = match_seed_material(SECRET, other)
    assert all(deal_seed(material, k) != deal_seed(changed, k) for k in range(10))


def test_the_material_depends_on_the_secret_and_not_on_a_stored_seed() -> None:
    """A match's deals follow from the secret and its identity only: MatchConfig.seed,
    the stored label, changes none of them."""
    material = match_seed_material(SECRET, IDENTITY)
    assert material != match_seed_material(OTHER, IDENTITY)
    assert _deals(MatchConfig(games=6, seed=1, secret=material)) == _deals(
        MatchConfig(games=6, seed=99, secret=material)
    )


def test_the_derivation_is_the_documented_one() -> None:
    """docs/reference/VERIFY.md's steps, written out with hashlib and hmac alone."""
    canonical = b'[3,["alpha","v1"],["beta","v2"]]'
    assert IDENTITY.canonical() == canonical
    material = hmac.new(SECRET, b"kahuna-arena/match/1\n" + canonical, hashlib.sha256).digest()
    assert match_seed_material(SECRET, IDENTITY) == material
    digest = hmac.new(material, b"kahuna-deal/3:5", hashlib.sha256).digest()
    assert deal_seed(material, 5) == int.from_bytes(digest[:8], "big") & (2**63 - 1)


def test_a_bad_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        match_seed_material(b"short", IDENTITY)
