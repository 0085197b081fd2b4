"""Replay frames: the true state for "everything", exactly ``observe`` for a seat (R9)."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from arena.kahuna import (
    ActionType,
    Record,
    State,
    Variant,
    observe,
    play_random_game,
    replay,
)
from arena.web.frames import PerspectiveError, game_frames, parse_perspective

SEEDS = [1, 2, 3, 17]


@pytest.mark.parametrize(
    ("text", "expected"),
    [(None, None), ("", None), ("all", None), ("0", 0), ("1", 1)],
    ids=["absent", "empty", "all", "seat0", "seat1"],
)
def test_parse_perspective(text: str | None, expected: int | None) -> None:
    assert parse_perspective(text) == expected


@pytest.mark.parametrize("text", ["2", "-1", "seat0", "ALL", " 0"], ids=str)
def test_parse_perspective_names_the_bad_value(text: str) -> None:
    with pytest.raises(PerspectiveError, match="perspective must be one of all, 0, 1"):
        parse_perspective(text)


def prefix_state(record: Record, steps: int) -> State:
    """The engine's state after ``steps`` actions, replayed independently of frames.py."""
    result = replay(dataclasses.replace(record, actions=record.actions[:steps], result=None))
    assert result.error is None
    return result.state


@pytest.mark.parametrize("seed", SEEDS)
def test_everything_frames_follow_the_engine(seed: int) -> None:
    record = play_random_game(seed)
    frames = game_frames(record, None)
    assert frames.error is None
    assert len(frames.frames) == len(record.actions) + 1
    for step in (0, 1, len(record.actions) // 2, len(record.actions)):
        frame = frames.frames[step]
        state = prefix_state(record, step)
        assert frame["step"] == step
        assert frame["bridges"] == dict(state.bridges)
        assert frame["controlled"] == dict(state.controlled)
        assert frame["points"] == list(state.points)
        assert frame["hands"] == [list(h) for h in state.hands]
        assert frame["faceup"] == list(state.faceup)
        assert frame["deck_size"] == state.deck_size
        if step:
            seat, action = record.actions[step - 1]
            assert frame["action"] is not None
            assert frame["action"]["seat"] == seat
            assert frame["action"]["text"] == action.text()
    last = frames.frames[-1]
    assert last["finished"] is True
    assert record.result is not None
    assert last["outcome"] == {
        "winner": record.result.winner,
        "reason": str(record.result.termination),
        "points": list(record.result.points),
    }


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("seat", [0, 1])
def test_seat_frames_show_exactly_that_seats_observation(seed: int, seat: int) -> None:
    record = play_random_game(seed)
    frames = game_frames(record, seat)
    assert frames.error is None
    other = 1 - seat
    for step in range(0, len(record.actions) + 1, 7):
        frame = frames.frames[step]
        observation = observe(prefix_state(record, step), seat)
        assert frame["hands"][seat] == list(observation.hand)
        assert frame["hands"][other] is None
        assert frame["hand_sizes"][other] == observation.opponent_hand_size
        assert frame["facedown_discards"][other] is None
        assert frame["facedown_counts"][other] == observation.opponent_facedown_count
        assert frame["bridges"] == dict(observation.bridges)


def test_opponents_hidden_actions_are_masked_in_a_seats_frames() -> None:
    hidden_seen = 0
    for seed in range(1, 30):
        record = play_random_game(seed)
        for seat in (0, 1):
            frames = game_frames(record, seat).frames
            for step, (actor, action) in enumerate(record.actions, start=1):
                shown = frames[step]["action"]
                assert shown is not None
                if actor == seat:
                    assert shown["text"] == action.text()
                elif action.type is ActionType.DISCARD:
                    assert shown["text"] == "discard (face down)"
                    assert action.card not in json.dumps(shown)
                    hidden_seen += 1
                elif action.type is ActionType.DRAW and action.card is None:
                    assert shown["text"] == "draw deck"
                    assert shown["drawn"] is None
                else:
                    assert shown["text"] == action.text()
        if hidden_seen >= 3:
            break
    assert hidden_seen >= 3, "no face-down discards in 30 random games: test saw nothing"


def test_a_seat_never_sees_the_opponents_cards_in_hand() -> None:
    record = play_random_game(5)
    everything = game_frames(record, None).frames
    for seat in (0, 1):
        for frame, true_frame in zip(game_frames(record, seat).frames, everything, strict=True):
            assert frame["hands"][1 - seat] is None
            assert true_frame["hands"][1 - seat] is not None
            assert frame["hand_sizes"] == true_frame["hand_sizes"]


def test_tactical_open_cards_are_visible_to_the_opponent() -> None:
    record = play_random_game(8, Variant(tactical=True))
    frames = game_frames(record, 0).frames
    assert any(frame["open_cards"][1] for frame in frames), "seat 1 never drew face up"
    for frame in frames:
        assert frame["hands"][1] is None
        assert len(frame["open_cards"][1]) <= frame["hand_sizes"][1]


def test_round_changes_are_noted() -> None:
    record = play_random_game(1)
    notes = [f["note"] for f in game_frames(record, None).frames if f["note"]]
    assert len(notes) == len(record.reshuffles)
    assert notes[0].startswith("round 2 began")


def test_a_record_the_engine_refuses_stops_with_the_reason() -> None:
    record = play_random_game(1)
    bad = dataclasses.replace(record, actions=(record.actions[1], *record.actions[1:]))
    frames = game_frames(bad, None)
    assert frames.error is not None
    found = re.match(r"action (\d+) .+: R\d+: ", frames.error)
    assert found, frames.error
    assert len(frames.frames) == int(found.group(1)) + 1  # the positions before the bad action
