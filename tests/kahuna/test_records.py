"""Records (docs/reference/RECORD.md): round trips, replay errors, malformed and hostile input."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.kahuna import (
    ISLANDS,
    HandicapBridge,
    MalformedRecordError,
    Variant,
    apply,
    deal_from_seed,
    legal_actions,
    new_game,
    parse_record,
    play_random_game,
    record_of,
    record_to_json,
    replay,
    replay_steps,
    reshuffle_from_seed,
    start_round,
    state_summary,
)
from arena.testing.examples import examples


def base(**changes: Any) -> dict[str, Any]:
    data = record_to_json(play_random_game(7))
    data.update(changes)
    return data


@pytest.mark.parametrize("variant", [Variant(), Variant(True, False), Variant(False, True)],
                         ids=["basic", "strategic", "tactical"])
def test_round_trip(variant: Variant) -> None:
    for seed in range(5):
        record = play_random_game(seed, variant)
        text = json.dumps(record_to_json(record))
        again = parse_record(text)
        assert again == record
        assert json.dumps(record_to_json(again)) == text
        result = replay(again)
        assert result.error is None and result.state.outcome == record.result
        rebuilt = record_of(result.state, record.deal, record.reshuffles)
        assert rebuilt == record


def test_same_seed_same_record() -> None:
    assert play_random_game(12) == play_random_game(12)
    assert play_random_game(12).deal != play_random_game(13).deal


def test_unknown_keys_are_kept_and_lenient_notation_accepted() -> None:
    data = base(match={"bots": ["a", "b"]})
    data["actions"][0] = {k.upper() if k == "x" else k: (v.lower() if isinstance(v, str) else v)
                          for k, v in data["actions"][0].items()}
    data["actions"][0]["time_ms"] = 12
    record = parse_record(json.dumps(data))
    assert record.extra == {"match": {"bots": ["a", "b"]}}
    assert replay(record).error is None


def test_actions_without_seat_are_accepted() -> None:
    data = base()
    for action in data["actions"]:
        del action["seat"]
    assert replay(parse_record(json.dumps(data))).error is None


def test_replay_stops_at_first_illegal_action_with_its_rule() -> None:
    data = base()
    absent = next(island for island in ISLANDS if island not in data["deal"][6:9])
    good = data["actions"][:3]
    data["actions"] = [*good, {"type": "draw", "card": absent}, {"type": "jump"}]
    with pytest.raises(MalformedRecordError):  # the whole record is read first
        parse_record(json.dumps(data))
    data["actions"] = [*good, {"card": absent.lower(), "type": "draw"}, {"type": "pass"}]
    data["actions"][:3] = [{"type": "pass"}, {"type": "draw"}, {"type": "draw", "card": absent}]
    result = replay(parse_record(json.dumps(data)))
    assert result.error is not None and result.error.index == 2
    assert result.error.message() == (
        f'action 2 {{"type": "draw", "card": "{absent}"}}: R4: no face-up {absent}')
    assert result.state.history_length == 2


@pytest.mark.parametrize("seed", [1, 2, 7])
def test_replay_steps_walk_every_position_once(seed: int) -> None:
    record = play_random_game(seed, Variant(strategic=seed % 2 == 0))
    steps = list(replay_steps(record))
    assert [step.action for step in steps] == list(range(-1, len(record.actions)))
    assert [step.state.history_length for step in steps] == list(range(len(record.actions) + 1))
    began = [step for step in steps if step.round_began]
    assert [step.state.round for step in began] == list(range(2, len(record.reshuffles) + 2))
    assert all(step.stopped is None for step in steps)
    final = replay(record)
    assert steps[-1].state.outcome == final.state.outcome == record.result
    assert state_summary(steps[-1].state) == state_summary(final.state)


def test_replay_steps_stop_at_the_illegal_action_after_the_last_position() -> None:
    record = play_random_game(4)
    seat, action = record.actions[5]
    assert seat is not None
    wrong_seat = (1 - seat, action)  # R3: not this seat's turn
    bad = dataclasses.replace(record, actions=(*record.actions[:5], wrong_seat,
                                               *record.actions[6:]))  # fmt: skip
    steps = list(replay_steps(bad))
    assert [step.action for step in steps] == [-1, 0, 1, 2, 3, 4]
    last = steps[-1]
    assert last.stopped is not None and last.stopped.index == 5
    final = replay(bad)
    assert final.error is not None and last.stopped.message() == final.error.message()
    assert last.stopped.error.rule == "R3"
    assert state_summary(last.state) == state_summary(final.state)


def test_replay_steps_refuse_a_missing_reshuffle_when_they_reach_it() -> None:
    record = play_random_game(1)
    assert record.reshuffles
    cut = dataclasses.replace(record, reshuffles=())
    walked = []
    with pytest.raises(MalformedRecordError, match="reaches round 2 but 'reshuffles' has no"):
        walked.extend(step.state.round for step in replay_steps(cut))
    assert walked and set(walked) == {1}  # round 1 is walked before the refusal


def test_wrong_seat_is_an_illegal_action() -> None:
    data = base()
    data["actions"][0]["seat"] = 1
    error = replay(parse_record(json.dumps(data))).error
    assert error is not None and error.index == 0 and error.error.rule == "R3"


def test_actions_after_the_end_are_illegal_R7() -> None:
    data = base()
    data["actions"].append({"type": "pass"})
    error = replay(parse_record(json.dumps(data))).error
    assert error is not None and error.error.rule == "R7"
    assert error.index == len(data["actions"]) - 1


def prefix_ending_round_1(data: dict[str, Any]) -> int:
    record = parse_record(json.dumps(data))
    for n in range(len(record.actions) + 1):
        trimmed = dict(data, actions=data["actions"][:n], reshuffles=[])
        trimmed.pop("result", None)
        try:
            replay(parse_record(json.dumps(trimmed)))
        except MalformedRecordError:
            return n
    raise AssertionError("round 1 never ended")


def test_reshuffle_needed_at_the_end_of_a_round() -> None:
    data = base()
    n = prefix_ending_round_1(data)
    with_reshuffle = dict(data, actions=data["actions"][:n], reshuffles=data["reshuffles"][:1])
    del with_reshuffle["result"]
    state = replay(parse_record(json.dumps(with_reshuffle))).state
    assert state.round == 2 and state.deck_size == len(data["reshuffles"][0]) - 3


HOSTILE: list[tuple[str, str]] = [
    ("not-json", "{"),
    ("empty", ""),
    ("a-list", "[]"),
    ("wrong-format", json.dumps(base(format="kahuna-record/2"))),
    ("no-format", json.dumps({k: v for k, v in base().items() if k != "format"})),
    ("no-deal", json.dumps({k: v for k, v in base().items() if k != "deal"})),
    ("deal-unknown-island", json.dumps(base(deal=["XXXX", *base()["deal"][1:]]))),
    ("deal-short", json.dumps(base(deal=base()["deal"][:23]))),
    ("deal-three-of-one", json.dumps(base(deal=["ALOA", *base()["deal"][1:]]))),
    ("deal-not-strings", json.dumps(base(deal=list(range(24))))),
    ("deal-huge-number", '{"format": "kahuna-record/1", "deal": [' + "9" * 5000 + "]}"),
    ("deep-nesting", '{"format": "kahuna-record/1", "deal": ' + "[" * 100000 + "]" * 100000 + "}"),
    ("variant-not-bool", json.dumps(base(variant={"strategic": 1}))),
    ("variant-a-list", json.dumps(base(variant=[]))),
    ("handicap-empty", json.dumps(base(handicap=[]))),
    ("handicap-four", json.dumps(base(handicap=[{"seat": 0, "line": line} for line in
                                                ("ALOA-BARI", "ALOA-DUDA", "ALOA-HUNA",
                                                 "BARI-COCO")]))),
    ("handicap-two-seats", json.dumps(base(handicap=[{"seat": 0, "line": "ALOA-BARI"},
                                                     {"seat": 1, "line": "ALOA-DUDA"}]))),
    ("handicap-same-line", json.dumps(base(handicap=[{"seat": 0, "line": "ALOA-BARI"},
                                                     {"seat": 0, "line": "bari-aloa"}]))),
    ("handicap-no-such-line", json.dumps(base(handicap=[{"seat": 0, "line": "ALOA-LALE"}]))),
    ("handicap-bool-seat", json.dumps(base(handicap=[{"seat": True, "line": "ALOA-BARI"}]))),
    ("reshuffles-three", json.dumps(base(reshuffles=[[], [], []]))),
    ("reshuffle-unknown-island", json.dumps(base(reshuffles=[["XXXX"]]))),
    ("reshuffle-not-permutation", json.dumps(base(reshuffles=[base()["deal"][:20],
                                                              base()["reshuffles"][1]]))),
    ("reshuffle-missing", json.dumps(base(reshuffles=[]))),
    ("actions-not-list", json.dumps(base(actions={}))),
    ("action-not-object", json.dumps(base(actions=["pass"]))),
    ("action-unknown-type", json.dumps(base(actions=[{"type": "jump"}]))),
    ("action-type-number", json.dumps(base(actions=[{"type": 3}]))),
    ("action-seat-2", json.dumps(base(actions=[{"type": "pass", "seat": 2}]))),
    ("action-seat-bool", json.dumps(base(actions=[{"type": "pass", "seat": False}]))),
    ("action-seat-float", json.dumps(base(actions=[{"type": "pass", "seat": 0.0}]))),
    ("action-unknown-island", json.dumps(base(actions=[{"type": "discard", "card": "XX"}]))),
    ("action-no-such-line", json.dumps(base(actions=[{"type": "place", "card": "ALOA",
                                                      "line": "ALOA-LALE"}]))),
    ("action-missing-line", json.dumps(base(actions=[{"type": "place", "card": "ALOA"}]))),
    ("action-pass-with-card", json.dumps(base(actions=[{"type": "pass", "card": "ALOA"}]))),
    ("action-remove-three-cards", json.dumps(base(actions=[
        {"type": "remove", "cards": ["ALOA", "BARI", "BARI"], "line": "ALOA-BARI"}]))),
    ("action-card-list", json.dumps(base(actions=[{"type": "discard", "card": ["ALOA"]}]))),
    ("result-bad-winner", json.dumps(base(result={"winner": 2, "reason": "points",
                                                  "points": [0, 0]}))),
    ("result-bad-reason", json.dumps(base(result={"winner": 0, "reason": "luck",
                                                  "points": [0, 0]}))),
    ("result-reason-a-list", json.dumps(base(result={"winner": 0, "reason": [],
                                                     "points": [0, 0]}))),
    ("result-bad-points", json.dumps(base(result={"winner": 0, "reason": "points",
                                                  "points": [0]}))),
]


@pytest.mark.parametrize("text", [h[1] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_hostile_records_are_malformed_with_one_line(text: str) -> None:
    with pytest.raises(MalformedRecordError) as caught:
        replay(parse_record(text))
    message = str(caught.value)
    assert message and "\n" not in message and len(message) < 400


@settings(max_examples=examples(150), deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["format", "deal", "actions", "type", "card", "seat", "line",
                         "reshuffles", "handicap", "variant", "result", "cards"]),
        inner, max_size=5),
    max_leaves=20,
))
def test_arbitrary_json_never_escapes_as_another_error(data: object) -> None:
    if isinstance(data, dict):
        data = dict(data, format="kahuna-record/1")
    try:
        replay(parse_record(json.dumps(data)))
    except MalformedRecordError as exc:
        assert "\n" not in str(exc)


def test_state_summary_keys_and_sorting() -> None:
    summary = state_summary(replay(play_random_game(3)).state, legal=True)
    assert list(summary) == ["finished", "winner", "reason", "round", "to_move", "points",
                             "controlled", "bridges", "hands", "faceup", "deck_size", "legal"]
    bridges = summary["bridges"]
    assert isinstance(bridges, dict) and list(bridges) == sorted(bridges)
    assert summary["legal"] == []


ODD_VALUES: list[object] = [None, True, 0, 1, 2, -1, 1.5, "x", "HUNA", "huna", "ELAI-HUNA",
                            "deck", [], {}, ["ALOA"], {"type": "pass"}, 10**30, "place"]


def mutate(obj: object, rng: random.Random) -> object:
    """One random change somewhere inside a JSON value."""
    if isinstance(obj, dict) and obj:
        key = rng.choice(list(obj))
        roll = rng.random()
        if roll < 0.15:
            return {k: v for k, v in obj.items() if k != key}
        return {**obj, key: rng.choice(ODD_VALUES) if roll < 0.3 else mutate(obj[key], rng)}
    if isinstance(obj, list) and obj:
        index = rng.randrange(len(obj))
        roll = rng.random()
        if roll < 0.2:
            return obj[:index] + obj[index + 1:]
        if roll < 0.4:
            return [*obj[:index], rng.choice(ODD_VALUES), *obj[index:]]
        return [*obj[:index], mutate(obj[index], rng), *obj[index + 1:]]
    return rng.choice(ODD_VALUES)


def test_mutated_records_fail_cleanly_or_replay() -> None:
    rng = random.Random(3)
    records = [record_to_json(play_random_game(seed)) for seed in range(10)]
    for _ in range(400):
        data: object = rng.choice(records)
        for _ in range(rng.randint(1, 3)):
            data = mutate(data, rng)
        try:
            result = replay(parse_record(json.dumps(data)))
        except MalformedRecordError as exc:
            assert "\n" not in str(exc)
            continue
        state_summary(result.state, legal=True)
        if result.error is not None:
            assert "\n" not in result.error.message()


def test_handicap_record_round_trip_R2h() -> None:
    handicap = (HandicapBridge(1, "ALOA-BARI"), HandicapBridge(1, "ALOA-DUDA"))
    deal = deal_from_seed(4)
    state = new_game(deal, Variant(strategic=True), handicap)
    reshuffles = []
    rng = random.Random(4)
    while not state.is_finished:
        if state.needs_reshuffle:
            reshuffles.append(reshuffle_from_seed(4, state.round + 1, state.reshuffle_cards))
            state = start_round(state, reshuffles[-1])
        else:
            state = apply(state, rng.choice(legal_actions(state)))
    data = record_to_json(record_of(state, deal, reshuffles))
    assert data["handicap"] == [{"seat": 1, "line": "ALOA-BARI"}, {"seat": 1, "line": "ALOA-DUDA"}]
    again = replay(parse_record(json.dumps(data)))
    assert again.error is None and again.state.outcome == state.outcome
    assert state_summary(again.state) == state_summary(state)
