"""The room for request bodies: in all, without a token, per user; each refusal names its limit."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from arena.web.body_budget import ANYONE, BodyBudget, BodyShares, Reservation

SHARES = BodyShares(in_all=100, anyone=50, per_user=30)


@pytest.mark.parametrize(
    ("held", "holder", "length", "refusal"),
    [
        ([], ANYONE, 50, None),
        ([], ANYONE, 51, "without a token, 50 bytes (their limit)"),
        ([(ANYONE, 40)], ANYONE, 11, "without a token, 50 bytes (their limit)"),
        ([(ANYONE, 50)], "ann", 30, None),  # strangers at their share leave a user room
        ([], "ann", 31, "your request bodies of 30 bytes (the limit per user)"),
        ([("ann", 20)], "ann", 11, "your request bodies of 30 bytes (the limit per user)"),
        ([("ann", 30)], "bob", 30, None),  # one user at their share leaves another room
        ([(ANYONE, 50), ("ann", 30)], "bob", 21, "of 100 bytes in all (the limit)"),
        ([(ANYONE, 50), ("ann", 30)], "bob", 20, None),
    ],
)
def test_a_body_is_taken_within_every_share_and_refused_naming_the_one_it_passes(
    held: list[tuple[str, int]], holder: str, length: int, refusal: str | None
) -> None:
    budget = BodyBudget(SHARES)
    for who, size in held:
        assert isinstance(budget.reserve(who, size), Reservation)
    answer = budget.reserve(holder, length)
    if refusal is None:
        assert answer == Reservation(holder, length)
    else:
        assert isinstance(answer, str) and refusal in answer
        assert budget.held == sum(size for _, size in held)  # a refusal takes nothing


@given(hs.lists(hs.tuples(hs.sampled_from([ANYONE, "ann", "bob"]), hs.integers(1, 60))))
def test_what_is_held_never_passes_a_share_and_all_of_it_comes_back(
    asks: list[tuple[str, int]],
) -> None:
    budget = BodyBudget(SHARES)
    taken = [r for who, size in asks if isinstance(r := budget.reserve(who, size), Reservation)]
    assert budget.held <= SHARES.in_all and budget.held_by(ANYONE) <= SHARES.anyone
    assert budget.held_by("ann") <= SHARES.per_user and budget.held_by("bob") <= SHARES.per_user
    for reservation in taken:
        budget.release(reservation)
    assert budget.held == 0 and not any(budget.held_by(who) for who in (ANYONE, "ann", "bob"))


@pytest.mark.parametrize(("in_all", "anyone", "per_user"), [(100, 0, 10), (100, 10, 0),
                                                             (0, 10, 10), (100, -1, 10)])
def test_a_share_that_would_refuse_every_body_is_refused(
    in_all: int, anyone: int, per_user: int
) -> None:
    with pytest.raises(ValueError, match="body shares must be positive"):
        BodyShares(in_all, anyone, per_user)


def test_a_share_above_the_whole_never_binds() -> None:
    budget = BodyBudget(BodyShares(in_all=10, anyone=1000, per_user=1000))
    assert isinstance(budget.reserve(ANYONE, 10), Reservation)
    refusal = budget.reserve("ann", 1)
    assert isinstance(refusal, str) and "of 10 bytes in all (the limit)" in refusal


def test_bodies_reserved_at_once_at_a_share_take_exactly_the_share() -> None:
    """Sixteen threads released together each ask for a tenth of the anyone share: ten
    are taken, six refused; none slips past the share between a check and its count."""
    budget = BodyBudget(BodyShares(in_all=1000, anyone=100, per_user=100))
    start = threading.Barrier(16)
    answers: list[Reservation | str] = []

    def ask() -> None:
        start.wait()
        answers.append(budget.reserve(ANYONE, 10))

    threads = [threading.Thread(target=ask) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(isinstance(a, Reservation) for a in answers) == 10 and budget.held == 100
