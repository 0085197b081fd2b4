"""A value quoted in an error line: whole when short, its start and its length when long."""

from __future__ import annotations

import pytest

from arena.quoting import PATH_CHARS, QUOTED_CHARS, clipped, quoted

LONG = "u" * 100_000


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("eve", "'eve'"),
        ("a" * QUOTED_CHARS, repr("a" * QUOTED_CHARS)),  # at the limit: whole
        (LONG, f"'{'u' * QUOTED_CHARS}'... (100000 characters)"),
        ("it's", '"it\'s"'),
        (3, "3"),
        (["x"] * 50, f"{str(['x'] * 50)[:QUOTED_CHARS]}... (250 characters)"),
    ],
    ids=["short", "at the limit", "long", "a quote in it", "not a string", "a long list"],
)
def test_quoted(value: object, shown: str) -> None:
    assert quoted(value) == shown


def test_clipped() -> None:
    assert clipped("/tmp/bot") == "/tmp/bot"
    assert clipped("/" + "a" * 5000) == f"/{'a' * (PATH_CHARS - 1)}... (5001 characters)"
    assert clipped("/" + "a" * 5000, 10) == "/aaaaaaaaa... (5001 characters)"
