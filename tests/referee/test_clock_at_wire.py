"""A bot's clock starts as its request goes on the wire, not when the referee queued it.

Both bots' streams are written by one event-loop thread (``arena.referee.endpoint``),
which may first serve the other bot's traffic (a refused call, a flood cut off, the
other bot's replies) before it writes a request. That delay is the referee's: the
bot's time is from its request on the wire to its reply (docs/reference/PROTOCOL.md), so a
noisy neighbour cannot spend its opponent's clock through the referee. Here the
wire tap, which runs in that thread just before each write, holds the thread for a
while before some requests: the loop busy with someone else's work. A clock started
when the request was queued would charge each of those decisions the whole hold.
"""

from __future__ import annotations

import time

import pytest

from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee import BotStatus, MatchConfig, TimeControl, run_match
from arena.referee.live import ActionApplied, LiveEvent

from .conftest import MakeBot

pytestmark = pytest.mark.slow

HOLD_S = 0.3
HELD = 4  # requests to bot A held (its first four)


def test_the_loops_delay_before_a_request_is_not_the_bots_time(make_bot: MakeBot) -> None:
    bot_a, bot_b = make_bot("random", name="a"), make_bot("random", name="b")
    held: list[float] = []

    def tap(slot: int, raw: bytes) -> None:
        message = referee_pb2.PlayResponse.FromString(raw)
        if slot == 0 and message.WhichOneof("kind") == "action_request" and len(held) < HELD:
            started = time.monotonic()
            time.sleep(HOLD_S)  # the loop thread serving someone else
            held.append(time.monotonic() - started)

    a_times: list[float] = []

    def on_event(event: LiveEvent) -> None:
        if isinstance(event, ActionApplied) and event.seat == event.game_index % 2:
            a_times.append(event.elapsed_ms)

    config = MatchConfig(games=1, seed=3, time_control=TimeControl(action_ms=2000, bank_ms=0))
    report = run_match(config, bot_a, bot_b, wire_tap=tap, on_event=on_event)
    assert report.games[0].statuses == {"a": BotStatus.OK, "b": BotStatus.OK}
    assert len(held) == HELD and min(held) >= HOLD_S  # control: the loop was held
    # The held decisions are A's first four; a random bot answers in milliseconds, and
    # a hold charged to it would put each at HOLD_S or more.
    assert len(a_times) > HELD
    assert max(a_times[:HELD]) < HOLD_S * 1000 / 2
    # What A was charged in all is its decisions' time, not the holds: the sum of what
    # each decision was charged (on a loaded machine that sum alone may pass the holds').
    assert report.games[0].time_ms["a"] == pytest.approx(sum(a_times), abs=0.01)
