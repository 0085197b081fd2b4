"""Handicap (docs/reference/RULES.md R2h, R8): 1-3 bridges of one seat on distinct lines
before turn one.

``parse_handicap`` reads the command-line form ``SEAT:LINE[,LINE...]``
(``1:aloa-bari,elai-huna``); ``check_handicap`` is the one validation, done
by the engine itself, with the problem named.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.kahuna import (
    HandicapBridge,
    MalformedActionError,
    Variant,
    canonical_line,
    deal_from_seed,
    new_game,
)

FORMAT = "SEAT:LINE[,LINE...] (e.g. 1:ALOA-BARI,ELAI-HUNA)"


def parse_handicap(text: str) -> tuple[HandicapBridge, ...]:
    """``SEAT:LINE[,LINE...]`` as handicap bridges; ValueError naming the problem."""
    seat_text, colon, lines_text = text.partition(":")
    if not colon:
        raise ValueError(f"handicap {text!r:.60} is not {FORMAT}")
    if seat_text.strip() not in ("0", "1"):
        raise ValueError(f"handicap seat must be 0 or 1, got {seat_text.strip()!r:.20}")
    seat = int(seat_text)
    bridges = []
    for line_text in lines_text.split(","):
        try:
            line = canonical_line(line_text.strip())
        except MalformedActionError as error:
            raise ValueError(f"handicap line {line_text.strip()!r:.40}: {error}") from None
        bridges.append(HandicapBridge(seat, line))
    handicap = tuple(bridges)
    check_handicap(handicap)
    return handicap


def check_handicap(handicap: Sequence[HandicapBridge]) -> None:
    """ValueError unless the engine accepts ``handicap`` (1-3 distinct lines, one seat)."""
    if not isinstance(handicap, tuple) or not handicap:
        raise ValueError(f"a handicap is a non-empty tuple of bridges, got {handicap!r:.60}")
    new_game(deal_from_seed(0), Variant(), handicap)  # its ValueError names the problem
