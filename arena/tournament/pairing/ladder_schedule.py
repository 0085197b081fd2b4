"""The ladder's scheduler: who plays whom next, a pure function of ratings and history.

``pick`` chooses the next match from the entrants' stored state
(``Contender``: rating, ladder matches, when each last played, with whom,
how many of its matches are in play) and nothing else, so the same store
gives the same choice, after a restart too:

1. **Who plays first.** The entrant whose owner has used the least runner time
   (``load``: the time its owner's bots' ladder games used, decayed,
   ``arena.store.usage``, plus an estimate of its matches in play; the admin's
   bots each count alone; an owner joining the ladder, new or back, starts from
   the least-used owner's, ``arena.store.join_owners``): a fair share of the
   runner's time per owner, so a slow bot plays fewer matches instead of holding
   a slot. Among equals (a user's entrants, or a ladder with no time used yet) a
   new bot first (fewer than ``placement_matches`` ladder matches, of all its
   versions together: a new version of a placed bot does not place again),
   fewest placement matches first, with up to ``placement_in_play`` matches at
   once: its placement burst, which orders its owner's turns and never takes
   another owner's (an owner's twenty new bots place at their owner's share).
   Then the idle one with the highest need, ``wait * (1 + sigma / SIGMA0)``:
   ``wait`` is how many ladder matches were scheduled since its last one, so
   every entrant's need grows until it plays (no starvation), and a large sigma
   (an uncertain rating) at most doubles it. A user's entrant waits from no
   earlier than its owner's turn (``owner_last``): a bot off the ladder
   (withdrawn, or one of a user's bots past ``entrants_per_user``) banks no
   wait, so switching between one's bots buys no extra matches.
2. **Against whom.** An opponent near its mu: not of an owner more than an
   average match ahead of the least-used owner (while another rival exists);
   among the ``neighbours``
   entrants on each side of its mu (idle ones first), the one with the
   lowest ``|mu_a - mu_b| / sqrt(2 beta^2 + sigma_a^2 + sigma_b^2)`` (the
   distance TrueSkill's match quality falls with) minus its own wait as a
   share of one round of the ladder, so the same neighbour is not every
   bot's opponent.
3. **Never two bots of one owner.** Their games would be rated only if
   the owner let them be honest; the ladder never pairs them (bots without
   an owner, the admin's, may meet each other). An entrant whose only
   possible opponents are its owner's other bots waits.
4. **Never the same pairing too often in a row.** An opponent that an
   entrant already met in each of its last ``max_repeat`` matches (or that
   met it so) is left out while any other opponent within the fair share
   exists (the fair share comes first).

When every entrant is busy (few entrants, many matches at once) the least
busy are taken: the machine stays busy. ``plan`` is the pairing queue: the
next picks, each applied to the state as if it had been scheduled.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from arena.tournament.rating.ratings import MU, SIGMA, environment

SIGMA0 = SIGMA
"""A new version's sigma: the scale of the uncertainty weight."""
BETA = float(environment().beta)


@dataclass(frozen=True, slots=True)
class Contender:
    """An entrant as the scheduler sees it (from ``arena.store.ladder_entrants``)."""

    id: int  # the bot version's id
    mu: float = MU
    sigma: float = SIGMA
    matches: int = 0  # ladder matches played or in play
    last_match: int | None = None  # sequence number of its latest ladder match
    in_play: int = 0  # its ladder matches in play now
    recent: tuple[int, ...] = ()  # ids of its latest opponents, newest first
    owner: str | None = None  # None: the admin's (may meet any bot)
    placed: int | None = None  # ladder matches of all its bot's versions; None: ``matches``
    owner_last: int | None = None  # its owner's turn: its wait counts from no earlier
    owner_used: float = 0.0  # the runner time its owner used (ms, decayed: arena.store.usage)
    match_ms: float | None = None  # what a match of its costs it (ms); None: not known yet

    @property
    def placing_matches(self) -> int:
        """The matches that count toward its placement burst (its bot's, every version)."""
        return self.matches if self.placed is None else self.placed


def rivals(a: Contender, b: Contender) -> bool:
    """Whether ``a`` and ``b`` may be paired: two bots, not both one user's."""
    return a.id != b.id and (a.owner is None or a.owner != b.owner)


