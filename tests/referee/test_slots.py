"""A failed bot's stderr as the referee keeps it: the first and the last lines."""

from __future__ import annotations

import pytest

from arena.referee.slots import STDERR_KEPT_CHARS, excerpt


def _numbered(count: int) -> str:
    return "".join(f"line {number:03d}\n" for number in range(count))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("", "", id="empty"),
        pytest.param("one line\n", "one line", id="short"),
        pytest.param(_numbered(50), _numbered(50).strip(), id="fits-whole"),
    ],
)
def test_a_short_stderr_is_kept_whole(text: str, expected: str) -> None:
    assert excerpt(text, text, whole=True) == expected


def test_a_long_stderr_keeps_whole_lines_of_its_start_and_its_end() -> None:
    text = _numbered(1000)
    kept = excerpt(text[:1200], text[-1200:], whole=False)
    first, gap, last = kept.partition("\n[...]\n")
    assert gap and first.startswith("line 000\n") and last.endswith("line 999")
    assert len(first) <= STDERR_KEPT_CHARS and len(last) <= STDERR_KEPT_CHARS
    assert all(line.startswith("line ") and len(line) == 8 for line in kept.splitlines()
               if line != "[...]")  # fmt: skip


def test_one_endless_line_is_cut_at_both_ends() -> None:
    text = "x" * 5000
    kept = excerpt(text[:1200], text[-1200:], whole=False)
    assert kept == "x" * STDERR_KEPT_CHARS + "\n[...]\n" + "x" * STDERR_KEPT_CHARS
