"""The board (docs/reference/RULES.md R1): islands, lines, majorities and drawing positions.

Names are the public face; the engine works on indices and bitmasks built
here once: island ``i`` is bit ``i`` of an island mask, line ``k`` is bit
``k`` of a line mask (both in R1's alphabetical order).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from arena.kahuna.errors import MalformedActionError

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
CARDS_PER_ISLAND = 2
DECK_CARDS = len(ISLANDS) * CARDS_PER_ISLAND  # 24

ISLAND_INDEX: Mapping[str, int] = MappingProxyType({name: i for i, name in enumerate(ISLANDS)})
LINE_INDEX: Mapping[str, int] = MappingProxyType({name: k for k, name in enumerate(LINES)})

LINE_ISLANDS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {line: (line[:4], line[5:]) for line in LINES}
)
LINES_OF: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {island: tuple(line for line in LINES if island in LINE_ISLANDS[line]) for island in ISLANDS}
)
MAJORITY: Mapping[str, int] = MappingProxyType(
    {island: len(LINES_OF[island]) // 2 + 1 for island in ISLANDS}
)
ISLAND_POSITIONS: Mapping[str, tuple[int, int]] = MappingProxyType({
    "LALE": (450, 80), "IFFI": (380, 190), "HUNA": (600, 220), "KAHU": (150, 200),
    "JOJO": (265, 235), "GOLA": (155, 290), "FAAA": (225, 340), "ELAI": (440, 320),
    "DUDA": (590, 350), "COCO": (110, 410), "BARI": (400, 440), "ALOA": (650, 470),
})  # fmt: skip

# Index forms used by the engine.
LINE_ENDS: tuple[tuple[int, int], ...] = tuple(
    (ISLAND_INDEX[a], ISLAND_INDEX[b]) for a, b in (LINE_ISLANDS[line] for line in LINES)
)
ISLAND_LINE_MASK: tuple[int, ...] = tuple(
    sum(1 << LINE_INDEX[line] for line in LINES_OF[island]) for island in ISLANDS
)
MAJORITY_OF: tuple[int, ...] = tuple(MAJORITY[island] for island in ISLANDS)
ALL_LINES_MASK = (1 << len(LINES)) - 1


def island_index(text: str) -> int:
    """Index of an island named in any letter case; MalformedActionError if unknown."""
    index = ISLAND_INDEX.get(text.upper()) if isinstance(text, str) else None
    if index is None:
        raise MalformedActionError(f"unknown island {text!r}")
    return index


def line_index(text: str) -> int:
    """Index of a line named leniently (any case, islands in either order)."""
    if not isinstance(text, str):
        raise MalformedActionError(f"a line must be a string, not {type(text).__name__}")
    parts = text.upper().split("-")
    if len(parts) != 2:
        raise MalformedActionError(f"a line is two islands joined by '-', not {text!r}")
    first, second = sorted(parts)
    index = LINE_INDEX.get(f"{first}-{second}")
    if index is None:
        for part in parts:
            island_index(part)
        raise MalformedActionError(f"no line joins {parts[0]} and {parts[1]} ({text!r})")
    return index


def canonical_line(text: str) -> str:
    """The canonical name of a line given leniently: ``"huna-elai"`` -> ``"ELAI-HUNA"``."""
    return LINES[line_index(text)]