PLACEMENT_MATCHES = 4
"""A new bot's placement burst: this many matches before its owner's other entrants."""
PLACEMENT_IN_PLAY = 2
MAX_REPEAT = 1


@dataclass(frozen=True, slots=True)
class SchedulePolicy:
    placement_matches: int = PLACEMENT_MATCHES
    placement_in_play: int = PLACEMENT_IN_PLAY  # a placing version's matches at once
    max_repeat: int = MAX_REPEAT  # the same opponent at most this many times in a row
    neighbours: int = 4  # opponents looked at on each side of the first's mu


@dataclass(frozen=True, slots=True)
class Pick:
    first: int  # version ids
    second: int
    placement: bool  # the first is a new version in its placement burst


def need(contender: Contender, next_match: int) -> float:
    """How much ``contender`` needs a game: its wait (since its latest match, or its owner's
    turn if that is later), weighted up to 2x by its sigma."""
    last, turn = contender.last_match, contender.owner_last
    if turn is not None and (last is None or turn > last):
        last = turn
    wait = next_match + 1 if last is None else next_match - last
    return wait * (1.0 + min(contender.sigma, SIGMA0) / SIGMA0)


OwnerKey = str | int
"""A user's name, or the version id of one of the admin's bots (each its own owner)."""


def owner_key(contender: Contender) -> OwnerKey:
    return contender.id if contender.owner is None else contender.owner


def loads(contenders: Sequence[Contender]) -> dict[OwnerKey, float]:
    """Each owner's load: the runner time it used (``owner_used``) plus, for each of its
    matches in play, what a match of that entrant costs (``match_ms``; the mean over the
    entrants that have one while it has none), since their time is charged as they end."""
    usual = _mean_match_ms(contenders)
    load: dict[OwnerKey, float] = {}
    for c in contenders:
        key = owner_key(c)
        cost = usual if c.match_ms is None else c.match_ms
        load[key] = load.get(key, c.owner_used) + c.in_play * cost
    return load


def pick(
    contenders: Sequence[Contender], next_match: int, policy: SchedulePolicy = SchedulePolicy()
) -> Pick | None:
    """The next match (None with fewer than two contenders); ``next_match``: its sequence number."""
    if len(contenders) < 2:
        return None
    load = loads(contenders)
    ceiling = min(load.values()) + _mean_match_ms(contenders)  # an owner past it waits
    first, placement = _first(contenders, next_match, policy, load)
    opponent = _opponent(first, contenders, next_match, policy, load, ceiling)
    if opponent is None or _repeats(first, opponent, policy.max_repeat):  # few entrants only
        fallback: Pick | None = None
        for other in _ranked(contenders, next_match, policy, load):
            if load[owner_key(other)] > ceiling and other is not first:
                continue
            found = _opponent(other, contenders, next_match, policy, load, ceiling)
            if found is None:
                continue
            chosen = Pick(other.id, found.id, other.placing_matches < policy.placement_matches)
            if not _repeats(other, found, policy.max_repeat):
                return chosen
            fallback = fallback or chosen
        if opponent is None:
            return fallback
    return Pick(first.id, opponent.id, placement)


Order = tuple[float, int, int, int, float, int]


def _order(
    c: Contender, next_match: int, policy: SchedulePolicy, load: dict[OwnerKey, float]
) -> Order:
    """Where ``c`` stands in line to play first (least first): its owner's load, then, among
    equal loads (an owner's own entrants), a placement burst with room for another match
    (fewest placement matches first), then the least busy, the highest need."""
    if c.placing_matches < policy.placement_matches and c.in_play < policy.placement_in_play:
        return (load[owner_key(c)], 0, c.placing_matches, 0, 0.0, c.id)
    return (load[owner_key(c)], 1, 0, c.in_play, -need(c, next_match), c.id)


def _ranked(
    contenders: Sequence[Contender],
    next_match: int,
    policy: SchedulePolicy,
    load: dict[OwnerKey, float],
) -> list[Contender]:
    """Every contender in the order ``_first`` prefers them (a placing one with its burst in
    play among them, as a placed one)."""
    return sorted(contenders, key=lambda c: _order(c, next_match, policy, load))


