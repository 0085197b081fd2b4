"""R1: the board as docs/reference/RULES.md draws it."""

from __future__ import annotations

import pytest

from arena.kahuna import (
    ISLAND_POSITIONS,
    ISLANDS,
    LINE_ISLANDS,
    LINES,
    LINES_OF,
    MAJORITY,
    MalformedActionError,
    canonical_line,
)

# docs/reference/RULES.md R1 table: island -> (lines, majority)
TABLE = {
    "ALOA": (3, 2), "BARI": (5, 3), "COCO": (4, 3), "DUDA": (4, 3), "ELAI": (6, 4),
    "FAAA": (5, 3), "GOLA": (4, 3), "HUNA": (5, 3), "IFFI": (5, 3), "JOJO": (5, 3),
    "KAHU": (5, 3), "LALE": (3, 2),
}  # fmt: skip


def test_islands_and_lines_R1() -> None:
    assert tuple(sorted(TABLE)) == ISLANDS and len(LINES) == 27
    assert list(LINES) == sorted(LINES) and len(set(LINES)) == 27
    for line in LINES:
        a, b = LINE_ISLANDS[line]
        assert a < b and line == f"{a}-{b}"
    assert {i: (len(LINES_OF[i]), MAJORITY[i]) for i in ISLANDS} == TABLE
    assert set(ISLAND_POSITIONS) == set(ISLANDS)


@pytest.mark.parametrize(("text", "canonical"), [
    ("ELAI-HUNA", "ELAI-HUNA"), ("huna-elai", "ELAI-HUNA"), ("Lale-Kahu", "KAHU-LALE"),
], ids=["canonical", "reversed-lower", "mixed-case"])
def test_canonical_line_is_lenient_R1(text: str, canonical: str) -> None:
    assert canonical_line(text) == canonical


@pytest.mark.parametrize("text", ["ALOA-LALE", "ALOA", "ALOA-BARI-COCO", "XXXX-ALOA", "", "-"],
                         ids=["not-a-line", "one-island", "three", "unknown", "empty", "dash"])
def test_canonical_line_refuses_non_lines_R1(text: str) -> None:
    with pytest.raises(MalformedActionError):
        canonical_line(text)
