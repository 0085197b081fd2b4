"""kahuna_bot.sampling: full states a seat cannot tell from the real one (R9).

Every sample is a legal state whose observation for the seat equals the one it
was drawn from; over many samples the opponent's hidden cards follow the exact
distribution, counted by enumerating every arrangement of the unseen cards on
small positions (a chi-square test at a fixed seed), and, where the opponent
played nothing from its hidden hand, by replaying every deal of the start.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kahuna_bot.sampling import InfoStateSampler, sample_state

from arena.kahuna import (
    ISLANDS,
    State,
    Variant,
    apply,
    legal_actions,
    observe,
    start_round,
)
from arena.kahuna.board import CARDS_PER_ISLAND
from arena.testing.examples import examples
from tests.kahuna.util import playout, pos, proven_cards_position, run

VARIANTS = st.sampled_from([Variant(), Variant(tactical=True), Variant(True, True)])


def _all_cards(state: State) -> Counter[str]:
    cards: Counter[str] = Counter()
    for hand in state.hands:
        cards.update(hand)
    cards.update(c for c in state.faceup if c)
    cards.update(state.deck)
    cards.update(state.played_cards)
    for facedown in state.facedown_discards:
        cards.update(facedown)
    return cards


def _assert_legal(sample: State, real: State, seat: int) -> None:
    """The sample holds the 24 cards, its sizes are the real ones, and it plays to the end."""
    assert _all_cards(sample) == {island: CARDS_PER_ISLAND for island in ISLANDS}
    assert sample.hand_sizes == real.hand_sizes
    assert sample.deck_size == real.deck_size
    assert tuple(map(len, sample.facedown_discards)) == tuple(map(len, real.facedown_discards))
    for opened, hand in zip(sample.open_cards, sample.hands, strict=True):
        assert not Counter(opened) - Counter(hand)
    if real.to_move == seat:  # the seat knows its own options exactly
        assert legal_actions(sample) == legal_actions(real)
    rng = random.Random(0)
    state = sample
    while not state.is_finished:
        if state.needs_reshuffle:
            order = list(state.reshuffle_cards)
            rng.shuffle(order)
            state = start_round(state, order)
            continue
        state = apply(state, rng.choice(legal_actions(state)))


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 10_000), variant=VARIANTS, pick=st.integers(0, 10**6))
def test_every_sample_is_legal_and_observed_as_the_observation(
    seed: int, variant: Variant, pick: int
) -> None:
    steps = [before for before, _, _ in playout(seed, variant) if not before.needs_reshuffle]
    real = steps[pick % len(steps)]
    rng = random.Random(pick)
    for seat in (0, 1):
        obs = observe(real, seat)
        sampler = InfoStateSampler(obs, rng=rng)
        for _ in range(3):
            sample = sampler.sample()
            assert observe(sample, seat) == obs
            _assert_legal(sample, real, seat)


def test_a_seed_fixes_every_sample() -> None:
    *_, (real, _, _) = list(playout(5))[:60]
    obs = observe(real, 0)
    first = [InfoStateSampler(obs, seed=9).sample() for _ in range(2)]
    again = InfoStateSampler(obs, seed=9)
    twice = [again.sample(), again.sample()]
    assert first[0].deck == first[1].deck == twice[0].deck
    assert twice[0].deck != twice[1].deck or twice[0].hands != twice[1].hands
    assert sample_state(obs, random.Random(3)).hands == sample_state(obs, random.Random(3)).hands


def test_proven_cards_that_shuffles_almost_never_keep_are_still_dealt() -> None:
    """Redraws alone would give up here on many samples (a bot's search then crashed);
    the direct deal of ``arena.kahuna.determinize`` takes over."""
    real, seat = proven_cards_position()
    obs = observe(real, seat)
    sampler = InfoStateSampler(obs, seed=1)
    held = Counter(sampler.places.held)
    opp = 1 - seat
    for _ in range(30):
        sample = sampler.sample()
        assert observe(sample, seat) == obs
        hidden = Counter(
            ISLANDS.index(c) for c in (*sample.hands[opp], *sample.facedown_discards[opp])
        )
        assert not held - hidden
        _assert_legal(sample, real, seat)


# ------------------------------------------------------------- exact distribution


def _exact(sampler: InfoStateSampler) -> Counter[tuple[int, ...]]:
    """Weight of each opponent hidden hand over every arrangement of the unseen cards
    that keeps the proven cards in the hand or face down (by brute force)."""
    places = sampler.places
    reach = places.opponent_hidden + places.opponent_facedown
    held = Counter(places.held)
    weights: Counter[tuple[int, ...]] = Counter()
    for order in itertools.permutations(places.pool):
        if held - Counter(order[:reach]):
            continue
        weights[tuple(sorted(order[: places.opponent_hidden]))] += 1
    return weights


def _chi_square_critical(df: int, z: float = 3.719) -> float:
    """Wilson-Hilferty: the chi-square quantile at the normal quantile z (1e-4 upper tail)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


SMALL_POSITIONS = {
    "no-history": pos(
        hands=[["HUNA", "ELAI"], ["ALOA", "BARI", "COCO"]], faceup=["DUDA", "LALE", None],
        deck=["ALOA", "BARI", "FAAA"], rest="played", to_move=0,
    ),
    "tactical-open-card": run(
        pos(
            variant={"tactical": True}, hands=[["HUNA"], ["ALOA", "BARI"]],
            faceup=["COCO", "LALE", "GOLA"], deck=["ALOA", "COCO", "FAAA", "DUDA"],
            rest="played", to_move=1,
        ),
        "draw COCO",
    ),
    "hidden-discard-after-a-face-up-draw": run(
        pos(
            hands=[["HUNA"], ["ALOA", "ELAI"]], faceup=["HUNA", "COCO", "LALE"], to_move=1,
            rest="played", deck=["BARI", "DUDA", "FAAA", "GOLA"],
        ),
        "draw HUNA", "draw deck", "discard ELAI", "draw deck", "pass",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SMALL_POSITIONS))
def test_hidden_hands_follow_the_exact_distribution(name: str) -> None:
    real = SMALL_POSITIONS[name]
    observer = 0
    obs = observe(real, observer)
    sampler = InfoStateSampler(obs, seed=2026)
    exact = _exact(sampler)
    total = sum(exact.values())
    draws = 6000
    seen: Counter[tuple[int, ...]] = Counter()
    known = Counter(sampler.places.known)
    for _ in range(draws):
        sample = sampler.sample()
        hand = Counter(ISLANDS.index(c) for c in sample.hands[1 - observer]) - known
        seen[tuple(sorted(hand.elements()))] += 1
    assert set(seen) <= set(exact), set(seen) - set(exact)
    statistic = sum(
        (seen[hand] - draws * weight / total) ** 2 / (draws * weight / total)
        for hand, weight in exact.items()
    )
    df = len(exact) - 1
    assert df >= 2, exact
    assert statistic < _chi_square_critical(df), (statistic, df, exact, seen)


# ------------------------------------------------- against the posterior of the deal


def _posterior_by_replay(
    spec: dict[str, object], actions: tuple[str, ...], observer: int
) -> tuple[State, Counter[tuple[int, ...]]]:
    """The real position after ``actions``, and the weight of each opponent hand
    (hidden part) over every deal of the opponent's hand and the pile that makes
    the same public history (each arrangement of the start once: a uniform deal)."""
    real = run(pos(**spec), *actions)
    seen = observe(real, observer)
    opp = 1 - observer
    hands = spec["hands"]
    assert isinstance(hands, list)
    unseen = [*hands[opp], *spec["deck"]]  # type: ignore[misc]
    size = len(hands[opp])
    known = Counter(InfoStateSampler(seen, seed=0).places.known)
    weights: Counter[tuple[int, ...]] = Counter()
    for order in itertools.permutations(unseen):
        world_hands = [list(hands[0]), list(hands[1])]
        world_hands[opp] = list(order[:size])
        world = {**spec, "hands": world_hands, "deck": list(order[size:])}
        try:
            end = run(pos(**world), *actions)
        except Exception:  # an action this deal makes illegal: not a consistent world
            continue
        if observe(end, observer) != seen:
            continue
        hand = Counter(ISLANDS.index(c) for c in end.hands[opp]) - known
        weights[tuple(sorted(hand.elements()))] += 1
    return real, weights


# Only histories in which the opponent played no card from its hidden hand: a play
# is evidence too (an opponent that placed an ALOA more likely held one ALOA than
# two), which the sampler, uniform over the unseen cards, does not weigh.
REPLAYED = {
    "a-face-up-draw-then-deck-draws": (
        {
            "hands": [["HUNA"], ["ALOA", "BARI"]], "faceup": ["COCO", "LALE", "GOLA"],
            "deck": ["ALOA", "DUDA", "FAAA", "COCO", "IFFI"], "rest": "played", "to_move": 1,
        },
        ("draw COCO", "draw deck", "draw deck", "draw deck"),
    ),
    "deck-draws-and-own-plays": (
        {
            "hands": [["HUNA", "ELAI"], ["ALOA", "BARI"]], "faceup": ["COCO", "LALE", "GOLA"],
            "deck": ["ALOA", "DUDA", "FAAA", "BARI", "IFFI"], "rest": "played", "to_move": 0,
        },
        ("place HUNA ELAI-HUNA", "draw deck", "draw deck", "draw LALE"),
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(REPLAYED))
def test_hidden_hands_follow_the_posterior_of_the_deal(name: str) -> None:
    """Where no card was discarded face down, uniform over the unseen cards is exactly
    the posterior of a uniform deal given the public history."""
    spec, actions = REPLAYED[name]
    real, exact = _posterior_by_replay(spec, actions, observer=0)
    sampler = InfoStateSampler(observe(real, 0), seed=14)
    known = Counter(sampler.places.known)
    draws = 6000
    seen: Counter[tuple[int, ...]] = Counter()
    for _ in range(draws):
        hand = Counter(ISLANDS.index(c) for c in sampler.sample().hands[1]) - known
        seen[tuple(sorted(hand.elements()))] += 1
    total = sum(exact.values())
    assert set(seen) <= set(exact), set(seen) - set(exact)
    statistic = sum(
        (seen[hand] - draws * weight / total) ** 2 / (draws * weight / total)
        for hand, weight in exact.items()
    )
    df = len(exact) - 1
    assert df >= 2, exact
    assert statistic < _chi_square_critical(df), (statistic, df, exact, seen)
