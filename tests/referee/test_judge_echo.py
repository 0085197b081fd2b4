"""The hot path's judge of reply bytes agrees with the full judge wherever it answers."""

from __future__ import annotations

import pytest
from google.protobuf.message import DecodeError
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.kahuna import Variant, deal_from_seed, legal_actions, new_game
from arena.protocol.convert import action_to_pb
from arena.protocol.gen.kahuna.v1 import game_pb2, referee_pb2
from arena.protocol.wire import action_bytes, echoed_action
from arena.referee.endpoint import Arrival, ArrivalKind
from arena.referee.game import Clock
from arena.referee.judge import Phase, ReplyWindow, Verdict, VerdictKind, judge, judge_echo
from arena.testing.examples import examples

SENT_NS = 1_000_000_000
STATE = new_game(deal_from_seed(3), Variant(tactical=True))
LEGAL = legal_actions(STATE)


def _expect(request_id: int, phase: Phase = Phase.AWAIT_REPLY) -> ReplyWindow:
    return ReplyWindow(
        token="t", phase=phase, request_id=request_id, clock=Clock(100, started_ns=SENT_NS),
        state=STATE, legal={action_bytes(action): action for action in LEGAL},
    )  # fmt: skip


def _reply(request_id: int, action: game_pb2.Action | None) -> bytes:
    reply = referee_pb2.ActionReply(request_id=request_id)
    if action is not None:
        reply.action.CopyFrom(action)
    return referee_pb2.PlayRequest(action_reply=reply).SerializeToString()


def _full_judge(raw: bytes, received_ns: int, expect: ReplyWindow) -> Verdict | None:
    """What the full judge makes of ``raw``: its verdict if an ACTION, else None."""
    try:
        message = referee_pb2.PlayRequest.FromString(raw)
    except DecodeError:  # not an action either way
        return None
    verdict = judge(Arrival(0, 1, ArrivalKind.MESSAGE, received_ns, message), expect)
    if verdict.kind is not VerdictKind.ACTION:
        return None
    return verdict


@pytest.mark.parametrize("request_id", [1, 127, 128, 300, 2**21, 2**40])
@pytest.mark.parametrize("index", range(len(LEGAL)))
def test_an_echoed_legal_action_is_taken_as_the_full_judge_would(
    request_id: int, index: int
) -> None:
    raw = _reply(request_id, action_to_pb(LEGAL[index]))
    received_ns = SENT_NS + 5_000_000
    assert echoed_action(raw, request_id) == action_bytes(LEGAL[index])
    taken = judge_echo(raw, received_ns, _expect(request_id))
    assert taken is not None and (taken.action, taken.elapsed_ms) == (LEGAL[index], 5.0)
    assert taken == _full_judge(raw, received_ns, _expect(request_id))


UNKNOWN_FIELD = b"\x18\x01"  # ActionReply field 3, varint 1: parses, but is not canonical
CASES = {
    "another request id": (_reply(8, action_to_pb(LEGAL[0])), SENT_NS),
    "no action": (_reply(7, None), SENT_NS),
    "too late": (_reply(7, action_to_pb(LEGAL[0])), SENT_NS + 101_000_000),
    "illegal action": (
        _reply(7, game_pb2.Action(type=game_pb2.ACTION_TYPE_PLACE, card="LALE", line="X-Y")),
        SENT_NS,
    ),
    "lower-case action": (
        _reply(7, game_pb2.Action(type=game_pb2.ACTION_TYPE_DISCARD, card="x")), SENT_NS
    ),
    "fields out of order": (
        b"\x12" + bytes([len(action_bytes(LEGAL[0])) + 4]) + b"\x12"
        + bytes([len(action_bytes(LEGAL[0]))]) + action_bytes(LEGAL[0]) + b"\x08\x07",
        SENT_NS,
    ),
    "unknown field": (
        b"\x12" + bytes([len(action_bytes(LEGAL[0])) + 6]) + b"\x08\x07" + UNKNOWN_FIELD
        + b"\x12" + bytes([len(action_bytes(LEGAL[0]))]) + action_bytes(LEGAL[0]),
        SENT_NS,
    ),
    "trailing bytes": (_reply(7, action_to_pb(LEGAL[0])) + b"\x00", SENT_NS),
    "hello": (
        referee_pb2.PlayRequest(hello=referee_pb2.Hello(token="t")).SerializeToString(),
        SENT_NS,
    ),
    "empty": (b"", SENT_NS),
}  # fmt: skip


@pytest.mark.parametrize("raw, received_ns", CASES.values(), ids=CASES.keys())
def test_anything_else_is_left_to_the_full_judge(raw: bytes, received_ns: int) -> None:
    assert judge_echo(raw, received_ns, _expect(7)) is None


@pytest.mark.parametrize("phase", [Phase.IDLE, Phase.AWAIT_HELLO])
def test_no_open_request_no_echo(phase: Phase) -> None:
    raw = _reply(7, action_to_pb(LEGAL[0]))
    assert judge_echo(raw, SENT_NS, _expect(7, phase)) is None


@settings(max_examples=examples(400), deadline=None)
@given(
    index=st.integers(0, len(LEGAL) - 1),
    request_id=st.integers(1, 2**33),
    cuts=st.lists(st.tuples(st.integers(0, 40), st.binary(max_size=3)), max_size=3),
    after_ms=st.floats(0, 150),
)
def test_mutated_replies_never_disagree_with_the_full_judge(
    index: int, request_id: int, cuts: list[tuple[int, bytes]], after_ms: float
) -> None:
    """Wherever the bytes judge answers, the parse-and-judge path answers the same."""
    raw = _reply(request_id, action_to_pb(LEGAL[index]))
    for position, insert in cuts:  # splice bytes in and out anywhere
        position %= len(raw) + 1
        raw = raw[:position] + insert + raw[position + len(insert) // 2 :]
    received_ns = SENT_NS + int(after_ms * 1e6)
    taken = judge_echo(raw, received_ns, _expect(request_id))
    if taken is not None:
        assert taken == _full_judge(raw, received_ns, _expect(request_id))
