"""What actions do: control and clearing (R5, C1), drawing (R4, C8), rounds and
scoring (R6, C5), winning and tie-breaks (R7, C6), variants (R8, R2h)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.kahuna import (
    ISLANDS,
    LINES,
    HandicapBridge,
    KahunaError,
    Outcome,
    SetupError,
    State,
    Termination,
    Variant,
    apply,
    apply_legal,
    deal_from_seed,
    legal_actions,
    new_game,
    start_round,
)
from arena.testing.examples import examples

from .util import legal_texts, majority_control, playout, pos, run

# ------------------------------------------------------------------ R5 control

# (id, spec, actions, expected bridges, expected controlled)
CONTROL_CASES: list[tuple[str, dict[str, Any], list[str], dict[str, int], dict[str, int]]] = [
    ("R5-majority-gains-control",
     {"hands": [["ALOA"], []], "bridges": {"ALOA-BARI": 0}},
     ["place ALOA ALOA-DUDA"],
     {"ALOA-BARI": 0, "ALOA-DUDA": 0}, {"ALOA": 0}),
    ("R5-one-placement-wins-two-islands",
     {"hands": [["ALOA"], []],
      "bridges": {"ALOA-BARI": 0, "DUDA-HUNA": 0, "HUNA-LALE": 0,
                  "ALOA-DUDA": 1, "ELAI-HUNA": 1, "HUNA-IFFI": 1, "BARI-COCO": 1}},
     ["place ALOA ALOA-HUNA"],
     {"ALOA-BARI": 0, "DUDA-HUNA": 0, "HUNA-LALE": 0, "ALOA-HUNA": 0, "BARI-COCO": 1},
     {"ALOA": 0, "HUNA": 0}),
    ("R5-clearing-costs-neighbouring-token",
     {"hands": [["HUNA"], []],
      "bridges": {"ALOA-HUNA": 0, "DUDA-HUNA": 0, "HUNA-LALE": 1, "IFFI-LALE": 1,
                  "KAHU-LALE": 0}},
     ["place HUNA ELAI-HUNA"],
     {"ALOA-HUNA": 0, "DUDA-HUNA": 0, "ELAI-HUNA": 0, "IFFI-LALE": 1, "KAHU-LALE": 0},
     {"HUNA": 0}),
    ("R5-no-clearing-on-island-already-held",
     {"hands": [["ELAI"], []],
      "bridges": {"BARI-ELAI": 0, "DUDA-ELAI": 0, "ELAI-FAAA": 0, "ELAI-HUNA": 0,
                  "ELAI-IFFI": 1}},
     ["place ELAI ELAI-JOJO"],
     {"BARI-ELAI": 0, "DUDA-ELAI": 0, "ELAI-FAAA": 0, "ELAI-HUNA": 0, "ELAI-IFFI": 1,
      "ELAI-JOJO": 0},
     {"ELAI": 0}),
    ("R5-remove-costs-owner-token-no-gain",
     {"hands": [["IFFI", "LALE"], []],
      "bridges": {"HUNA-LALE": 1, "IFFI-LALE": 1, "KAHU-LALE": 0}},
     ["remove IFFI+LALE IFFI-LALE"],
     {"HUNA-LALE": 1, "KAHU-LALE": 0}, {}),
    ("R5-regaining-majority-clears-again",
     {"hands": [["LALE"], ["HUNA", "LALE", "KAHU"]], "to_move": 1,
      "bridges": {"HUNA-LALE": 0, "IFFI-LALE": 0}},
     ["remove HUNA+LALE HUNA-LALE", "place KAHU KAHU-LALE", "draw deck",
      "place LALE HUNA-LALE"],
     {"IFFI-LALE": 0, "HUNA-LALE": 0}, {"LALE": 0}),
    ("R3-remove-then-place-on-freed-line",
     {"hands": [["ELAI", "HUNA", "HUNA"], []], "bridges": {"ELAI-HUNA": 1}},
     ["remove ELAI+HUNA ELAI-HUNA", "place HUNA ELAI-HUNA"],
     {"ELAI-HUNA": 0}, {}),
]


@pytest.mark.parametrize(("spec", "actions", "bridges", "controlled"),
                         [c[1:] for c in CONTROL_CASES], ids=[c[0] for c in CONTROL_CASES])
def test_control(spec: dict[str, Any], actions: list[str], bridges: dict[str, int],
                 controlled: dict[str, int]) -> None:
    state = run(pos(**spec), *actions)
    assert dict(state.bridges) == bridges
    assert dict(state.controlled) == controlled == majority_control(state)


def test_twelve_islands_no_token_cap_C1() -> None:
    bridges = {line: 0 for line in LINES[:25]}
    state = pos(bridges=bridges, round=3, final_turn=2, deck=[], rest="played")
    assert len(state.controlled) == 12
    state = run(state, "pass")
    assert state.outcome == Outcome(0, Termination.POINTS, (12, 0))


# ------------------------------------------------------------------ R4, C8 drawing

def test_faceup_take_refills_slot_from_deck_R4() -> None:
    state = pos(faceup=["COCO", "DUDA", "LALE"], deck=["HUNA", "ALOA"])
    after = run(state, "draw DUDA")
    assert after.faceup == ("COCO", "HUNA", "LALE")
    assert after.deck_size == state.deck_size - 1
    assert after.hands[0] == ("DUDA",) and after.to_move == 1


def test_two_slots_show_the_card_lower_slot_taken_C8() -> None:
    state = pos(faceup=["LALE", "COCO", "LALE"], deck=["HUNA"])
    assert legal_texts(state).count("draw LALE") == 1
    assert run(state, "draw lale").faceup == ("HUNA", "COCO", "LALE")


def test_slot_stays_empty_when_pile_is_empty_R4() -> None:
    state = pos(faceup=["LALE", "COCO", None], deck=[], rest="played")
    after = run(state, "draw COCO")
    assert after.faceup == ("LALE", None, None) and not after.needs_reshuffle
    assert "draw deck" not in legal_texts(after)


def test_deck_draw_is_the_top_card() -> None:
    state = pos(deck=["KAHU", "ALOA"])
    after = run(state, "draw deck")
    assert after.hands[0] == ("KAHU",) and after.history[-1].drawn == "KAHU"


# ------------------------------------------------------------------ R6 rounds

def round_end(**extra: Any) -> Any:
    spec: dict[str, Any] = {"faceup": [None, "COCO", None], "deck": [], "rest": "played"}
    spec.update(extra)
    return pos(**spec)


ROUND_CASES = [
    ("R6-round-1-leader-scores-1", 1, {"ALOA-BARI": 0, "ALOA-DUDA": 0}, (1, 0)),
    ("R6-round-2-leader-scores-2", 2, {"ALOA-BARI": 1, "ALOA-DUDA": 1, "HUNA-LALE": 0}, (0, 2)),
    ("R6-tie-scores-nothing", 1, {"ALOA-BARI": 1, "ALOA-DUDA": 1, "HUNA-LALE": 0,
                                   "KAHU-LALE": 0}, (0, 0)),
]


@pytest.mark.parametrize(("round_no", "bridges", "points"), [c[1:] for c in ROUND_CASES],
                         ids=[c[0] for c in ROUND_CASES])
def test_interim_scoring(round_no: int, bridges: dict[str, int], points: tuple[int, int]) -> None:
    state = run(round_end(round=round_no, bridges=bridges), "draw COCO")
    assert state.needs_reshuffle and state.points == points and legal_actions(state) == ()
    assert state.to_move == 1


def test_round_ends_on_faceup_take_and_reshuffles_whole_pile_R6() -> None:
    state = round_end(hands=[["HUNA"], ["ALOA"]], facedown=[["DUDA"], ["KAHU"]],
                      bridges={"ELAI-HUNA": 0, "ALOA-BARI": 1})
    state = run(state, "draw COCO")
    cards = state.reshuffle_cards
    assert len(cards) == 24 - 3 and "DUDA" in cards and "KAHU" in cards
    with pytest.raises(SetupError):
        start_round(state, cards[1:])
    order = list(reversed(cards))
    after = start_round(state, order)
    assert after.round == 2 and after.to_move == 1 and not after.is_finished
    assert list(after.faceup) == order[:3] and after.deck_size == len(order) - 3
    assert after.hands == (("COCO", "HUNA"), ("ALOA",))
    assert after.played_cards == () and after.facedown_discards == ((), ())
    assert "pass" in legal_texts(after)


def test_round_ends_on_last_deck_card_R6() -> None:
    state = pos(faceup=[None, None, None], deck=["HUNA"], rest="played", to_move=1)
    after = run(state, "draw deck")
    assert after.needs_reshuffle and after.to_move == 0


def test_final_turns_then_final_scoring_C5() -> None:
    state = round_end(round=3, points=[1, 0], to_move=1, hands=[["ALOA"], []],
                      bridges={"HUNA-LALE": 0, "IFFI-LALE": 0, "COCO-KAHU": 1})
    state = run(state, "draw COCO")
    assert state.final_turns and state.to_move == 0 and not state.is_finished
    assert "pass" in legal_texts(state) and "draw deck" not in legal_texts(state)
    state = run(state, "place ALOA ALOA-BARI", "pass")
    assert state.final_turns and state.to_move == 1 and "pass" in legal_texts(state)
    state = run(state, "pass")
    assert state.outcome == Outcome(0, Termination.POINTS, (2, 0))
    assert state.to_move is None and state.final_scoring_points == (1, 0)


# ------------------------------------------------------------------ R7 winning

TIE_BREAKS = [
    ("R7.2-points", [3, 0], {"HUNA-LALE": 1, "IFFI-LALE": 1, "ELAI-HUNA": 0},
     Outcome(0, Termination.POINTS, (3, 1))),
    ("R7.3-final-points", [3, 0],
     {"HUNA-LALE": 1, "IFFI-LALE": 1, "ELAI-HUNA": 0, "ALOA-BARI": 1, "ALOA-DUDA": 1,
      "COCO-KAHU": 1, "GOLA-KAHU": 1, "IFFI-KAHU": 1},
     Outcome(1, Termination.FINAL_POINTS, (3, 3))),
    ("R7.4-bridges", [0, 0], {"ELAI-HUNA": 0, "BARI-COCO": 1, "ALOA-BARI": 1},
     Outcome(1, Termination.BRIDGES, (0, 0))),
    ("R7.5-draw", [0, 0], {"ELAI-HUNA": 0, "BARI-COCO": 1},
     Outcome(None, Termination.DRAW, (0, 0))),
]


@pytest.mark.parametrize(("points", "bridges", "outcome"), [c[1:] for c in TIE_BREAKS],
                         ids=[c[0] for c in TIE_BREAKS])
def test_tie_breaks(points: list[int], bridges: dict[str, int], outcome: Outcome) -> None:
    state = pos(round=3, final_turn=2, points=points, bridges=bridges, deck=[], rest="played")
    assert run(state, "pass").outcome == outcome


NO_BRIDGE_CASES: list[tuple[str, dict[str, Any], list[str], Outcome | None]] = [
    ("C6-removal-ends-round-2",
     {"round": 2, "hands": [["ELAI", "HUNA"], []], "bridges": {"ELAI-HUNA": 1, "ALOA-BARI": 0}},
     ["remove ELAI+HUNA ELAI-HUNA"], Outcome(0, Termination.NO_BRIDGES, (0, 0))),
    ("C6-not-in-round-1",
     {"round": 1, "hands": [["ELAI", "HUNA"], []], "bridges": {"ELAI-HUNA": 1, "ALOA-BARI": 0}},
     ["remove ELAI+HUNA ELAI-HUNA"], None),
    ("C6-both-without-bridges-continue",
     {"round": 3, "points": [0, 2], "hands": [["ELAI", "HUNA"], []],
      "bridges": {"ELAI-HUNA": 1}},
     ["remove ELAI+HUNA ELAI-HUNA"], None),
    ("C6-first-bridge-then-wins",
     {"round": 2, "points": [0, 1], "hands": [["HUNA"], []]},
     ["place HUNA ELAI-HUNA"], Outcome(0, Termination.NO_BRIDGES, (0, 1))),
    ("C6-clearing-takes-last-bridges",
     {"round": 2, "hands": [["ALOA"], []], "bridges": {"ALOA-BARI": 0, "ALOA-DUDA": 1}},
     ["place ALOA ALOA-HUNA"], Outcome(0, Termination.NO_BRIDGES, (0, 0))),
    ("C6-in-final-turns",
     {"round": 3, "final_turn": 1, "deck": [], "rest": "played", "hands": [["ELAI", "HUNA"], []],
      "bridges": {"ELAI-HUNA": 1, "ALOA-BARI": 0}},
     ["remove ELAI+HUNA ELAI-HUNA"], Outcome(0, Termination.NO_BRIDGES, (0, 0))),
]


@pytest.mark.parametrize(("spec", "actions", "outcome"), [c[1:] for c in NO_BRIDGE_CASES],
                         ids=[c[0] for c in NO_BRIDGE_CASES])
def test_no_bridges(spec: dict[str, Any], actions: list[str], outcome: Outcome | None) -> None:
    state = run(pos(**spec), *actions)
    assert state.outcome == outcome
    assert (state.to_move is None) is (outcome is not None)


@pytest.mark.parametrize(("bridges", "winner"), [
    ({"ALOA-BARI": 0, "ALOA-DUDA": 0}, 0),
    ({}, None),
], ids=["C6-start-of-round-2-after-scoring", "C6-start-of-round-2-both-empty"])
def test_no_bridges_at_round_start(bridges: dict[str, int], winner: int | None) -> None:
    state = run(round_end(bridges=bridges), "draw COCO")
    after = start_round(state, state.reshuffle_cards)
    assert after.round == 2
    if winner is None:
        assert not after.is_finished and after.points == (0, 0)
    else:
        assert after.outcome == Outcome(winner, Termination.NO_BRIDGES, (1, 0))


# ------------------------------------------------------------------ R8 variants, R2h

def test_tactical_open_cards_go_first_R8() -> None:
    state = pos(variant={"tactical": True}, hands=[["HUNA"], []],
                faceup=["HUNA", "COCO", None], deck=["ALOA", "DUDA"])
    state = run(state, "draw HUNA")
    assert state.open_cards == (("HUNA",), ()) and state.hands[0] == ("HUNA", "HUNA")
    state = run(state, "draw deck", "place HUNA ELAI-HUNA")
    assert state.open_cards == ((), ()) and state.hands[0] == ("HUNA",)


def test_tactical_discard_spends_open_copy_R8() -> None:
    state = pos(variant={"tactical": True}, hands=[["COCO"], []], open_cards=[["COCO"], []])
    assert run(state, "discard COCO").open_cards == ((), ())


def test_basic_game_has_no_open_cards_R8() -> None:
    state = run(pos(faceup=["HUNA", None, None], deck=["ALOA"]), "draw HUNA")
    assert state.open_cards == ((), ())


def test_handicap_places_bridges_and_control_R2h() -> None:
    handicap = [HandicapBridge(1, "ALOA-BARI"), HandicapBridge(1, "ALOA-DUDA")]
    state = new_game(deal_from_seed(3), Variant(), handicap)
    assert dict(state.bridges) == {"ALOA-BARI": 1, "ALOA-DUDA": 1}
    assert dict(state.controlled) == {"ALOA": 1} and state.supply == (25, 23)


@pytest.mark.parametrize("handicap", [
    [HandicapBridge(1, line) for line in LINES[:4]],
    [HandicapBridge(1, "ALOA-BARI"), HandicapBridge(0, "ALOA-DUDA")],
    [HandicapBridge(1, "ALOA-BARI"), HandicapBridge(1, "ALOA-BARI")],
    [HandicapBridge(1, "ALOA-LALE")],
    [HandicapBridge(2, "ALOA-BARI")],
], ids=["R2h-four", "R2h-two-seats", "R2h-same-line", "R2h-no-such-line", "R2h-no-such-seat"])
def test_bad_handicap_is_refused_R2h(handicap: list[HandicapBridge]) -> None:
    with pytest.raises(SetupError):
        new_game(deal_from_seed(3), Variant(), handicap)


@pytest.mark.parametrize("deal", [
    list(deal_from_seed(0))[:23],
    [*list(deal_from_seed(0))[:23], "XXXX"],
    ["ALOA"] * 24,
], ids=["R2-short-deal", "R2-unknown-island", "R2-not-two-each"])
def test_bad_deal_is_refused_R2(deal: list[str]) -> None:
    with pytest.raises(SetupError):
        new_game(deal)


JUNK = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=6),
                 st.sampled_from(ISLANDS), st.lists(st.integers(), max_size=2))  # fmt: skip
BRIDGES = st.one_of(JUNK, st.builds(HandicapBridge, st.one_of(st.integers(-1, 2), JUNK),
                                    st.one_of(st.sampled_from(LINES), JUNK)))  # fmt: skip


@settings(max_examples=examples(300), deadline=None)
@given(
    deal=st.one_of(JUNK, st.lists(st.one_of(st.sampled_from(ISLANDS), JUNK), max_size=26),
                   st.permutations(list(deal_from_seed(0)))),
    variant=st.one_of(st.just(Variant()), JUNK),
    handicap=st.one_of(JUNK, st.lists(BRIDGES, max_size=4)),
)  # fmt: skip
def test_new_game_refuses_anything_with_a_kahuna_error(
    deal: Any, variant: Any, handicap: Any
) -> None:
    try:
        state = new_game(deal, variant, handicap)
    except KahunaError as error:
        assert isinstance(error, SetupError) and str(error) and "\n" not in str(error)
    else:
        assert state.round == 1 and not state.is_finished


@settings(max_examples=examples(200), deadline=None)
@given(order=st.one_of(JUNK, st.lists(st.one_of(st.sampled_from(ISLANDS), JUNK), max_size=22)),
       shuffle=st.randoms(use_true_random=False))  # fmt: skip
def test_start_round_refuses_anything_with_a_kahuna_error(order: Any, shuffle: Any) -> None:
    ended = round_end(hands=[["HUNA"], ["ALOA"]], facedown=[["DUDA"], ["KAHU"]],
                      bridges={"ELAI-HUNA": 0, "ALOA-BARI": 1})
    ended = run(ended, "draw COCO")
    if shuffle.random() < 0.3:  # now and then a true permutation, which must be accepted
        order = shuffle.sample(list(ended.reshuffle_cards), len(ended.reshuffle_cards))
    for state in (ended, new_game(deal_from_seed(0))):  # the second has no round to start
        try:
            after = start_round(state, order)
        except KahunaError as error:
            assert isinstance(error, SetupError) and str(error)
        else:
            assert state is ended and after.round == 2


def test_deal_goes_to_hands_faceup_and_pile_R2() -> None:
    deal = deal_from_seed(11)
    state = new_game(deal)
    assert state.hands == (tuple(sorted(deal[0:3])), tuple(sorted(deal[3:6])))
    assert state.faceup == deal[6:9] and state.deck == deal[9:] and state.to_move == 0


def test_discard_only_turn_C2() -> None:
    state = pos(hands=[["HUNA", "ALOA", "LALE"], []])
    state = run(state, "discard HUNA", "discard ALOA")
    assert state.facedown_discards == (("HUNA", "ALOA"), ())
    assert not any(t.startswith(("place", "remove")) for t in legal_texts(state))
    state = run(state, "draw deck")
    assert state.to_move == 1 and not state.turn_discarded


def test_history_records_every_action_and_deck_draws() -> None:
    state = pos(hands=[["HUNA"], []], deck=["KAHU"])
    assert state.last_event is None and state.history == ()
    state = run(state, "place HUNA ELAI-HUNA", "draw deck")
    assert [(e.seat, e.action.text(), e.drawn) for e in state.history] == [
        (0, "place HUNA ELAI-HUNA", None), (0, "draw deck", "KAHU")]
    assert state.last_event == state.history[-1] and state.history_length == 2


# ------------------------------------------------------------------ apply_legal


def _slots(state: State) -> list[object]:
    return [getattr(state, name) for name in State.__slots__ if name != "_legal"]


@pytest.mark.parametrize("variant", [Variant(), Variant(strategic=True), Variant(tactical=True)],
                         ids=["standard", "strategic", "tactical"])
@pytest.mark.parametrize("seed", range(3))
def test_apply_legal_is_apply_for_every_legal_action(seed: int, variant: Variant) -> None:
    """The referee's unchecked path gives the state the checked one gives, everywhere."""
    for before, action, _ in playout(seed, variant):
        if action is None:
            continue
        for legal in legal_actions(before):
            assert _slots(apply_legal(before, legal)) == _slots(apply(before, legal)), legal
