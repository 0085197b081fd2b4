"""KeptAnswers: one read serves its key for keep_s; forget drops the kept and the reads."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from arena.store import kept
from arena.store.kept import KeptAnswers


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1000.0]
    monkeypatch.setattr(kept, "time", SimpleNamespace(monotonic=lambda: now[0]))
    return now


def test_an_answer_is_kept_for_keep_s_then_read_again(clock: list[float]) -> None:
    answers: KeptAnswers[str, int] = KeptAnswers(2.0)
    reads = iter(range(10))
    assert answers.get("a", lambda: next(reads)) == 0
    clock[0] += 1.9
    assert answers.get("a", lambda: next(reads)) == 0
    assert answers.get("b", lambda: next(reads)) == 1  # each key its own
    clock[0] += 0.1
    assert answers.get("a", lambda: next(reads)) == 2


def test_forget_drops_what_is_kept(clock: list[float]) -> None:
    answers: KeptAnswers[str, str] = KeptAnswers(2.0)
    answers.get("a", lambda: "before")
    answers.forget()
    assert answers.get("a", lambda: "after") == "after"


def test_an_answer_read_across_a_forget_is_returned_but_not_kept(clock: list[float]) -> None:
    answers: KeptAnswers[str, str] = KeptAnswers(2.0)

    def read_while_written() -> str:
        answers.forget()  # a write lands while the read is under way
        return "stale"

    assert answers.get("a", read_while_written) == "stale"
    assert answers.get("a", lambda: "fresh") == "fresh"
    assert answers.get("a", lambda: "not read") == "fresh"


def test_a_full_set_is_dropped_not_grown(clock: list[float]) -> None:
    answers: KeptAnswers[int, int] = KeptAnswers(2.0, max_kept=3)
    for key in range(3):
        answers.get(key, lambda key=key: key)
    answers.get(3, lambda: 3)  # full: everything dropped, then 3 kept
    assert answers.get(0, lambda: -1) == -1
    assert answers.get(3, lambda: -1) == 3
