"""python_greedy's evaluation (greedy_eval) and its play against python_random.

Board positions are built by hand; rule ids refer to docs/reference/RULES.md (R5 clearing,
C6 no bridges). The play tests run in-process through real protocol
messages (harness.py); tests/sample_bots/test_matches.py plays real matches.
"""

from __future__ import annotations

import greedy_eval
import pytest
from kahuna_bot import Action, Clock, FunctionBot, Observation, Variant, parse_action

from arena import kahuna

from .harness import load_module, play_local_game

ME, OPPONENT = 0, 1


def _observation(
    bridges: dict[str, int],
    hand: tuple[str, ...],
    *,
    round_no: int = 1,
    deck_size: int = 10,
    faceup: tuple[str | None, str | None, str | None] = ("ALOA", "BARI", "COCO"),
) -> Observation:
    return Observation(
        game_index=0, seat=ME, variant=Variant(), round=round_no, to_move=ME, points=(0, 0),
        bridges=bridges, controlled={}, supply=(25, 25), hand=hand, opponent_hand_size=3,
        open_cards=((), ()), faceup=faceup, deck_size=deck_size, played_cards=(),
        own_facedown_discards=(), opponent_facedown_count=0, final_turns=False,
        opponent_passed=False, turn_played_card=False, turn_discarded=False, history=(),
        is_finished=False, outcome=None, clock=Clock(2000, 30000),
    )  # fmt: skip


def _actions(*texts: str) -> tuple[Action, ...]:
    return tuple(parse_action(text) for text in texts)


