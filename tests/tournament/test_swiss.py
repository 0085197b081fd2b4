"""Swiss pairing: properties over many random tournaments, and known cases."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.testing.examples import examples
from arena.tournament.pairing.swiss import SwissEntrant, SwissRound, pair_swiss_round
from arena.tournament.policy.config import max_swiss_rounds


@dataclass
class _Field:
    """A simulated Swiss tournament: scores, who met whom, who had a bye."""

    scores: dict[str, float]
    opponents: dict[str, set[str]] = field(default_factory=dict)
    byes: set[str] = field(default_factory=set)

    def entrants(self, rng: random.Random) -> list[SwissEntrant]:
        order = sorted(self.scores, key=lambda b: (-self.scores[b], rng.random()))
        return [
            SwissEntrant(b, self.scores[b], frozenset(self.opponents.get(b, ())), b in self.byes)
            for b in order
        ]

    def play(self, rnd: SwissRound, rng: random.Random, games: int = 2) -> None:
        for p in rnd.pairings:
            self.opponents.setdefault(p.first, set()).add(p.second)
            self.opponents.setdefault(p.second, set()).add(p.first)
            first_points = rng.choice([0.0, 0.5, 1.0, 1.0, 1.5, 2.0])
            self.scores[p.first] += first_points
            self.scores[p.second] += games - first_points
        if rnd.bye is not None:
            self.byes.add(rnd.bye)
            self.scores[rnd.bye] += games


def _perfect_matching_exists(bots: list[str], allowed: nx.Graph) -> bool:
    graph = nx.Graph()
    graph.add_nodes_from(bots)
    graph.add_edges_from(e for e in allowed.edges if e[0] in bots and e[1] in bots)
    return 2 * len(nx.max_weight_matching(graph, maxcardinality=True)) == len(bots)


def _check_round(entrants: list[SwissEntrant], rnd: SwissRound) -> None:
    bots = [e.bot for e in entrants]
    by_name = {e.bot: e for e in entrants}
    seated = [b for p in rnd.pairings for b in (p.first, p.second)]
    if rnd.bye is not None:
        seated.append(rnd.bye)
        assert not by_name[rnd.bye].had_bye, "second bye"
    assert sorted(seated) == sorted(bots), "every bot plays once or has the bye"
    assert (rnd.bye is not None) == (len(bots) % 2 == 1)

    groups = sorted({e.score for e in entrants}, reverse=True)
    group = {e.bot: groups.index(e.score) for e in entrants}
    fresh = nx.Graph()
    for i, a in enumerate(bots):
        for b in bots[i + 1 :]:
            if b not in by_name[a].opponents:
                fresh.add_edge(a, b)
    eligible = [b for b in bots if not by_name[b].had_bye]
    bye_options = eligible if len(bots) % 2 else [None]
    rematch_free = [
        o for o in bye_options if _perfect_matching_exists([b for b in bots if b != o], fresh)
    ]
    rematches = [p for p in rnd.pairings if p.second in by_name[p.first].opponents]
    if rematch_free:
        assert not rematches, "rematch although a rematch-free pairing exists"
        if len(bots) % 2:
            assert rnd.bye == rematch_free[-1], "bye not to the lowest-ranked bot possible"
    if rematches:
        return
    rest = [b for b in bots if b != rnd.bye]
    near = nx.Graph()
    near.add_edges_from((a, b) for a, b in fresh.edges if abs(group[a] - group[b]) <= 1)
    if _perfect_matching_exists(rest, near):
        far = [p for p in rnd.pairings if abs(group[p.first] - group[p.second]) > 1]
        assert not far, "paired beyond the next score group although avoidable"


@pytest.mark.slow  # long: a simulation or many generated cases
@settings(max_examples=examples(150), deadline=None)
@given(
    count=st.integers(min_value=2, max_value=14),
    rounds=st.integers(min_value=1, max_value=7),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_random_tournaments_keep_every_pairing_rule(count: int, rounds: int, seed: int) -> None:
    rng = random.Random(seed)
    tour = _Field({f"bot{i:02d}": 0.0 for i in range(count)})
    for _ in range(min(rounds, count - 1)):
        entrants = tour.entrants(rng)
        rnd = pair_swiss_round(entrants)
        _check_round(entrants, rnd)
        tour.play(rnd, rng)


@settings(max_examples=examples(60), deadline=None)
@given(
    count=st.integers(min_value=10, max_value=40),
    rounds=st.integers(min_value=1, max_value=5),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_bracket_mode_seats_everyone_once_and_never_gives_a_second_bye(
    count: int, rounds: int, seed: int
) -> None:
    rng = random.Random(seed)
    tour = _Field({f"bot{i:02d}": 0.0 for i in range(count)})
    for _ in range(rounds):
        entrants = tour.entrants(rng)
        rnd = pair_swiss_round(entrants, exact_max_players=8, bracket_size=6)
        seated = [b for p in rnd.pairings for b in (p.first, p.second)]
        seated += [rnd.bye] if rnd.bye else []
        assert sorted(seated) == sorted(e.bot for e in entrants)
        assert rnd.bye is None or rnd.bye not in tour.byes
        tour.play(rnd, rng)


def test_bracket_mode_gives_the_bye_when_only_bots_above_the_last_bracket_lack_one() -> None:
    # Late in a long Swiss of a large field every bot of the last bracket has had its
    # bye; the bots still owed one are ranked higher and must not be paired away.
    entrants = [SwissEntrant("a", 4.0), SwissEntrant("b", 4.0)] + [
        SwissEntrant(f"c{i}", 0.0, had_bye=True) for i in range(7)
    ]
    rnd = pair_swiss_round(entrants, exact_max_players=8, bracket_size=4)
    assert rnd.bye == "b"
    seated = sorted(b for p in rnd.pairings for b in (p.first, p.second))
    assert seated == sorted(e.bot for e in entrants if e.bot != "b")


@settings(max_examples=examples(30), deadline=None)
@given(
    count=st.integers(min_value=5, max_value=21).filter(lambda n: n % 2 == 1),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_bracket_mode_plays_every_round_a_field_may_have(count: int, seed: int) -> None:
    """An odd field may play as many Swiss rounds as bots (each bot one bye): the
    pairing must seat everyone in each of them, whoever is still owed a bye."""
    rng = random.Random(seed)
    tour = _Field({f"bot{i:02d}": 0.0 for i in range(count)})
    for _ in range(max_swiss_rounds(count)):
        entrants = tour.entrants(rng)
        rnd = pair_swiss_round(entrants, exact_max_players=4, bracket_size=4)
        seated = [b for p in rnd.pairings for b in (p.first, p.second)]
        assert rnd.bye is not None and rnd.bye not in tour.byes
        assert sorted([*seated, rnd.bye]) == sorted(e.bot for e in entrants)
        tour.play(rnd, rng)


@pytest.mark.slow  # long: a simulation or many generated cases
def test_large_field_pairs_without_rematches_and_mostly_within_groups() -> None:
    rng = random.Random(7)
    tour = _Field({f"bot{i:04d}": 0.0 for i in range(301)})
    for _ in range(6):
        entrants = tour.entrants(rng)
        rnd = pair_swiss_round(entrants)
        groups = sorted({e.score for e in entrants}, reverse=True)
        group = {e.bot: groups.index(e.score) for e in entrants}
        assert all(p.second not in tour.opponents.get(p.first, ()) for p in rnd.pairings)
        near = sum(abs(group[p.first] - group[p.second]) <= 1 for p in rnd.pairings)
        assert near == len(rnd.pairings)
        tour.play(rnd, rng)


def test_first_round_pairs_everyone_and_gives_the_last_bot_the_bye() -> None:
    entrants = [SwissEntrant(f"b{i}", 0.0) for i in range(5)]
    rnd = pair_swiss_round(entrants)
    assert rnd.bye == "b4"
    assert len(rnd.pairings) == 2


def test_rematch_is_taken_only_when_nothing_else_exists() -> None:
    # Two bots that have met must meet again: there is nobody else.
    entrants = [
        SwissEntrant("a", 1.0, frozenset({"b"})),
        SwissEntrant("b", 1.0, frozenset({"a"})),
    ]
    rnd = pair_swiss_round(entrants)
    assert [(p.first, p.second) for p in rnd.pairings] == [("a", "b")]


def test_score_groups_are_kept_when_possible() -> None:
    entrants = [
        SwissEntrant("top1", 2.0),
        SwissEntrant("top2", 2.0),
        SwissEntrant("mid1", 1.0),
        SwissEntrant("mid2", 1.0),
        SwissEntrant("low1", 0.0),
        SwissEntrant("low2", 0.0),
    ]
    rnd = pair_swiss_round(entrants)
    assert {frozenset((p.first, p.second)) for p in rnd.pairings} == {
        frozenset(("top1", "top2")),
        frozenset(("mid1", "mid2")),
        frozenset(("low1", "low2")),
    }


@pytest.mark.parametrize(
    ("entrants", "message"),
    [
        ([SwissEntrant("a", 0.0)], "at least two"),
        ([SwissEntrant("a", 0.0), SwissEntrant("a", 0.0)], "distinct"),
        ([SwissEntrant(b, 0.0, had_bye=True) for b in "abc"], "every bot has had its bye"),
    ],
    ids=["one-bot", "duplicate", "no-bye-left"],
)
def test_impossible_fields_are_refused_by_name(entrants: list[SwissEntrant], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pair_swiss_round(entrants)
