"""The one function that turns what a bot did into an action or a status."""

from __future__ import annotations

import dataclasses

import pytest

from arena.kahuna import deal_from_seed, legal_actions, new_game
from arena.protocol.convert import action_to_pb
from arena.protocol.gen.kahuna.v1 import game_pb2, referee_pb2
from arena.protocol.wire import action_bytes
from arena.referee import BotStatus
from arena.referee.endpoint import Arrival, ArrivalKind
from arena.referee.game import Clock
from arena.referee.judge import (
    DeadlinePassed,
    Ended,
    Occurrence,
    Phase,
    ReplyWindow,
    VerdictKind,
    judge,
)

TOKEN = "secret-token"
SENT_NS = 1_000_000_000
STATE = new_game(deal_from_seed(1))
LEGAL = legal_actions(STATE)


def _hello(token: str = TOKEN, version: int = 1) -> referee_pb2.PlayRequest:
    return referee_pb2.PlayRequest(
        hello=referee_pb2.Hello(token=token, bot_name="b", protocol_version=version)
    )


def _reply(request_id: int, action: game_pb2.Action | None = None) -> referee_pb2.PlayRequest:
    reply = referee_pb2.ActionReply(request_id=request_id)
    if action is not None:
        reply.action.CopyFrom(action)
    return referee_pb2.PlayRequest(action_reply=reply)


def _message(message: referee_pb2.PlayRequest, after_ms: float = 5) -> Arrival:
    return Arrival(0, 1, ArrivalKind.MESSAGE, SENT_NS + int(after_ms * 1e6), message)


def _expect(phase: Phase) -> ReplyWindow:
    return ReplyWindow(
        token=TOKEN,
        phase=phase,
        request_id=7,
        clock=Clock(action_ms=100, started_ns=SENT_NS),
        state=STATE,
        legal={action_bytes(action): action for action in LEGAL},
        expired_request_ids={3},
    )


GOOD = action_to_pb(LEGAL[0])
PLACE = next(action for action in LEGAL if action.type.value == "place")
assert PLACE.card is not None and PLACE.line is not None
LENIENT = game_pb2.Action(  # lower case, islands of the line swapped
    type=game_pb2.ACTION_TYPE_PLACE,
    card=PLACE.card.lower(),
    line="-".join(reversed(PLACE.line.split("-"))).lower(),
)
ILLEGAL = game_pb2.Action(type=game_pb2.ACTION_TYPE_PLACE, card="LALE", line="ALOA-BARI")

