"""The Kahuna board (docs/RULES.md R1) as plain data, for bots to reason with.

A copy of the arena's board constants: bots run sandboxed, where the arena
package is not importable. Names are canonical upper case; a line is named
by its two islands in alphabetical order joined by ``-``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

ISLANDS: tuple[str, ...] = (
    "ALOA", "BARI", "COCO", "DUDA", "ELAI", "FAAA",
    "GOLA", "HUNA", "IFFI", "JOJO", "KAHU", "LALE",
)  # fmt: skip

LINES: tuple[str, ...] = (
    "ALOA-BARI", "ALOA-DUDA", "ALOA-HUNA", "BARI-COCO", "BARI-DUDA", "BARI-ELAI",
    "BARI-FAAA", "COCO-FAAA", "COCO-GOLA", "COCO-KAHU", "DUDA-ELAI", "DUDA-HUNA",
    "ELAI-FAAA", "ELAI-HUNA", "ELAI-IFFI", "ELAI-JOJO", "FAAA-GOLA", "FAAA-JOJO",
    "GOLA-JOJO", "GOLA-KAHU", "HUNA-IFFI", "HUNA-LALE", "IFFI-JOJO", "IFFI-KAHU",
    "IFFI-LALE", "JOJO-KAHU", "KAHU-LALE",
)  # fmt: skip

BRIDGES_PER_SEAT = 25
HAND_LIMIT = 5

LINE_ISLANDS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {line: (line[:4], line[5:]) for line in LINES}
)
LINES_OF: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {island: tuple(line for line in LINES if island in LINE_ISLANDS[line]) for island in ISLANDS}
)
MAJORITY: Mapping[str, int] = MappingProxyType(
    {island: len(LINES_OF[island]) // 2 + 1 for island in ISLANDS}
)


def canonical_line(text: str) -> str:
    """The canonical name of a line given in any case or order; ValueError if none."""
    parts = text.strip().upper().split("-")
    if len(parts) != 2:
        raise ValueError(f"a line is two islands joined by '-', not {text!r}")
    line = "-".join(sorted(parts))
    if line not in LINE_ISLANDS:
        raise ValueError(f"no line joins {parts[0]} and {parts[1]} ({text!r})")
    return line


def canonical_island(text: str) -> str:
    """The canonical name of an island given in any case; ValueError if unknown."""
    island = text.strip().upper()
    if island not in LINES_OF:
        raise ValueError(f"unknown island {text!r}")
    return island