def _first(
    contenders: Sequence[Contender],
    next_match: int,
    policy: SchedulePolicy,
    load: dict[OwnerKey, float],
) -> tuple[Contender, bool]:
    best: Contender | None = None
    best_key: Order | None = None
    for c in contenders:  # one pass: this runs over every entrant at every pick
        if (c.placing_matches < policy.placement_matches
                and c.in_play >= policy.placement_in_play):  # fmt: skip
            continue  # placing, with its burst in play: it is not waiting
        key = _order(c, next_match, policy, load)
        if best_key is None or key < best_key:
            best, best_key = c, key
    if best is None or best_key is None:  # everyone is placing and busy: the least busy
        best = min(contenders, key=lambda c: (c.in_play, c.placing_matches, c.id))
        return best, False
    return best, best_key[1] == 0


def _mean_match_ms(contenders: Sequence[Contender]) -> float:
    """An average match: the mean of the entrants' ``match_ms`` (0 while none is known). It
    stands for a match in play of an entrant with none yet (``loads``), and is how far past
    the least-used owner's load an owner may be and still play (``pick``'s ceiling)."""
    known = [c.match_ms for c in contenders if c.match_ms is not None]
    return sum(known) / len(known) if known else 0.0


def _within_share(
    rivals_: list[Contender], load: dict[OwnerKey, float], ceiling: float
) -> list[Contender]:
    """Of ``rivals_``, those whose owner's load is at most ``ceiling`` (the least-used owner's
    plus an average match), or else the least-used of them: an owner ahead of everyone by
    more than an average match waits until the others catch up."""
    kept = [c for c in rivals_ if load[owner_key(c)] <= ceiling]
    if kept:
        return kept
    least = min(load[owner_key(c)] for c in rivals_)
    return [c for c in rivals_ if load[owner_key(c)] == least]


def _repeats(a: Contender, b: Contender, max_repeat: int) -> bool:
    """Whether a match of ``a`` and ``b`` would be one too many in a row for either."""
    return _met_in_a_row(a, b.id, max_repeat) or _met_in_a_row(b, a.id, max_repeat)


def _met_in_a_row(c: Contender, other: int, max_repeat: int) -> bool:
    last = c.recent[:max_repeat]
    return len(last) >= max_repeat and all(o == other for o in last)


def _opponent(
    first: Contender,
    contenders: Sequence[Contender],
    next_match: int,
    policy: SchedulePolicy,
    load: dict[OwnerKey, float],
    ceiling: float,
) -> Contender | None:
    others = [c for c in contenders if rivals(first, c)]
    if not others:
        return None
    others = _within_share(others, load, ceiling)
    allowed = [c for c in others if not _repeats(first, c, policy.max_repeat)] or others
    least_busy = min(c.in_play for c in allowed)
    pool = sorted((c for c in allowed if c.in_play == least_busy), key=lambda c: (c.mu, c.id))
    at = bisect.bisect_left([c.mu for c in pool], first.mu)
    near = pool[max(0, at - policy.neighbours) : at + policy.neighbours]
    round_length = max(1.0, len(contenders) / 2)  # matches in which each entrant plays once

    def cost(c: Contender) -> float:
        spread = math.sqrt(2 * BETA**2 + first.sigma**2 + c.sigma**2)
        return abs(first.mu - c.mu) / spread - min(2.0, need(c, next_match) / round_length)

    return min(near, key=lambda c: (cost(c), c.id))


def scheduled(contender: Contender, opponent: int, match: int) -> Contender:
    """``contender`` once match number ``match`` against ``opponent`` is scheduled."""
    return replace(
        contender,
        matches=contender.matches + 1,
        placed=None if contender.placed is None else contender.placed + 1,
        last_match=match,
        in_play=contender.in_play + 1,
        recent=(opponent, *contender.recent),
    )


def plan(
    contenders: Sequence[Contender],
    next_match: int,
    count: int,
    policy: SchedulePolicy = SchedulePolicy(),
) -> list[Pick]:
    """The pairing queue: the next ``count`` picks, as if each were scheduled in turn."""
    state = {c.id: c for c in contenders}
    picks: list[Pick] = []
    for number in range(next_match, next_match + count):
        chosen = pick(list(state.values()), number, policy)
        if chosen is None:
            break
        picks.append(chosen)
        state[chosen.first] = scheduled(state[chosen.first], chosen.second, number)
        state[chosen.second] = scheduled(state[chosen.second], chosen.first, number)
    return picks
