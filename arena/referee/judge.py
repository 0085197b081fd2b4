"""The one function that turns what a bot did into an action or a status.

Everything a bot's connection produces (``Arrival``), the death of its
process (``Ended``) and the passing of its deadline (``DeadlinePassed``) goes
through ``judge`` with what the referee expects of that bot right now
(``ReplyWindow``). The verdict is an accepted Hello, an action the rules
allow, nothing (``IGNORED``: a late reply to a request that already timed
out), or a failure with a named ``BotStatus`` and a reason in words.

``judge`` is pure: it reads the expectation and changes nothing, so the same
occurrence may be judged in the endpoints' loop thread and again in the main
thread with the same verdict. What a verdict uses up (a late reply) is said in
it and consumed by the caller (``ReplyWindow.consume``).
"""

from __future__ import annotations

import enum
import hmac
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from arena.kahuna import (
    Action,
    IllegalActionError,
    MalformedActionError,
    State,
    apply,
)
from arena.protocol.convert import action_from_pb
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.protocol.wire import echoed_action
from arena.referee.endpoint import MAX_MESSAGE_BYTES, Arrival, ArrivalKind
from arena.referee.game import Clock
from arena.referee.types import BotStatus

PROTOCOL_VERSION = 1


class Phase(enum.Enum):
    AWAIT_HELLO = "await_hello"
    IDLE = "idle"
    AWAIT_REPLY = "await_reply"


@dataclass
class ReplyWindow:
    """What one bot may send now (mutable: the referee updates it)."""

    token: str
    phase: Phase = Phase.AWAIT_HELLO
    request_id: int = 0
    clock: Clock = field(default_factory=lambda: Clock(0))
    """The clock of what the bot is asked now (its seat's in a game, the Hello's after
    a launch), started as the request went out."""
    state: State | None = None
    legal: Mapping[bytes, Action] = field(default_factory=dict)
    """The legal actions, keyed by their serialised ``kahuna.v1.Action``."""
    expired_request_ids: set[int] = field(default_factory=set)
    """Requests that expired unanswered: one late reply to each is no fault."""

    def consume(self, verdict: Verdict) -> None:
        """What ``verdict`` uses up of this expectation (``judge`` itself changes nothing)."""
        if verdict.late_reply_to:
            self.expired_request_ids.discard(verdict.late_reply_to)


@dataclass(frozen=True, slots=True)
class Ended:
    """The bot's stream ended; ``exit_code`` is None while the process still runs."""

    slot: int
    exit_code: int | None
    limits: str = ""
    """The sandbox limits the bot ran into, in words (``BotSlot.limits_words``): why a
    process was killed when its exit status alone does not say."""
    cut: str = ""
    """Why the arena itself ended a remote bot's stream, in words (``RemoteSeat.cut_words``:
    its owner's token revoked); "" when the bot or its network did."""


@dataclass(frozen=True, slots=True)
class DeadlinePassed:
    slot: int
    waited_ms: float
    request_id: int = 0
    """The request whose deadline passed (0: a Hello's)."""
    limits: str = ""
    """The sandbox limits the bot ran into, in words (``BotSlot.limits_words``): a bot at
    its memory limit runs slowly, which its author cannot tell from the timeout alone."""


Occurrence = Arrival | Ended | DeadlinePassed


class VerdictKind(enum.Enum):
    HELLO = "hello"
    ACTION = "action"
    IGNORED = "ignored"
    FAILED = "failed"


class Verdict(NamedTuple):
    """What an occurrence means (immutable; a tuple, as it is made on every reply's hot
    path, where a frozen dataclass costs several times as much to build)."""

    kind: VerdictKind
    status: BotStatus = BotStatus.OK
    reason: str = ""
    action: Action | None = None
    hello: referee_pb2.Hello | None = None
    elapsed_ms: float = 0.0
    late_reply_to: int = 0
    """IGNORED as the late reply to this expired request: the caller consumes that
    request's late reply (``ReplyWindow.consume``), so that a second one is a fault."""

    @property
    def failed(self) -> bool:
        return self.kind is VerdictKind.FAILED


