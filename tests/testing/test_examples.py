"""examples(): the full count in a full run, a fifth in the inner loop, a bad setting named."""

from __future__ import annotations

import pytest
from hypothesis import settings

from arena.testing.examples import ENV, HYPOTHESIS_DEFAULT, examples, full_run


@pytest.mark.parametrize(
    ("value", "full", "expected"),
    [
        ("full", 300, 300),
        ("full", 1, 1),
        ("quick", 300, 60),
        ("quick", 12, 5),  # never fewer than five
        ("quick", 3, 3),  # nor more than the full count
        (None, 150, 30),  # unset: the inner loop
    ],
    ids=["full", "full one", "a fifth", "at least five", "at most full", "unset is quick"],
)
def test_the_count_follows_the_setting(
    monkeypatch: pytest.MonkeyPatch, value: str | None, full: int, expected: int
) -> None:
    if value is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, value)
    assert examples(full) == expected


def test_a_bad_setting_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "all")
    with pytest.raises(ValueError, match=r"KAHUNA_EXAMPLES='all': expected 'full' or 'quick'"):
        examples(10)


def test_a_count_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one example, got 0"):
        examples(0)


def test_the_loaded_profile_matches_the_setting() -> None:
    """tests/conftest.py loads the profile for the tests that state no count."""
    expected = HYPOTHESIS_DEFAULT if full_run() else examples(HYPOTHESIS_DEFAULT)
    assert settings().max_examples == expected
