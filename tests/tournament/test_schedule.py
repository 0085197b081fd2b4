"""Round-robin schedule by the circle method."""

from __future__ import annotations

import itertools

import pytest

from arena.tournament.pairing.schedule import round_robin


@pytest.mark.parametrize("count", [2, 3, 4, 5, 8, 9, 16], ids=lambda n: f"{n}-bots")
def test_every_pair_meets_exactly_once_and_every_bot_plays_each_round(count: int) -> None:
    bots = [f"bot{i}" for i in range(count)]
    rounds = round_robin(bots)
    assert len(rounds) == (count if count % 2 else count - 1)
    met = [frozenset((p.first, p.second)) for r in rounds for p in r.pairings]
    assert sorted(met, key=sorted) == sorted(
        (frozenset(pair) for pair in itertools.combinations(bots, 2)), key=sorted
    )
    for rnd in rounds:
        seen = [b for p in rnd.pairings for b in (p.first, p.second)]
        if rnd.bye is not None:
            seen.append(rnd.bye)
        assert sorted(seen) == sorted(bots)
    byes = [r.bye for r in rounds if r.bye is not None]
    assert len(byes) == len(set(byes)) == (count if count % 2 else 0)


def test_first_seat_is_shared_fairly() -> None:
    bots = [f"bot{i}" for i in range(8)]
    firsts = [p.first for r in round_robin(bots) for p in r.pairings]
    counts = [firsts.count(b) for b in bots]
    assert max(counts) - min(counts) <= 2


@pytest.mark.parametrize(
    ("bots", "message"),
    [(["a"], "at least two"), (["a", "a"], "distinct"), ([], "at least two")],
    ids=["one", "duplicate", "empty"],
)
def test_bad_fields_are_refused_by_name(bots: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        round_robin(bots)
