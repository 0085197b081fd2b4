"""The flags that say how games are played, shared by `arena match` and `arena tournament`.

Defaults and ranges come from the referee (``TimeControl``,
``ACTION_MS_RANGE``, ``BANK_MS_RANGE``): the one source of each.
"""

from __future__ import annotations

import argparse

from arena.kahuna import Variant
from arena.referee.types import ACTION_MS_RANGE, BANK_MS_RANGE, TimeControl


def whole(minimum: int, maximum: int | None = None) -> type[int]:
    """An argparse type: a whole number from ``minimum`` to ``maximum`` (no top if None)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if maximum is None and value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if maximum is not None and not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(
                f"must be between {minimum} and {maximum}, got {value}"
            )
        return value

    return parse  # type: ignore[return-value]


game_seed = whole(0, 2**63 - 1)
"""An argparse type: a game or match seed, the range `arena match --seed` and `arena
play-random --seed` take (SQLite's integers: a stored seed stays whole)."""


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds greater than zero (and finite)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def add_play_flags(parser: argparse.ArgumentParser) -> None:
    """--action-ms, --bank-ms, --strategic, --tactical."""
    parser.add_argument(
        "--action-ms", type=whole(*ACTION_MS_RANGE), default=TimeControl.action_ms,
        help=f"per-action limit in ms (default {TimeControl.action_ms})",
    )  # fmt: skip
    parser.add_argument(
        "--bank-ms", type=whole(*BANK_MS_RANGE), default=TimeControl.bank_ms,
        help=f"time bank per game in ms (default {TimeControl.bank_ms})",
    )  # fmt: skip
    parser.add_argument("--strategic", action="store_true", help="Strategic variant (R8)")
    parser.add_argument("--tactical", action="store_true", help="Tactical variant (R8)")


def time_control(args: argparse.Namespace) -> TimeControl:
    return TimeControl(action_ms=args.action_ms, bank_ms=args.bank_ms)


def variant(args: argparse.Namespace) -> Variant:
    return Variant(strategic=args.strategic, tactical=args.tactical)
