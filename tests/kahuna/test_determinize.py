"""arena.kahuna.determinize: what the history proves of the opponent's hand, and
completions that keep every observation (R9); the engine stays self-contained."""

from __future__ import annotations

import ast
import itertools
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.kahuna import ISLANDS, Observation, Variant, observe
from arena.kahuna.board import ISLAND_INDEX
from arena.kahuna.determinize import Completion, HiddenPlaces, deal_unseen, opponent_knowledge
from arena.testing.examples import examples
from tests.sources import parse_source

from .util import playout, pos, proven_cards_position, run

ENGINE = Path(__file__).resolve().parents[2] / "arena" / "kahuna"
VARIANTS = st.sampled_from([Variant(), Variant(tactical=True), Variant(True, True)])


def test_the_engine_imports_only_itself_and_the_standard_library() -> None:
    """It is mounted alone in the sandbox: an import from elsewhere would fail there."""
    import sys

    for module in sorted(ENGINE.glob("*.py")):
        tree = parse_source(module)
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert name.startswith("arena.kahuna") or (
                    top in sys.stdlib_module_names and top != "arena"
                ), f"{module.name} imports {name}"


def _true_counts(cards: tuple[str, ...]) -> list[int]:
    counts = [0] * len(ISLANDS)
    for card in cards:
        counts[ISLAND_INDEX[card]] += 1
    return counts


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 10_000), variant=VARIANTS)
def test_what_the_history_proves_is_true_at_every_step(seed: int, variant: Variant) -> None:
    for before, _action, _after in playout(seed, variant):
        if before.needs_reshuffle or before.is_finished:
            continue
        for seat in (0, 1):
            known, held = opponent_knowledge(observe(before, seat))
            opp = 1 - seat
            hand = _true_counts(before.hands[opp])
            both = _true_counts(before.hands[opp] + before.facedown_discards[opp])
            assert all(k <= h for k, h in zip(known, hand, strict=True))
            assert all(k <= h for k, h in zip(held, both, strict=True))


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 10_000), variant=VARIANTS)
def test_the_true_hidden_cards_complete_to_the_same_observation(
    seed: int, variant: Variant
) -> None:
    """The real state's hidden cards, dealt into a completion, give back every observation."""
    for step, (before, _action, _after) in enumerate(playout(seed, variant)):
        if before.needs_reshuffle or before.is_finished or step % 7:
            continue
        for seat in (0, 1):
            obs = observe(before, seat)
            completion = Completion(obs)
            opp = 1 - seat
            hidden = Counter(before.hands[opp]) - Counter(
                ISLANDS[c] for c in completion.places.known
            )
            state = completion.state(
                [ISLAND_INDEX[c] for c in hidden.elements()],
                [ISLAND_INDEX[c] for c in before.facedown_discards[opp]],
                [ISLAND_INDEX[c] for c in before.deck],
            )
            assert observe(state, seat) == obs
            assert state.hands == before.hands
            assert state.deck == before.deck


def test_a_face_up_draw_is_known_until_a_card_of_its_island_is_played() -> None:
    state = pos(
        hands=[["HUNA"], ["ALOA", "ELAI"]], faceup=["HUNA", "COCO", "LALE"], to_move=1,
        rest="played", deck=["BARI", "DUDA", "FAAA"],
    )  # fmt: skip
    state = run(state, "draw HUNA", "draw deck")
    known, held = opponent_knowledge(observe(state, 0))
    assert known[ISLAND_INDEX["HUNA"]] == 1 and held == known
    state = run(state, "place HUNA ELAI-HUNA", "pass")
    known, _ = opponent_knowledge(observe(state, 0))
    assert known[ISLAND_INDEX["HUNA"]] == 0


