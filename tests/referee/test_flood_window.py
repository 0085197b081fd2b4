"""A flooding bot's calls stay out of its opponent's timed decisions.

Both bots' streams are served by one event-loop thread, and every call the
referee refuses costs that thread 100-200 us of gRPC's own work. A bot frozen
while its opponent moves cannot send, but whatever it sent before is still in
the transport: with 32 unknown calls in flight, an allowance of 8 would let the
referee serve 9 or more of them per launch, some in the opponent's first
decision of a game, and the rest of a killed launch's calls against the next
launch. So the first such call is reported and cuts the connection, and a bot's
socket carries its Play stream and at most one call besides
(``STREAMS_PER_CONNECTION``: the bot's own gRPC client holds the rest).

Real sandboxed bots: the flooder (``unknown_method_flood``, 32 calls in flight
from its Welcome on) against ``random``. The endpoint's refusal is wrapped to
note when each call was served, and the endpoint's intake to note when each
of the victim's messages came in (both still run); with the live hook's time
of each accepted decision that gives the span the victim was timed on.
"""

from __future__ import annotations

import bisect
import time

import pytest

from arena.referee import BotStatus, MatchConfig, TimeControl, run_match
from arena.referee.endpoint import BotEndpoint
from arena.referee.live import ActionApplied, LiveEvent
from arena.sandbox import SandboxLimits

from .conftest import MakeBot, assert_no_process_left

pytestmark = pytest.mark.slow

VICTIM, FLOODER = 0, 1
CONFIG = MatchConfig(
    games=4,
    seed=17,
    time_control=TimeControl(action_ms=2000, bank_ms=5000),
    limits=SandboxLimits(memory_mb=160, max_processes=32),
    max_restarts=3,  # a launch per game
)


def test_a_flooder_costs_the_referee_a_few_calls_and_never_its_opponents_decisions(
    make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[int] = []  # when the referee served one of the flooder's calls
    original = BotEndpoint._refuse_call

    def noted(endpoint: BotEndpoint, method: str) -> None:
        if endpoint.slot == FLOODER:
            served.append(time.monotonic_ns())
        original(endpoint, method)

    monkeypatch.setattr(BotEndpoint, "_refuse_call", noted)
    received: list[int] = []  # when each of the victim's messages came in
    take = BotEndpoint._post_raw

    def stamped(endpoint: BotEndpoint, raw: bytes, generation: int, received_ns: int) -> None:
        if endpoint.slot == VICTIM:
            received.append(received_ns)
        take(endpoint, raw, generation, received_ns)

    monkeypatch.setattr(BotEndpoint, "_post_raw", stamped)
    decisions: list[tuple[int, int]] = []  # each timed decision: (its clock's start, reply)

    def on_event(event: LiveEvent) -> None:
        if isinstance(event, ActionApplied) and event.seat == event.game_index % 2:
            decisions.append((received[-1] - round(event.elapsed_ms * 1e6), received[-1]))

    victim = make_bot("random", name="victim")
    flooder = make_bot("unknown_method_flood", name="flooder")
    report = run_match(CONFIG, victim, flooder, on_event=on_event)

    for game in report.games:
        assert game.statuses == {"victim": BotStatus.OK, "flooder": BotStatus.PROTOCOL_VIOLATION}
    launches = len(report.games)
    assert served, "control: the flooder's calls reached the referee"
    # Each launch: the call reported, and at most the one its client sent as that one
    # ended, before the cut took hold (an allowance would serve 9 and more, and then
    # some of the killed launch's calls against the next one).
    assert len(served) <= 2 * launches
    # None in a decision the victim was timed on: once one is served, the victim's reply
    # waits behind the report, which forfeits the game.
    for started_ns, received_ns in decisions:
        inside = bisect.bisect(served, received_ns) - bisect.bisect(served, started_ns)
        assert inside == 0, f"{inside} refused calls in one of the victim's decisions"
    assert_no_process_left(victim, flooder)
