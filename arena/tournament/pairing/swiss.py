"""Swiss pairing by maximum-weight matching (networkx).

Bots are paired within their score group where possible, else with the next
group; no rematch while a rematch-free pairing exists; with an odd field the
bye goes to the lowest-ranked bot that has not had one, and nobody gets two.

The priorities are lexicographic, encoded as integer edge weights whose tiers
cannot overflow into each other (networkx stays in integer arithmetic):

1. as many bots paired as possible (``maxcardinality=True``);
2. as few rematches as possible;
3. the bye to the lowest-ranked bot without one;
4. as many pairs as possible within or next to a score group;
5. the smallest score-group distances (sum of squares).

Speed: the blossom algorithm in pure Python is cubic, so a complete graph is
used only for fields up to ``exact_max_players``. Larger fields are paired
bracket by bracket from the top score group down: each bracket of at most
``bracket_size`` bots (a score group, or a slice of a big one, plus bots
floated down from above) is matched on its own with rematch edges left out;
whoever stays unpaired floats into the next bracket, and the last bracket is
paired exactly (rematches penalised, bye included); should every bot of an odd
last bracket have had its bye (a long Swiss), the lowest-ranked bot still owed
one is kept back from the brackets above for it. A field of 1,000 bots then
costs a few dozen small matchings instead of one matching on 500,000 edges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.tournament.pairing.schedule import Pairing

_BYE = "\x00bye"  # graph node standing for "no opponent"


@dataclass(frozen=True, slots=True)
class SwissEntrant:
    """A bot as the pairing sees it. Entrants are passed in rank order, best first."""

    bot: str
    score: float
    opponents: frozenset[str] = frozenset()
    had_bye: bool = False


@dataclass(frozen=True, slots=True)
class SwissRound:
    pairings: tuple[Pairing, ...]
    bye: str | None


def pair_swiss_round(
    entrants: Sequence[SwissEntrant],
    *,
    exact_max_players: int = 64,
    bracket_size: int = 48,
) -> SwissRound:
    """Pair one Swiss round. ``entrants`` are in rank order (best first)."""
    names = [e.bot for e in entrants]
    if len(set(names)) != len(names):
        raise ValueError("pair_swiss_round: bot names must be distinct")
    if len(entrants) < 2:
        raise ValueError("pair_swiss_round: need at least two bots")
    if len(entrants) % 2 and all(e.had_bye for e in entrants):
        raise ValueError("pair_swiss_round: odd field and every bot has had its bye")
    if bracket_size < 4 or bracket_size % 2:
        raise ValueError("pair_swiss_round: bracket_size must be even and at least 4")
    scores = sorted({e.score for e in entrants}, reverse=True)
    group_of = {e.bot: scores.index(e.score) for e in entrants}
    if len(entrants) <= exact_max_players:
        return _pair_exact(list(entrants), group_of, len(scores))
    return _pair_by_brackets(list(entrants), group_of, len(scores), bracket_size)


def _pair_exact(pool: list[SwissEntrant], group_of: dict[str, int], group_count: int) -> SwissRound:
    """Complete-graph matching with the bye node when the pool is odd."""
    odd = len(pool) % 2 == 1
    matching = _max_weight_matching(
        pool, group_of, group_count, allow_rematches=True, with_bye=odd
    )
    pairings, bye, unpaired = _read_matching(pool, matching)
    if unpaired:  # impossible with maxcardinality on a complete graph; guard anyway
        raise RuntimeError(f"pair_swiss_round: could not pair {sorted(unpaired)}")
    return SwissRound(tuple(pairings), bye)


def _pair_by_brackets(
    entrants: list[SwissEntrant], group_of: dict[str, int], group_count: int, bracket_size: int
) -> SwissRound:
    """Bracket by bracket; with an odd field whose last bracket holds nobody still owed
    a bye, again with the lowest-ranked bot owed one kept back for that bracket."""
    rank = {e.bot: i for i, e in enumerate(entrants)}
    paired = _brackets(entrants, group_of, group_count, bracket_size, rank, held=None)
    if paired is not None:
        return paired
    held = next(e for e in reversed(entrants) if not e.had_bye)  # pair_swiss_round checked
    rest = [e for e in entrants if e is not held]
    again = _brackets(rest, group_of, group_count, bracket_size, rank, held=held)
    assert again is not None  # the last bracket now holds a bot without a bye
    return again


def _brackets(
    entrants: list[SwissEntrant],
    group_of: dict[str, int],
    group_count: int,
    bracket_size: int,
    rank: dict[str, int],
    *,
    held: SwissEntrant | None,
) -> SwissRound | None:
    """Upper brackets without rematches, then the last one exactly, ``held`` joining it
    in its ``rank``; None when an odd last bracket has nobody to give the bye to."""
    pairings: list[Pairing] = []
    pool: list[SwissEntrant] = []
    for index, entrant in enumerate(entrants):
        pool.append(entrant)
        next_group = group_of[entrants[index + 1].bot] if index + 1 < len(entrants) else None
        remaining = len(entrants) - index - 1
        group_ends = next_group != group_of[entrant.bot]
        # Keep the last bracket big enough to finish exactly (bye, rematches).
        if remaining < bracket_size or not (group_ends or len(pool) >= bracket_size):
            continue
        floaters: list[SwissEntrant] = []
        if len(pool) % 2:
            floaters.append(pool.pop())  # lowest-ranked floats down
        matching = _max_weight_matching(
            pool, group_of, group_count, allow_rematches=False, with_bye=False
        )
        paired, _, unpaired = _read_matching(pool, matching)
        pairings.extend(paired)
        pool = [e for e in pool if e.bot in unpaired] + floaters
    if held is not None:
        pool = sorted([*pool, held], key=lambda e: rank[e.bot])
    if len(pool) % 2 and all(e.had_bye for e in pool):
        return None
    last = _pair_exact(pool, group_of, group_count)
    return SwissRound((*pairings, *last.pairings), last.bye)


def _max_weight_matching(
    pool: list[SwissEntrant],
    group_of: dict[str, int],
    group_count: int,
    *,
    allow_rematches: bool,
    with_bye: bool,
) -> set[tuple[str, str]]:
    """networkx's maximum-cardinality, maximum-weight matching of ``pool``'s pairing graph."""
    import networkx as nx  # here, not at the top: match workers and the CLI import this module

    pair_count = len(pool) // 2 + 1
    fine_max = group_count * group_count
    near_unit = pair_count * fine_max + 1
    bye_unit = pair_count * (near_unit + fine_max) + 1
    fresh_unit = pair_count * (len(pool) * bye_unit + near_unit + fine_max) + 1
    graph = nx.Graph()
    graph.add_nodes_from(e.bot for e in pool)
    for i, a in enumerate(pool):
        for b in pool[i + 1 :]:
            rematch = b.bot in a.opponents or a.bot in b.opponents
            if rematch and not allow_rematches:
                continue
            distance = abs(group_of[a.bot] - group_of[b.bot])
            weight = (
                (0 if rematch else fresh_unit)
                + (near_unit if distance <= 1 else 0)
                + fine_max
                - distance * distance
            )
            graph.add_edge(a.bot, b.bot, weight=weight)
    if with_bye:
        for rank, entrant in enumerate(pool):
            if not entrant.had_bye:
                weight = fresh_unit + (rank + 1) * bye_unit + near_unit + fine_max
                graph.add_edge(_BYE, entrant.bot, weight=weight)
    matching: set[tuple[str, str]] = nx.max_weight_matching(graph, maxcardinality=True)
    return matching


def _read_matching(
    pool: list[SwissEntrant], matching: set[tuple[str, str]]
) -> tuple[list[Pairing], str | None, set[str]]:
    rank = {e.bot: i for i, e in enumerate(pool)}
    pairings: list[Pairing] = []
    bye: str | None = None
    paired: set[str] = set()
    for u, v in matching:
        if _BYE in (u, v):
            bye = v if u == _BYE else u
            paired.add(bye)
            continue
        first, second = (u, v) if rank[u] < rank[v] else (v, u)
        pairings.append(Pairing(first, second))
        paired.update((u, v))
    pairings.sort(key=lambda p: rank[p.first])
    return pairings, bye, set(rank) - paired