IGNORED = Verdict(VerdictKind.IGNORED)


def _fail(status: BotStatus, reason: str) -> Verdict:
    return Verdict(VerdictKind.FAILED, status, reason)


def judge(occurrence: Occurrence, expect: ReplyWindow) -> Verdict:
    """What ``occurrence`` means for a bot of which ``expect`` is expected."""
    if isinstance(occurrence, DeadlinePassed):
        what = (
            "Hello"
            if expect.phase is Phase.AWAIT_HELLO
            else f"reply to request {expect.request_id}"
        )
        limits = f"; {occurrence.limits}" if occurrence.limits else ""
        return _fail(BotStatus.TIMEOUT, f"no {what} within {occurrence.waited_ms:.0f} ms{limits}")
    if isinstance(occurrence, Ended):
        if occurrence.cut:  # the bot left because the arena shut it out, not by a fault
            return _fail(BotStatus.DISCONNECT, f"the arena ended the stream: {occurrence.cut}")
        limits = f"; {occurrence.limits}" if occurrence.limits else ""
        if occurrence.exit_code == 0 and expect.phase is Phase.AWAIT_HELLO:
            limits += NO_HELLO_HINT  # a clean exit before Hello: the program never played
        if occurrence.exit_code is not None:
            return _fail(BotStatus.CRASH, exit_words(occurrence.exit_code) + limits)
        return _fail(BotStatus.DISCONNECT, "stream closed while the process was running" + limits)
    kind = occurrence.kind
    if kind is ArrivalKind.OVERSIZED:
        return _fail(
            BotStatus.PROTOCOL_VIOLATION,
            f"message of {occurrence.size_bytes} bytes (limit {MAX_MESSAGE_BYTES})",
        )
    if kind is ArrivalKind.SECOND_STREAM:
        return _fail(BotStatus.PROTOCOL_VIOLATION, "opened a second Play stream")
    if kind is ArrivalKind.NOT_PROTOCOL:
        detail = occurrence.detail
        return _fail(BotStatus.PROTOCOL_VIOLATION, f"traffic that is not the protocol: {detail}")
    if kind is ArrivalKind.UNDECODABLE:
        return _fail(BotStatus.MALFORMED_MESSAGE, "bytes that are not a PlayRequest")
    if kind is ArrivalKind.STREAM_CLOSED:  # the caller turns closes into Ended
        return _fail(BotStatus.DISCONNECT, "stream closed")
    message = occurrence.message
    assert message is not None
    which = message.WhichOneof("kind")
    if which is None:
        return _fail(BotStatus.MALFORMED_MESSAGE, "PlayRequest with neither hello nor action_reply")
    if which == "hello":
        return _judge_hello(message.hello, expect)
    if expect.phase is Phase.AWAIT_HELLO:
        return _fail(BotStatus.PROTOCOL_VIOLATION, "action_reply before Hello")
    return _judge_reply(message.action_reply, occurrence.received_ns, expect)


NO_HELLO_HINT = (
    "; a bot connects to KAHUNA_REFEREE, says Hello and plays until MatchOver"
    " (the kits' run() does)"
)


def exit_words(code: int) -> str:
    """A bot process's end in words: its exit status, and the signal that killed it
    (the sandbox reports 128 + the signal's number, a process of ours minus it)."""
    number = -code if code < 0 else code - 128 if code > 128 else 0
    try:
        name = signal.Signals(number).name if number else ""
    except ValueError:
        name = ""
    if code < 0:
        return f"process killed by {name or f'signal {number}'}"
    return f"process exited with status {code}" + (f" (killed by {name})" if name else "")