AFTER_PLACE_CASES = [
    pytest.param(
        {"ALOA-BARI": ME, "ALOA-HUNA": OPPONENT}, "ALOA-DUDA",
        {"ALOA-BARI": ME, "ALOA-DUDA": ME},
        id="R5-majority-clears-opponent",
    ),
    pytest.param(
        {"ALOA-BARI": ME, "BARI-COCO": ME, "ALOA-HUNA": OPPONENT, "BARI-FAAA": OPPONENT},
        "BARI-DUDA",
        {"ALOA-BARI": ME, "BARI-COCO": ME, "BARI-DUDA": ME, "ALOA-HUNA": OPPONENT},
        id="R5-clears-only-the-won-island",
    ),
    pytest.param(
        {"ALOA-BARI": ME, "ALOA-DUDA": ME, "DUDA-HUNA": OPPONENT},
        "ALOA-HUNA",
        {"ALOA-BARI": ME, "ALOA-DUDA": ME, "ALOA-HUNA": ME, "DUDA-HUNA": OPPONENT},
        id="R5-already-held-clears-nothing",
    ),
    pytest.param(
        {"ALOA-HUNA": OPPONENT}, "ALOA-BARI",
        {"ALOA-HUNA": OPPONENT, "ALOA-BARI": ME},
        id="no-majority-no-clearing",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("board", "line", "expected"), AFTER_PLACE_CASES)
def test_after_place_applies_r5_clearing(
    board: dict[str, int], line: str, expected: dict[str, int]
) -> None:
    assert greedy_eval.after_place(board, line, ME) == expected


def test_after_place_agrees_with_the_engine_in_random_games() -> None:
    for seed in range(4):
        record = kahuna.play_random_game(seed)
        state = kahuna.new_game(record.deal)
        reshuffles = iter(record.reshuffles)
        for seat, action in record.actions:
            if state.needs_reshuffle:
                state = kahuna.start_round(state, next(reshuffles))
            before = dict(state.bridges)
            state = kahuna.apply(state, action, seat)
            if action.type is kahuna.ActionType.PLACE:
                assert action.line is not None
                assert greedy_eval.after_place(before, action.line, seat) == dict(state.bridges)


CHOICE_CASES = [
    pytest.param(
        {"ALOA-BARI": ME, "ALOA-HUNA": OPPONENT}, ("DUDA", "KAHU"),
        ("place DUDA ALOA-DUDA", "place KAHU COCO-KAHU", "draw deck"),
        "place DUDA ALOA-DUDA",
        id="wins-an-island",
    ),
    pytest.param(
        {"ALOA-BARI": OPPONENT, "ALOA-DUDA": OPPONENT, "HUNA-LALE": ME}, ("ALOA", "BARI", "KAHU"),
        ("remove ALOA+BARI ALOA-BARI", "place KAHU COCO-KAHU", "draw deck"),
        "remove ALOA+BARI ALOA-BARI",
        id="breaks-opponent-control",
    ),
    pytest.param(
        {"ALOA-BARI": ME, "BARI-COCO": ME}, ("ALOA", "LALE", "LALE", "IFFI", "IFFI"),
        ("place LALE IFFI-LALE", "discard ALOA", "pass"),
        "place LALE IFFI-LALE",
        id="full-hand-spends-a-card-rather-than-pass",
    ),
    pytest.param(
        {"GOLA-KAHU": ME, "COCO-KAHU": ME}, (),
        ("draw deck", "draw ALOA", "draw JOJO", "pass"),
        "draw JOJO",
        id="draws-the-card-that-fits",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("board", "hand", "legal", "expected"), CHOICE_CASES)
def test_greedy_choices(
    board: dict[str, int], hand: tuple[str, ...], legal: tuple[str, ...], expected: str
) -> None:
    observation = _observation(board, hand, faceup=("ALOA", "JOJO", "COCO"))
    assert str(greedy_eval.choose(observation, _actions(*legal))) == expected


def test_ending_round_1_without_a_bridge_is_avoided_c6() -> None:
    board = {"ALOA-BARI": OPPONENT}
    observation = _observation(board, (), deck_size=0, faceup=(None, "COCO", None))
    assert greedy_eval.score_action(observation, parse_action("draw COCO")) < -500


def test_removing_the_opponents_last_bridge_in_round_2_wins_c6() -> None:
    board = {"ALOA-BARI": OPPONENT, "KAHU-LALE": ME}
    observation = _observation(board, ("ALOA", "BARI", "LALE"), round_no=2)
    legal = _actions("remove ALOA+BARI ALOA-BARI", "place LALE IFFI-LALE", "draw deck")
    chosen = greedy_eval.choose(observation, legal)
    assert str(chosen) == "remove ALOA+BARI ALOA-BARI"
    assert greedy_eval.score_action(observation, chosen) > greedy_eval.NO_BRIDGES_VALUE / 2


def test_taking_the_last_card_is_preferred_only_when_ahead() -> None:
    ahead = {"ALOA-BARI": ME, "ALOA-DUDA": ME, "KAHU-LALE": OPPONENT}
    behind = {"ALOA-BARI": OPPONENT, "ALOA-DUDA": OPPONENT, "KAHU-LALE": ME}
    last_card = parse_action("draw COCO")
    for board, sign in ((ahead, 1), (behind, -1)):
        observation = _observation(board, (), deck_size=0, faceup=(None, "COCO", None))
        assert greedy_eval.ends_round(observation, last_card)
        assert sign * greedy_eval.score_action(observation, last_card) > 0


@pytest.mark.slow  # long: a simulation or many generated cases
def test_greedy_beats_random_in_local_games() -> None:
    random_bot = load_module("python_random/bot.py", "sample_python_random")
    greedy, rand = FunctionBot(greedy_eval.choose), FunctionBot(random_bot.choose)
    wins = 0
    for game in range(12):
        greedy_seat = game % 2
        bots = (greedy, rand) if greedy_seat == 0 else (rand, greedy)
        outcome = play_local_game(bots, seed=500 + game // 2, game_index=game).outcome
        wins += outcome.winner == greedy_seat
    assert wins >= 10


def test_random_bot_is_reproducible() -> None:
    random_bot = load_module("python_random/bot.py", "sample_python_random")
    bots = (FunctionBot(random_bot.choose), FunctionBot(random_bot.choose))
    first = play_local_game(bots, seed=77, game_index=3)
    again = play_local_game(bots, seed=77, game_index=3)
    other = play_local_game(bots, seed=77, game_index=4)
    assert first == again
    assert (first.actions, first.outcome) != (other.actions, other.outcome)
