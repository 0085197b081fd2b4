"""The ladder's scheduler, simulated: fairness, no starvation, placement, no repeats, purity.

A simulated ladder keeps ``concurrency`` matches in play; each takes a
random time, its game is rated with TrueSkill as the runner rates it, and the
scheduler's next pick sees only what the store would give it. The runner keeps
``concurrency + ahead`` matches scheduled (one queued per worker by default, all
counted as in play), so the simulated ``concurrency`` goes up to 16: 8 workers,
each with a match queued.
"""

from __future__ import annotations

import heapq
import itertools
import random
from dataclasses import dataclass, field, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.testing.examples import examples
from arena.tournament.pairing.ladder_schedule import (
    Contender,
    Pick,
    SchedulePolicy,
    pick,
    plan,
    scheduled,
)
from arena.tournament.rating.ratings import Rating, rate_game


@dataclass
class Ladder:
    """A simulated ladder: the scheduler's state, the matches in play, every pick made."""

    concurrency: int
    seed: int
    policy: SchedulePolicy = field(default_factory=SchedulePolicy)
    state: dict[int, Contender] = field(default_factory=dict)
    picks: list[tuple[int, Pick]] = field(default_factory=list)  # (sequence number, pick)
    joined: dict[int, int] = field(default_factory=dict)  # id: sequence number when it joined

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.strength: dict[int, float] = {}
        self.in_play: list[tuple[float, int, int, int]] = []
        self.now = 0.0

    @property
    def next_match(self) -> int:
        return len(self.picks) + 1

    def join(self, version: int) -> None:
        self.state[version] = Contender(version)
        self.strength[version] = self.rng.gauss(0, 4)
        self.joined[version] = self.next_match

    def leave(self, version: int) -> None:
        del self.state[version]

    def run(self, matches: int) -> None:
        """Schedule ``matches`` more, finishing matches in play as slots are needed."""
        goal = self.next_match + matches
        while self.next_match < goal:
            while len(self.in_play) < self.concurrency and self.next_match < goal:
                chosen = pick(list(self.state.values()), self.next_match, self.policy)
                assert chosen is not None
                self._schedule(chosen)
            self._finish_one()

    def _schedule(self, chosen: Pick) -> None:
        number = self.next_match
        self.picks.append((number, chosen))
        a, b = chosen.first, chosen.second
        self.state[a] = scheduled(self.state[a], b, number)
        self.state[b] = scheduled(self.state[b], a, number)
        heapq.heappush(self.in_play, (self.now + self.rng.uniform(1, 3), number, a, b))

    def _finish_one(self) -> None:
        self.now, _, a, b = heapq.heappop(self.in_play)
        p_first = 1 / (1 + 10 ** ((self.strength[b] - self.strength[a]) / 4))
        winner = 0 if self.rng.random() < p_first else 1
        for version in (a, b):
            if version in self.state:  # one that left keeps no state
                c = self.state[version]
                self.state[version] = replace(c, in_play=c.in_play - 1)
        if a in self.state and b in self.state:
            ra, rb = (Rating(self.state[v].mu, self.state[v].sigma) for v in (a, b))
            na, nb = rate_game(ra, rb, winner=winner)
            self.state[a] = replace(self.state[a], mu=na.mu, sigma=na.sigma)
            self.state[b] = replace(self.state[b], mu=nb.mu, sigma=nb.sigma)

    def matches_of(self, version: int) -> list[int]:
        return [n for n, p in self.picks if version in (p.first, p.second)]


def _ladder(bots: int, concurrency: int, seed: int) -> Ladder:
    ladder = Ladder(concurrency, seed)
    for version in range(bots):
        ladder.join(version)
    return ladder


ladders = st.tuples(
    st.integers(3, 24), st.integers(1, 16), st.integers(0, 2**32 - 1)
)  # bots, matches scheduled (in play and queued), seed


@pytest.mark.slow  # long: a simulation or many generated cases
@settings(max_examples=examples(25), deadline=None)
@given(ladders)
def test_game_counts_stay_fair_over_time(setup: tuple[int, int, int]) -> None:
    bots, concurrency, seed = setup
    ladder = _ladder(bots, concurrency, seed)
    for _ in range(3):  # at every checkpoint, not only in the end
        ladder.run(10 * bots)
        counts = [len(ladder.matches_of(v)) for v in ladder.state]
        # the sigma weight is at most 2x: no entrant gets more than about twice another's
        assert max(counts) <= 2 * min(counts) + 2, counts