def test_a_hidden_discard_moves_what_is_known_from_the_hand_to_hand_or_face_down() -> None:
    state = pos(
        hands=[["HUNA"], ["ALOA", "ELAI"]], faceup=["HUNA", "COCO", "LALE"], to_move=1,
        rest="played", deck=["BARI", "DUDA", "FAAA"],
    )  # fmt: skip
    state = run(state, "draw HUNA", "draw deck", "discard ELAI", "draw deck", "pass")
    known, held = opponent_knowledge(observe(state, 0))
    assert known[ISLAND_INDEX["HUNA"]] == 0  # it may have been the card discarded
    assert held[ISLAND_INDEX["HUNA"]] == 1  # but it is in the hand or face down


def test_a_finished_game_cannot_be_completed() -> None:
    *_, (_before, _action, last) = playout(3)
    with pytest.raises(ValueError, match="game is over"):
        Completion(observe(last, 0))


def _hard_places() -> tuple[Observation, Completion, HiddenPlaces]:
    state, seat = proven_cards_position()
    seen = observe(state, seat)
    completion = Completion(seen)
    places = completion.places
    assert (len(places.held), places.opponent_hidden + places.opponent_facedown) == (5, 5)
    return seen, completion, places


def test_an_unseen_deal_keeps_the_proven_cards_where_shuffles_almost_never_do() -> None:
    seen, completion, places = _hard_places()
    rng = random.Random(1)
    for _ in range(200):
        hand, facedown, deck = deal_unseen(places, rng.random)
        assert (len(hand), len(facedown), len(deck)) == (
            places.opponent_hidden, places.opponent_facedown, places.deck
        )  # fmt: skip
        assert Counter(hand + facedown + deck) == Counter(places.pool)
        assert not Counter(places.held) - Counter(hand + facedown)
        assert observe(completion.state(hand, facedown, deck), 1) == seen


PLACES = [
    HiddenPlaces(pool=(0, 0, 1, 1, 2), known=(), held=(0,), opponent_hidden=1,
                 opponent_facedown=1, deck=3),
    HiddenPlaces(pool=(0, 1, 1, 2, 2), known=(), held=(1, 2), opponent_hidden=2,
                 opponent_facedown=0, deck=3),
    HiddenPlaces(pool=(0, 0, 1, 2), known=(), held=(), opponent_hidden=1,
                 opponent_facedown=1, deck=2),
]  # fmt: skip


@pytest.mark.parametrize("places", PLACES, ids=["one-proven", "two-proven", "none-proven"])
def test_unseen_deals_are_as_likely_as_shuffles_redrawn_until_they_keep_the_proven_cards(
    places: HiddenPlaces,
) -> None:
    """Every arrangement's frequency against its share of the pool's shuffles (its cards
    told apart) that hold the proven cards in the opponent's places."""
    reach = places.opponent_hidden + places.opponent_facedown
    hidden = places.opponent_hidden
    exact: Counter[tuple[tuple[int, ...], ...]] = Counter()
    for order in itertools.permutations(places.pool):
        if not Counter(places.held) - Counter(order[:reach]):
            exact[order[:hidden], order[hidden:reach], order[reach:]] += 1
    total = sum(exact.values())
    rng = random.Random(5)
    draws = 20_000
    seen = Counter(
        tuple(map(tuple, deal_unseen(places, rng.random))) for _ in range(draws)
    )  # fmt: skip
    assert set(seen) == set(exact)
    for arrangement, count in exact.items():
        expected = draws * count / total
        assert abs(seen[arrangement] - expected) < 5 * expected**0.5 + 1, arrangement


def test_an_unseen_deal_that_cannot_keep_the_proven_cards_is_refused() -> None:
    places = HiddenPlaces(pool=(0, 1, 2), known=(), held=(0, 1), opponent_hidden=1,
                          opponent_facedown=0, deck=2)  # fmt: skip
    with pytest.raises(ValueError, match=r"no arrangement of the 3 unseen cards .* \[0, 1\]"):
        deal_unseen(places, random.Random(0).random)
