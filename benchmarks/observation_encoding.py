"""CPU per observation sent to a bot: the hand-assembled bytes against the generated
protobuf. Run: python3 benchmarks/observation_encoding.py

Every decision of ``--games`` random games is collected first (the state, the
seat to move, the events it has not been sent, where they start), as the
referee sends them. Then each encoder serialises all of them, in rounds whose
order rotates: ``hand-built`` is ``arena.protocol.wire.observation_bytes`` (the
referee's), ``generated`` is ``observation_to_pb(...).SerializeToString()``.
Both build the seat's view first. Printed: microseconds per observation
(median of the rounds, with the spread) and the generated/hand-built ratio.

``--against DIR`` (a checkout of other code, e.g. ``git archive REV | tar -x -C DIR``)
also alternates, in this one process, this checkout's ``observation_bytes`` with
DIR's: alone, and inside the referee's turn (``benchmarks/referee_turn.py``'s
``cpu_per_decision_us``, with ``arena.referee.game``'s encoder swapped).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.kahuna import (  # noqa: E402
    Event,
    State,
    apply,
    deal_from_seed,
    legal_actions,
    new_game,
    reshuffle_from_seed,
    start_round,
)
from arena.protocol.convert import observation_to_pb  # noqa: E402
from arena.protocol.wire import observation_bytes  # noqa: E402

Decision = tuple[State, int, Sequence[Event], int]


def decisions(games: int, seed: int) -> list[Decision]:
    """What the referee serialises for each decision of ``games`` random games."""
    chooser = random.Random(seed)
    collected: list[Decision] = []
    for game in range(games):
        state = new_game(deal_from_seed(seed + game))
        events: list[Event] = []
        sent = [0, 0]
        while not state.is_finished:
            if state.needs_reshuffle:
                order = reshuffle_from_seed(seed + game, state.round + 1, state.reshuffle_cards)
                state = start_round(state, order)
                continue
            seat = state.to_move
            assert seat is not None
            collected.append((state, seat, tuple(events[sent[seat] :]), sent[seat]))
            sent[seat] = len(events)
            state = apply(state, chooser.choice(legal_actions(state)))
            last = state.last_event
            assert last is not None
            events.append(last)
    return collected


def _hand_built(decision: Decision) -> bytes:
    return observation_bytes(*decision)


def _generated(decision: Decision) -> bytes:
    return observation_to_pb(*decision).SerializeToString()


ENCODERS: dict[str, Callable[[Decision], bytes]] = {
    "hand-built": _hand_built,
    "generated": _generated,
}


def us_per_observation(encode: Callable[[Decision], bytes], work: list[Decision]) -> float:
    started = time.process_time()
    for decision in work:
        encode(decision)
    return (time.process_time() - started) / len(work) * 1e6


def _encoder_of(checkout: Path) -> Callable[..., bytes]:
    spec = importlib.util.spec_from_file_location(
        "other_wire", checkout / "arena" / "protocol" / "wire.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    encode: Callable[..., bytes] = module.observation_bytes
    return encode


def against(checkout: Path, work: list[Decision], rounds: int) -> None:
    """This checkout's encoder against ``checkout``'s, alone and in the referee's turn."""
    import arena.referee.game as game
    from benchmarks.referee_turn import cpu_per_decision_us

    encoders = {"this": observation_bytes, "other": _encoder_of(checkout)}
    for decision in work:
        assert encoders["other"](*decision) == observation_bytes(*decision)
    alone: dict[str, list[float]] = {name: [] for name in encoders}
    turn: dict[str, list[float]] = {name: [] for name in encoders}
    with tempfile.TemporaryDirectory(prefix="kobs-", dir="/tmp") as work_dir:
        for round_index in range(rounds):
            order = list(encoders) if round_index % 2 else list(reversed(encoders))
            for name in order:
                encode = encoders[name]
                alone[name].append(us_per_observation(lambda d, e=encode: e(*d), work))
                game.observation_bytes = encode  # type: ignore[assignment]
                turn[name].append(cpu_per_decision_us(Path(work_dir), 15, round_index)[0])
        game.observation_bytes = observation_bytes  # type: ignore[assignment]
    print(f"this checkout against {checkout}, {rounds} alternating rounds (CPU us, median (min))")
    for name in encoders:
        print(
            f"  {name:>5}: encoder {statistics.median(alone[name]):.2f} ({min(alone[name]):.2f}),"
            f" referee per decision {statistics.median(turn[name]):.1f} ({min(turn[name]):.1f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="random games (default 40)")
    parser.add_argument("--rounds", type=int, default=9, help="rounds (default 9)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--against", type=Path, help="a checkout of other code to alternate with")
    args = parser.parse_args()
    work = decisions(args.games, args.seed)
    for encode in ENCODERS.values():  # warm the caches, as a long-running referee has them
        for decision in work:
            assert encode(decision) == _generated(decision)
    figures: dict[str, list[float]] = {name: [] for name in ENCODERS}
    names = list(ENCODERS)
    for round_index in range(args.rounds):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            figures[name].append(us_per_observation(ENCODERS[name], work))
    print(f"{len(work)} observations, {args.rounds} rounds (CPU microseconds per observation)")
    for name, values in figures.items():
        print(
            f"  {name:>10}: {statistics.median(values):6.2f}"
            f"  (min {min(values):.2f}, max {max(values):.2f})"
        )
    ratios = [g / h for g, h in zip(figures["generated"], figures["hand-built"], strict=True)]
    print(f"  generated / hand-built: {statistics.median(ratios):.2f}x (median of the rounds)")
    if args.against is not None:
        against(args.against, work, args.rounds)


if __name__ == "__main__":
    main()