CASES: list[tuple[str, Phase, Occurrence, VerdictKind, BotStatus]] = [
    ("hello", Phase.AWAIT_HELLO, _message(_hello()), VerdictKind.HELLO, BotStatus.OK),
    ("wrong token", Phase.AWAIT_HELLO, _message(_hello("forged")), VerdictKind.FAILED,
     BotStatus.PROTOCOL_VIOLATION),
    ("wrong protocol version", Phase.AWAIT_HELLO, _message(_hello(version=2)),
     VerdictKind.FAILED, BotStatus.PROTOCOL_VIOLATION),
    ("reply before hello", Phase.AWAIT_HELLO, _message(_reply(7, GOOD)), VerdictKind.FAILED,
     BotStatus.PROTOCOL_VIOLATION),
    ("second hello", Phase.IDLE, _message(_hello()), VerdictKind.FAILED,
     BotStatus.PROTOCOL_VIOLATION),
    ("empty message", Phase.IDLE, _message(referee_pb2.PlayRequest()), VerdictKind.FAILED,
     BotStatus.MALFORMED_MESSAGE),
    ("undecodable bytes", Phase.IDLE, Arrival(0, 1, ArrivalKind.UNDECODABLE, SENT_NS),
     VerdictKind.FAILED, BotStatus.MALFORMED_MESSAGE),
    ("oversized", Phase.IDLE, Arrival(0, 1, ArrivalKind.OVERSIZED, SENT_NS, size_bytes=70000),
     VerdictKind.FAILED, BotStatus.PROTOCOL_VIOLATION),
    ("second stream", Phase.IDLE, Arrival(0, 1, ArrivalKind.SECOND_STREAM, SENT_NS),
     VerdictKind.FAILED, BotStatus.PROTOCOL_VIOLATION),
    ("traffic that is not the protocol", Phase.AWAIT_REPLY,
     Arrival(0, 1, ArrivalKind.NOT_PROTOCOL, SENT_NS, detail="9 calls of '/x.Y/Z'"),
     VerdictKind.FAILED, BotStatus.PROTOCOL_VIOLATION),
    ("reply out of turn", Phase.IDLE, _message(_reply(7, GOOD)), VerdictKind.FAILED,
     BotStatus.PROTOCOL_VIOLATION),
    ("late reply to a timed-out request", Phase.IDLE, _message(_reply(3, GOOD)),
     VerdictKind.IGNORED, BotStatus.OK),
    ("good reply", Phase.AWAIT_REPLY, _message(_reply(7, GOOD)), VerdictKind.ACTION,
     BotStatus.OK),
    ("legal action, not as sent", Phase.AWAIT_REPLY, _message(_reply(7, LENIENT)),
     VerdictKind.ACTION, BotStatus.OK),
    ("stale request id", Phase.AWAIT_REPLY, _message(_reply(6, GOOD)), VerdictKind.FAILED,
     BotStatus.PROTOCOL_VIOLATION),
    ("reply after the allowance", Phase.AWAIT_REPLY, _message(_reply(7, GOOD), after_ms=101),
     VerdictKind.FAILED, BotStatus.TIMEOUT),
    ("reply without action", Phase.AWAIT_REPLY, _message(_reply(7)), VerdictKind.FAILED,
     BotStatus.MALFORMED_MESSAGE),
    ("not an action", Phase.AWAIT_REPLY,
     _message(_reply(7, game_pb2.Action(type=game_pb2.ACTION_TYPE_DISCARD, card="ATLANTIS"))),
     VerdictKind.FAILED, BotStatus.MALFORMED_MESSAGE),
    ("illegal action", Phase.AWAIT_REPLY, _message(_reply(7, ILLEGAL)), VerdictKind.FAILED,
     BotStatus.ILLEGAL_ACTION),
    ("deadline", Phase.AWAIT_REPLY, DeadlinePassed(0, 100), VerdictKind.FAILED,
     BotStatus.TIMEOUT),
    ("no hello in time", Phase.AWAIT_HELLO, DeadlinePassed(0, 100), VerdictKind.FAILED,
     BotStatus.TIMEOUT),
    ("process exited", Phase.AWAIT_REPLY, Ended(0, 3), VerdictKind.FAILED, BotStatus.CRASH),
    ("stream closed, process alive", Phase.IDLE, Ended(0, None), VerdictKind.FAILED,
     BotStatus.DISCONNECT),
    ("stream cut by the arena", Phase.AWAIT_REPLY, Ended(0, None, cut="a token was revoked"),
     VerdictKind.FAILED, BotStatus.DISCONNECT),
]


