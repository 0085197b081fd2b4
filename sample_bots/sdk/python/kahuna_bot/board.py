"""The Kahuna board (docs/reference/RULES.md R1) as plain data, for bots to reason with.

These are the engine's own tables (``arena.kahuna.board``), which the arena
mounts read-only in the sandbox next to this SDK: there is one copy of the
board. Names are canonical upper case; a line is named by its two islands in
alphabetical order joined by ``-``.
"""

from __future__ import annotations

from arena.kahuna.board import (
    BRIDGES_PER_SEAT,
    ISLANDS,
    LINE_ISLANDS,
    LINES,
    LINES_OF,
    MAJORITY,
    canonical_line,
    island_index,
)
from arena.kahuna.state import HAND_LIMIT


def canonical_island(text: str) -> str:
    """The canonical name of an island given in any case; ValueError if unknown."""
    return ISLANDS[island_index(text.strip())]


__all__ = [
    "BRIDGES_PER_SEAT",
    "HAND_LIMIT",
    "ISLANDS",
    "LINES",
    "LINES_OF",
    "LINE_ISLANDS",
    "MAJORITY",
    "canonical_island",
    "canonical_line",
]
