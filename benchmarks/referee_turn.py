"""The referee's own CPU per decision, in process. Run: python3 benchmarks/referee_turn.py

``benchmarks/referee.py`` measures a decision end to end (gRPC, the sandboxed
bot, the referee), which on a loaded machine varies by more than the
referee's own work. This measures only that work: real endpoints (never
connected, so what the referee sends goes nowhere), the real turn loop and
game, and replies that echo a legal action fed to the loop thread's entry
point (``_take_raw``, as the endpoint calls it for each message it reads): the
judgement, the decision, the rules, the clock, the next request's bytes.
Printed: thread CPU microseconds per decision (median of ``--rounds`` runs of
``--games`` random games), the reply bytes built outside the timed part; with
``--parts`` also each part of it (``_turn_parts``: the timers ``transport_floor.py``'s
``FLOOR_TIME_PARTS`` puts in the turn beside real bots).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _turn_setup import game_of, ready_slots  # noqa: E402

from arena.protocol.gen.kahuna.v1 import game_pb2, referee_pb2  # noqa: E402
from arena.referee.endpoint import BotEndpoint  # noqa: E402
from arena.referee.play import GameDriver  # noqa: E402
from arena.referee.slots import BotSlot  # noqa: E402
from arena.referee.types import BotSpec  # noqa: E402

try:  # run_on_loop: the game played as a task of the endpoints' loop
    from arena.referee.endpoint import run_on_loop
except ImportError:
    run_on_loop = None  # type: ignore[assignment]

try:  # the turn loop under either name a checkout may give it, for alternating runs
    from arena.referee.turn_loop import ArrivalQueue as Queue
    from arena.referee.turn_loop import TurnLoop as Loop
except ImportError:
    from arena.referee.inbox import Arrivals as Queue  # type: ignore[no-redef]
    from arena.referee.inbox import Inbox as Loop  # type: ignore[no-redef]


def _reply(request_id: int, action: bytes) -> bytes:
    chosen = game_pb2.Action.FromString(action)
    reply = referee_pb2.ActionReply(request_id=request_id, action=chosen)
    return referee_pb2.PlayRequest(action_reply=reply).SerializeToString()


def cpu_per_decision_us(work: Path, games: int, seed: int) -> tuple[float, int]:
    arrivals = Queue()
    spec = BotSpec("x", "v", work, ("true",), "native")
    endpoints = [BotEndpoint(index, work / f"{seed}-{index}.sock", arrivals) for index in (0, 1)]
    slots = ready_slots((spec, spec), endpoints, work)
    loop: Any = Loop(arrivals, slots)
    chooser = random.Random(seed)
    spent_s, decisions = 0.0, 0
    try:
        for game_index in range(games):
            game = game_of(slots, game_index, seed + game_index, 60_000, 0)
            if hasattr(loop, "lock"):  # a turn loop that settles in the caller's thread
                spent, played = _play_in_caller(loop, game, slots, chooser)
            else:
                spent, played = run_on_loop(_play_as_task(loop, game, slots, chooser))
            spent_s += spent
            decisions += played
            assert not game.failures, game.failures
    finally:
        for slot in slots:
            slot.endpoint.stop()
    return spent_s * 1e6 / decisions, decisions


def _play_in_caller(
    loop: Any, game: GameDriver, slots: tuple[BotSlot, ...], chooser: random.Random
) -> tuple[float, int]:
    spent_s, decisions = 0.0, 0
    with loop.lock:
        loop.game = game
        game.advance()
    while game.waiting:
        who = game.open_slot
        assert who is not None
        expect = slots[who].expect
        raw = _reply(expect.request_id, chooser.choice(list(expect.legal)))
        generation = slots[who].endpoint.generation
        start = time.thread_time()
        taken = loop._take_raw(who, generation, raw, time.monotonic_ns())
        spent_s += time.thread_time() - start
        assert taken, "a legal echo must be taken at once"
        decisions += 1
    loop.game = None
    return spent_s, decisions


async def _play_as_task(
    loop: Any, game: GameDriver, slots: tuple[BotSlot, ...], chooser: random.Random
) -> tuple[float, int]:
    """The game's task in the endpoints' loop, fed each reply's bytes as the endpoint
    hands them over (the task waiting, each is settled at once: timed)."""
    spent_s, decisions = 0.0, 0
    task = asyncio.get_running_loop().create_task(loop._play(game))
    await asyncio.sleep(0)  # the first request
    while game.waiting:
        who = game.open_slot
        assert who is not None
        expect = slots[who].expect
        raw = _reply(expect.request_id, chooser.choice(list(expect.legal)))
        generation = slots[who].endpoint.generation
        applied = len(game.turns.events)
        start = time.thread_time()
        taken = loop._take_raw(who, generation, raw, time.monotonic_ns())
        spent_s += time.thread_time() - start
        assert taken and len(game.turns.events) == applied + 1, "an echo is settled at once"
        decisions += 1
        await asyncio.sleep(0)  # the task runs if the game is over
    await task
    return spent_s, decisions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="games per run (default 40)")
    parser.add_argument("--rounds", type=int, default=7, help="runs (default 7)")
    parser.add_argument("--parts", action="store_true", help="also time each part of the turn")
    args = parser.parse_args()
    figures = []
    by_part: list[dict[str, float]] = []
    parts = None
    if args.parts:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import _turn_parts

        parts = _turn_parts.install()
    with tempfile.TemporaryDirectory(prefix="kturn-", dir="/tmp") as work_dir:
        for round_index in range(args.rounds):
            if parts is not None:
                parts.reset()
            us, decisions = cpu_per_decision_us(Path(work_dir), args.games, round_index)
            figures.append(us)
            if parts is not None:
                by_part.append(parts.per_decision_us(decisions))
    print(
        f"referee CPU per decision, in process: {statistics.median(figures):.1f} us median"
        f" (min {min(figures):.1f}, max {max(figures):.1f}; {args.rounds} runs of"
        f" {args.games} games, {decisions} decisions in the last)"
    )
    if by_part:
        print("  by part, us (medians):", ", ".join(
            f"{part} {statistics.median(found[part] for found in by_part):.1f}"
            for part in by_part[0]
        ))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