@pytest.mark.slow  # long: a simulation or many generated cases
@settings(max_examples=examples(25), deadline=None)
@given(ladders)
def test_no_entrant_waits_longer_than_a_bounded_number_of_matches(
    setup: tuple[int, int, int],
) -> None:
    bots, concurrency, seed = setup
    ladder = _ladder(bots, concurrency, seed)
    ladder.run(20 * bots)
    bound = 2 * bots + 2 * concurrency
    for version in ladder.state:
        played = [0, *ladder.matches_of(version), ladder.next_match]
        gaps = [b - a for a, b in itertools.pairwise(played)]
        assert max(gaps) <= bound, (version, gaps)


@pytest.mark.slow  # long: a simulation or many generated cases
@settings(max_examples=examples(25), deadline=None)
@given(ladders, st.integers(1, 4), st.integers(0, 60))
def test_every_new_version_is_placed_within_a_bounded_number_of_matches(
    setup: tuple[int, int, int], newcomers: int, after: int
) -> None:
    bots, concurrency, seed = setup
    ladder = _ladder(bots, concurrency, seed)
    ladder.run(after)
    for version in range(1000, 1000 + newcomers):
        ladder.join(version)  # several at once: a bot's new version, or new bots
    policy = ladder.policy
    # every version still placing (the first bots too, early on) shares the burst
    placing = sum(c.matches < policy.placement_matches for c in ladder.state.values())
    bound = placing * policy.placement_matches * (concurrency + 1)
    ladder.run(bound)
    for version in range(1000, 1000 + newcomers):
        placed = [n for n, p in ladder.picks if version in (p.first, p.second)]
        assert len(placed) >= policy.placement_matches, (version, placed, bound)
        assert placed[policy.placement_matches - 1] < ladder.joined[version] + bound


@settings(max_examples=examples(25), deadline=None)
@given(ladders, st.integers(1, 3))
def test_the_same_pairing_never_comes_too_often_in_a_row(
    setup: tuple[int, int, int], max_repeat: int
) -> None:
    bots, concurrency, seed = setup
    ladder = _ladder(bots, concurrency, seed)
    ladder.policy = SchedulePolicy(max_repeat=max_repeat)
    ladder.run(10 * bots)
    for version in ladder.state:
        opponents = [
            p.second if p.first == version else p.first
            for _, p in ladder.picks
            if version in (p.first, p.second)
        ]
        runs = [opponents[i : i + max_repeat + 1] for i in range(len(opponents) - max_repeat)]
        assert not any(len(set(run)) == 1 for run in runs), (version, opponents)


def test_a_withdrawn_entrant_is_never_picked_again_and_the_rest_play_on() -> None:
    ladder = _ladder(6, 2, seed=7)
    ladder.run(30)
    ladder.leave(3)
    start = ladder.next_match
    ladder.run(30)
    later = [p for n, p in ladder.picks if n >= start]
    assert all(3 not in (p.first, p.second) for p in later)
    assert {v for p in later for v in (p.first, p.second)} == {0, 1, 2, 4, 5}


def test_the_opponent_is_near_the_first_bots_rating() -> None:
    far = [Contender(i, mu=10.0 * i, sigma=1.0, matches=9, last_match=i) for i in range(6)]
    chosen = pick(far, next_match=10)
    assert chosen is not None and chosen.first == 0  # the longest wait
    assert chosen.second == 1  # its nearest neighbour, not a far one


def test_a_large_sigma_plays_before_a_settled_rating_with_the_same_wait() -> None:
    pair = [
        Contender(1, sigma=1.0, matches=9, last_match=5),
        Contender(2, sigma=8.0, matches=9, last_match=5),
        Contender(3, sigma=1.0, matches=9, last_match=9),
    ]
    chosen = pick(pair, next_match=10)
    assert chosen is not None and chosen.first == 2


def test_two_entrants_play_each_other_and_one_entrant_plays_nobody() -> None:
    assert pick([Contender(1)], 1) is None
    assert pick([], 1) is None
    two = [Contender(1, matches=9, recent=(2,)), Contender(2, matches=9, recent=(1,))]
    assert pick(two, 5) == Pick(1, 2, placement=False) or pick(two, 5) == Pick(2, 1, False)


def test_the_queue_is_the_next_picks_and_the_same_state_gives_the_same_queue() -> None:
    state = [Contender(i, mu=20.0 + i, matches=5, last_match=i + 1) for i in range(8)]
    queue = plan(state, next_match=9, count=4)
    assert len(queue) == 4
    assert queue == plan(list(state), next_match=9, count=4)
    assert queue[0] == pick(state, 9)
    firsts = {p.first for p in queue} | {p.second for p in queue}
    assert len(firsts) == 8  # four matches, eight different idle bots