def _judge_hello(hello: referee_pb2.Hello, expect: ReplyWindow) -> Verdict:
    if expect.phase is not Phase.AWAIT_HELLO:
        return _fail(BotStatus.PROTOCOL_VIOLATION, "a second Hello")
    if not hmac.compare_digest(hello.token.encode(), expect.token.encode()):
        return _fail(BotStatus.PROTOCOL_VIOLATION, "Hello with a token that is not this bot's")
    if hello.protocol_version != PROTOCOL_VERSION:
        return _fail(
            BotStatus.PROTOCOL_VIOLATION,
            f"protocol_version {hello.protocol_version} (the referee speaks {PROTOCOL_VERSION})",
        )
    return Verdict(VerdictKind.HELLO, hello=hello)


def judge_echo(raw: bytes, received_ns: int, expect: ReplyWindow) -> Verdict | None:
    """``judge``'s verdict on a message, told from its bytes alone where that can be: the
    ACTION verdict when ``raw`` is exactly protobuf's encoding of a reply to the open
    request that echoes one of its legal actions, in time; else None (judge the parsed
    message).

    For such bytes ``judge`` would parse them and give the same verdict: this only
    leaves out the parse and the message objects (the hot path).
    """
    if expect.phase is not Phase.AWAIT_REPLY:
        return None
    echoed = echoed_action(raw, expect.request_id)
    if echoed is None:
        return None
    action = expect.legal.get(echoed)
    if action is None:
        return None
    clock = expect.clock
    elapsed_ms = clock.elapsed_ms(received_ns)
    if elapsed_ms > clock.allowance_ms:
        return None
    return Verdict(VerdictKind.ACTION, BotStatus.OK, "", action, None, elapsed_ms)


def _judge_reply(reply: referee_pb2.ActionReply, received_ns: int, expect: ReplyWindow) -> Verdict:
    if expect.phase is not Phase.AWAIT_REPLY:
        if reply.request_id in expect.expired_request_ids:
            return Verdict(VerdictKind.IGNORED, late_reply_to=reply.request_id)
        if expect.request_id and reply.request_id == expect.request_id:
            second = _SECOND_REPLY.format(reply.request_id)
            return _fail(BotStatus.PROTOCOL_VIOLATION, f"{second}; no request is open")
        return _fail(
            BotStatus.PROTOCOL_VIOLATION,
            f"reply to request {reply.request_id} while no request was open",
        )
    if reply.request_id != expect.request_id:
        if reply.request_id in expect.expired_request_ids:
            return Verdict(VerdictKind.IGNORED, late_reply_to=reply.request_id)
        if reply.request_id == expect.request_id - 1:  # numbered in order: it was answered
            what = _SECOND_REPLY.format(reply.request_id) + ";"
        else:
            what = f"reply to request {reply.request_id},"
        return _fail(
            BotStatus.PROTOCOL_VIOLATION, f"{what} the open request is {expect.request_id}"
        )
    clock = expect.clock
    elapsed_ms = clock.elapsed_ms(received_ns)
    if elapsed_ms > clock.allowance_ms:
        return _fail(
            BotStatus.TIMEOUT,
            f"reply after {elapsed_ms:.0f} ms, allowed {clock.allowance_ms:.0f} ms",
        )
    if not reply.HasField("action"):
        return _fail(
            BotStatus.MALFORMED_MESSAGE, f"reply to request {reply.request_id} without an action"
        )
    action = expect.legal.get(reply.action.SerializeToString())  # an echoed legal action
    if action is None:
        try:
            action = action_from_pb(reply.action)
        except MalformedActionError as error:
            return _fail(BotStatus.MALFORMED_MESSAGE, f"not an action: {error}")
        if action not in set(expect.legal.values()):
            broken = _rule_broken(expect.state, action)
            return _fail(BotStatus.ILLEGAL_ACTION, f"{action.text()}: {broken}")
    return Verdict(VerdictKind.ACTION, action=action, elapsed_ms=elapsed_ms)


_SECOND_REPLY = "a second reply to request {} (it was answered already)"


def _rule_broken(state: State | None, action: Action) -> str:
    if state is None:
        return "no game in progress"
    try:
        apply(state, action)
    except IllegalActionError as error:
        return str(error)
    return "not among the legal actions"