@pytest.mark.parametrize(
    ("phase", "occurrence", "kind", "status"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_judge(phase: Phase, occurrence: Occurrence, kind: VerdictKind, status: BotStatus) -> None:
    verdict = judge(occurrence, _expect(phase))
    assert (verdict.kind, verdict.status) == (kind, status), verdict.reason
    if kind is VerdictKind.FAILED:
        assert verdict.reason  # every failure is named


ENDINGS = [
    # (case, how the bot ended, the reason it is given)
    ("an exit status", Ended(0, 3), "process exited with status 3"),
    ("killed, as the sandbox reports it", Ended(0, 137),
     "process exited with status 137 (killed by SIGKILL)"),
    ("a segfault", Ended(0, 139), "process exited with status 139 (killed by SIGSEGV)"),
    ("killed, unsandboxed", Ended(0, -9), "process killed by SIGKILL"),
    ("out of memory", Ended(0, 137, "out of memory: the sandbox's limit is 512 MiB"),
     "process exited with status 137 (killed by SIGKILL); out of memory: the sandbox's"
     " limit is 512 MiB"),
    ("a clean exit before Hello", Ended(0, 0),
     "process exited with status 0; a bot connects to KAHUNA_REFEREE, says Hello and"
     " plays until MatchOver (the kits' run() does)"),
    ("a limit, process alive", Ended(0, None, "a fork failed"),
     "stream closed while the process was running; a fork failed"),
    ("a remote bot's stream cut by the arena", Ended(0, None, cut="its owner's token was revoked"),
     "the arena ended the stream: its owner's token was revoked"),
]  # fmt: skip


TIMEOUTS = [
    # (case, the phase, the deadline that passed, the reason it is given)
    ("a reply", Phase.AWAIT_REPLY, DeadlinePassed(0, 2500, 7),
     "no reply to request 7 within 2500 ms"),
    ("a Hello", Phase.AWAIT_HELLO, DeadlinePassed(0, 4000), "no Hello within 4000 ms"),
    ("a reply, at the memory limit", Phase.AWAIT_REPLY,
     DeadlinePassed(0, 2500, 7, "it reached the sandbox's memory limit of 160 MiB"),
     "no reply to request 7 within 2500 ms; it reached the sandbox's memory limit of 160 MiB"),
]  # fmt: skip


@pytest.mark.parametrize(("phase", "deadline", "reason"), [case[1:] for case in TIMEOUTS],
                         ids=[case[0] for case in TIMEOUTS])  # fmt: skip
def test_a_timeout_names_what_was_awaited_and_the_limits_the_bot_ran_into(
    phase: Phase, deadline: DeadlinePassed, reason: str
) -> None:
    verdict = judge(deadline, _expect(phase))
    assert (verdict.status, verdict.reason) == (BotStatus.TIMEOUT, reason)


@pytest.mark.parametrize(("ended", "reason"), [case[1:] for case in ENDINGS],
                         ids=[case[0] for case in ENDINGS])  # fmt: skip
def test_an_ended_bot_is_told_how_it_ended_and_the_limits_it_ran_into(
    ended: Ended, reason: str
) -> None:
    phase = Phase.AWAIT_HELLO if ended.exit_code == 0 else Phase.AWAIT_REPLY
    assert judge(ended, _expect(phase)).reason == reason


STRAY_REPLIES = [
    # (case, the phase, the request the reply names, the reason it is given)
    ("the request before the open one: a second reply", Phase.AWAIT_REPLY, 6,
     "a second reply to request 6 (it was answered already); the open request is 7"),
    ("an older request", Phase.AWAIT_REPLY, 5, "reply to request 5, the open request is 7"),
    ("a request never sent", Phase.AWAIT_REPLY, 9, "reply to request 9, the open request is 7"),
    ("the last request again, none open", Phase.IDLE, 7,
     "a second reply to request 7 (it was answered already); no request is open"),
    ("another request, none open", Phase.IDLE, 5,
     "reply to request 5 while no request was open"),
]  # fmt: skip


@pytest.mark.parametrize(("phase", "request_id", "reason"), [c[1:] for c in STRAY_REPLIES],
                         ids=[case[0] for case in STRAY_REPLIES])  # fmt: skip
def test_a_reply_to_a_request_not_open_says_whether_it_answers_one_twice(
    phase: Phase, request_id: int, reason: str
) -> None:
    verdict = judge(_message(_reply(request_id, GOOD)), _expect(phase))
    assert (verdict.status, verdict.reason) == (BotStatus.PROTOCOL_VIOLATION, reason)


def test_an_accepted_action_is_the_one_sent_with_its_time() -> None:
    verdict = judge(_message(_reply(7, GOOD), after_ms=42), _expect(Phase.AWAIT_REPLY))
    assert verdict.action == LEGAL[0]
    assert verdict.elapsed_ms == pytest.approx(42)


def test_a_lenient_legal_action_is_the_canonical_one() -> None:
    verdict = judge(_message(_reply(7, LENIENT)), _expect(Phase.AWAIT_REPLY))
    assert verdict.action == PLACE


def test_illegal_action_names_the_rule() -> None:
    verdict = judge(_message(_reply(7, ILLEGAL)), _expect(Phase.AWAIT_REPLY))
    assert verdict.reason.startswith("place LALE ALOA-BARI: R3")


def test_a_late_reply_is_dropped_once() -> None:
    expect = _expect(Phase.IDLE)
    verdict = judge(_message(_reply(3, GOOD)), expect)
    assert (verdict.kind, verdict.late_reply_to) == (VerdictKind.IGNORED, 3)
    expect.consume(verdict)
    assert judge(_message(_reply(3, GOOD)), expect).status is BotStatus.PROTOCOL_VIOLATION


@pytest.mark.parametrize(
    ("phase", "occurrence"),
    [case[1:3] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_judge_changes_nothing(phase: Phase, occurrence: Occurrence) -> None:
    """The same occurrence judged twice: the same verdict, the expectation as it was."""
    expect = _expect(phase)
    before = dataclasses.replace(  # its own copies of what judge could change
        expect,
        legal=dict(expect.legal),
        expired_request_ids=set(expect.expired_request_ids),
        clock=dataclasses.replace(expect.clock),
    )
    assert judge(occurrence, expect) == judge(occurrence, expect)
    assert expect == before
