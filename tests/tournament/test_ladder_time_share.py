"""The ladder's fair share of runner time per owner: the rule, case by case, and simulated;
an owner joining the ladder (new, or back) starts from the least-used owner's time.

The rule (``arena.tournament.pairing.ladder_schedule``): after the placement bursts, the
entrant whose owner has the least load (the runner time its owner's games used, decayed,
plus an estimate of its matches in play) plays first, and an owner more than an average
match ahead of the least-used one is nobody's opponent while another rival exists. The
simulation plays a ladder whose owners' bots cost different times per game (slow bots
beside quick ones), charging each match as the store charges it (``arena.store.usage``),
and checks that no owner's time runs away from the others'.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.referee import load_bot
from arena.referee.types import BotSpec, GameReport
from arena.store import (
    Store,
    TournamentConfig,
    add_bot_version,
    add_ladder_match,
    create_ladder,
    ladder_entrants,
    set_withdrawn,
)
from arena.store.usage import add_charge, decayed, joining_lifts
from arena.testing.examples import examples
from arena.tournament.execution.executor import JobEvent, MatchJob
from arena.tournament.orchestration.ladder import LadderRunner, LadderSummary
from arena.tournament.pairing.ladder_schedule import (
    Contender,
    Pick,
    SchedulePolicy,
    loads,
    pick,
)
from arena.tournament.policy.results import store_game

PLACED = 100  # ladder matches of a placed bot: past any placement burst
Q = SchedulePolicy()


def placed(id: int, owner: str | None, **kw: object) -> Contender:
    """A placed entrant (its latest match number 50 unless given)."""
    return replace(Contender(id, owner=owner, matches=PLACED, placed=PLACED, last_match=50), **kw)


CASES: list[tuple[str, list[Contender], Pick]] = [
    (
        "the least-used owner plays first, though another waited longer",
        [
            placed(1, "slow", owner_used=9000.0, last_match=10),
            placed(2, "uma", owner_used=100.0, last_match=59),
            placed(3, "vic", owner_used=200.0, last_match=58),
        ],
        Pick(2, 3, False),
    ),
    (
        "the most-used owner is nobody's opponent while another rival exists",
        [
            placed(1, "slow", owner_used=9000.0, mu=25.0),
            placed(2, "uma", owner_used=100.0, mu=25.0),
            placed(3, "vic", owner_used=200.0, mu=40.0),
        ],
        Pick(2, 3, False),
    ),
    (
        "the most-used owner plays when it is the only rival",
        [placed(1, "slow", owner_used=9000.0), placed(2, "uma", owner_used=100.0)],
        Pick(2, 1, False),
    ),
    (
        "equal use: the longer wait first, as without times",
        [
            placed(1, "uma", owner_used=100.0, last_match=40),
            placed(2, "vic", owner_used=100.0, last_match=59),
            placed(3, "wes", owner_used=100.0, last_match=55),
        ],
        Pick(1, 3, False),
    ),
    (
        "a user's entrants share one load: their owner's turn decides between them",
        [
            placed(1, "uma", owner_used=100.0, last_match=40, owner_last=58),
            placed(2, "uma", owner_used=100.0, last_match=57),
            placed(3, "vic", owner_used=300.0, last_match=30),
        ],
        Pick(2, 3, False),
    ),
    (
        "a match in play counts at what a match of its costs: the busy owner waits",
        [
            placed(1, "uma", owner_used=100.0, in_play=1, match_ms=500.0),
            placed(2, "vic", owner_used=300.0),
            placed(3, "wes", owner_used=350.0),
        ],
        Pick(2, 3, False),
    ),
    (
        "an entrant with no cost known yet counts at the others' mean",
        [
            placed(1, "uma", owner_used=100.0, in_play=1),
            placed(2, "vic", owner_used=300.0, match_ms=100.0),
            placed(3, "wes", owner_used=350.0, match_ms=500.0),
        ],
        Pick(2, 3, False),
    ),
    (
        "the admin's bots each count as their own owner",
        [
            placed(1, None, owner_used=50.0),
            placed(2, None, owner_used=9000.0),
            placed(3, "uma", owner_used=400.0),
        ],
        Pick(1, 3, False),
    ),
    (
        "a new bot waits for its owner's turn: its burst takes no other owner's",
        [
            Contender(1, owner="slow", owner_used=9000.0),
            placed(2, "uma", owner_used=100.0),
            placed(3, "vic", owner_used=200.0),
        ],
        Pick(2, 3, False),
    ),
    (
        "a new bot of the least-used owner places first",
        [
            placed(1, "uma", owner_used=100.0, last_match=10),
            placed(2, "vic", owner_used=200.0),
            Contender(3, owner="wes", owner_used=50.0),
        ],
        Pick(3, 1, True),
    ),
    (
        "a new bot places before its owner's placed bots, however long they waited",
        [
            placed(1, "uma", owner_used=100.0, last_match=10),
            Contender(2, owner="uma", owner_used=100.0),
            placed(3, "vic", owner_used=500.0),
        ],
        Pick(2, 3, True),
    ),
    (
        "equal loads: a new bot first, the fewest placement matches first",
        [
            Contender(1, owner="uma", matches=2, placed=2, last_match=30),
            Contender(2, owner="vic", matches=1, placed=1, last_match=58),
            placed(3, "wes", last_match=10),
        ],
        Pick(2, 1, True),
    ),
    (
        "a new bot with its burst in play waits as a placed one does",
        [
            Contender(1, owner="uma", in_play=2, matches=2, placed=2),
            placed(2, "vic", last_match=40),
            placed(3, "wes", last_match=55),
        ],
        Pick(2, 3, False),
    ),
    (
        "a new version of a placed bot does not place again",
        [
            placed(1, "uma", owner_used=100.0, matches=0, last_match=None),
            placed(2, "vic", owner_used=50.0),
            placed(3, "wes", owner_used=70.0),
        ],
        Pick(2, 3, False),
    ),
    (
        "the fair share comes before the no-repeat rule",
        [
            placed(1, "uma", owner_used=100.0, recent=(2,)),
            placed(2, "vic", owner_used=200.0, recent=(1,)),
            placed(3, "slow", owner_used=9000.0),
        ],
        Pick(1, 2, False),
    ),
]


@pytest.mark.parametrize(("contenders", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_the_rule(contenders: list[Contender], expected: Pick) -> None:
    assert pick(contenders, 60, Q) == expected


def test_loads_sum_each_owners_use_and_matches_in_play() -> None:
    found = loads([
        placed(1, "uma", owner_used=100.0, in_play=2, match_ms=10.0),
        placed(2, "uma", owner_used=100.0, in_play=1, match_ms=30.0),
        placed(3, None, owner_used=5.0, in_play=1),
    ])  # fmt: skip
    assert found == {"uma": 150.0, 3: 25.0}


@dataclass
class Sim:
    """A ladder of one entrant per owner; ``cost``: what one game costs each owner's bot (ms
    of thinking); ``slots`` matches run at once and as many more wait queued (the runner's
    ``ahead``), all counted in play; each match's two games are charged as the store charges
    them when the match ends."""

    cost: list[float]
    slots: int
    seed: int
    fixed_ms: float = 2.0  # a game's time that neither bot thinks
    state: dict[int, Contender] = field(default_factory=dict)
    used: dict[int, tuple[float, float]] = field(default_factory=dict)  # owner: (ms, as of)
    charged: dict[int, list[float]] = field(default_factory=dict)
    total: dict[int, float] = field(default_factory=dict)  # undecayed charges per owner
    away: set[int] = field(default_factory=set)  # owners with no entrant on the ladder now
    picks: list[Pick] = field(default_factory=list)  # every match scheduled, in order

    def __post_init__(self) -> None:
        rng = random.Random(self.seed)
        for i in range(len(self.cost)):
            self.state[i] = placed(i, f"o{i}", mu=rng.gauss(25, 3), last_match=0)
            self.used[i] = (0.0, 0.0)
            self.total[i] = 0.0
        self.rounds = 0
        self.now = 0.0
        self.running: list[tuple[float, int, int, int]] = []  # (end, round, first, second)
        self.queued: list[tuple[int, int, int]] = []

    @property
    def clock(self) -> float:
        """The ladder's clock: every charge so far (``arena.store.usage.clock``)."""
        return sum(self.total.values())

    def contenders(self) -> list[Contender]:
        out = []
        for i, c in self.state.items():
            if i in self.away:
                continue
            ms, at = self.used[i]
            kept = self.charged.get(i)
            mean = None if not kept else 2 * sum(kept) / len(kept)
            out.append(replace(c, owner_used=decayed(ms, at, self.clock), match_ms=mean))
        return out

    def fill(self) -> None:
        while len(self.running) + len(self.queued) < 2 * self.slots:
            chosen = pick(self.contenders(), self.rounds + 1, Q)
            assert chosen is not None
            self.rounds += 1
            for me, other in ((chosen.first, chosen.second), (chosen.second, chosen.first)):
                c = self.state[me]
                self.state[me] = replace(
                    c, matches=c.matches + 1, placed=c.matches + 1, last_match=self.rounds,
                    in_play=c.in_play + 1, recent=(other, *c.recent)[:2],
                )  # fmt: skip
            self.queued.append((self.rounds, chosen.first, chosen.second))
            self.picks.append(chosen)
        while len(self.running) < self.slots and self.queued:
            number, a, b = self.queued.pop(0)
            length = 2 * (self.cost[a] + self.cost[b] + self.fixed_ms)
            heapq.heappush(self.running, (self.now + length, number, a, b))

    def finish(self) -> None:
        self.now, _, a, b = heapq.heappop(self.running)
        for _ in range(2):  # its games, each charged as of the clock before it
            now = self.clock
            for me in (a, b):
                charge = self.cost[me] + self.fixed_ms / 2
                self.used[me] = add_charge(*self.used[me], charge, now)
                self.charged.setdefault(me, []).append(charge)
                self.total[me] += charge
        for me in (a, b):
            self.state[me] = replace(self.state[me], in_play=self.state[me].in_play - 1)

    def join(self, owner: int, *, lift: bool) -> None:
        """``owner`` comes onto the ladder (``lift``: starting from the least-used owner's
        time, ``joining_lifts``, as the store's ``join_owners`` does)."""
        present = set(self.state) - self.away
        self.away.discard(owner)
        if lift:
            used = {i: decayed(*self.used[i], self.clock) for i in self.state}
            for i, more in joining_lifts(used, present, present | {owner}).items():
                self.used[i] = add_charge(*self.used[i], more, self.clock)

    def spread(self) -> float:
        """How far the most-used owner's time (decayed, as the scheduler reads it) is ahead of
        the least-used one's."""
        now = [decayed(ms, at, self.clock) for ms, at in self.used.values()]
        return max(now) - min(now)


def _bound(cost: list[float], slots: int, fixed_ms: float) -> float:
    """What one owner may run ahead: its own matches in play and queued, one more, and the
    slack an opponent is allowed (an average match), at the dearest owner's cost."""
    dearest = 2 * (max(cost) + fixed_ms / 2)
    return (2 * slots + 2) * dearest


owners = st.tuples(
    st.lists(st.floats(1.0, 200.0), min_size=1, max_size=4),  # the other owners' costs
    st.integers(1, 4),  # matches at once
    st.integers(0, 2**16),
)


@pytest.mark.slow  # long: a simulation or many generated cases
@settings(max_examples=examples(25), deadline=None)
@given(owners)
def test_no_owner_runs_ahead_of_the_others_while_all_wait(
    setup: tuple[list[float], int, int],
) -> None:
    """Two quick owners (a game costs them 1 ms) and up to four others of any cost up to 200x
    theirs, all waiting all the time: once the first matches are charged, the most-used
    owner's time (decayed, as the scheduler reads it) stays within a few of the dearest
    matches of the least-used one's, and no owner is charged more than 1.5 times an equal
    share of the time since (the slow owner leads by up to a match of its own)."""
    others, slots, seed = setup
    sim = Sim([1.0, 1.0, *others], slots, seed)
    worst = 0.0
    for step in range(1000):
        sim.fill()
        sim.finish()
        if step == 200:  # the first matches were picked before any time was known
            before = dict(sim.total)
        if step >= 200:
            worst = max(worst, sim.spread())
    bound = _bound(sim.cost, slots, sim.fixed_ms)
    assert worst <= bound, (worst, bound)
    since = {owner: sim.total[owner] - before[owner] for owner in sim.total}
    fair = sum(since.values()) / len(since)
    assert max(since.values()) <= 1.5 * fair, since  # matches alone: over 2x (the control)


def test_an_owner_who_keeps_submitting_new_bots_gets_no_more_than_a_fair_share() -> None:
    """Owner 3 puts a new bot on the ladder whenever its latest is placed (twenty bots
    each, as a user may own): each new bot's placement burst orders its owner's turns,
    so the owner's time stays near an equal share of the eight owners' (placement first,
    whatever the owner used, gave it twice that: two placement matches at once)."""
    sim = Sim([10.0] * 8, 2, 7)
    for step in range(1000):
        c = sim.state[3]
        if c.placing_matches >= Q.placement_matches:  # placed: the next new bot joins
            sim.state[3] = replace(c, matches=0, placed=0, recent=(), last_match=None)
        sim.fill()
        sim.finish()
        if step == 200:
            before = dict(sim.total)
    since = {owner: sim.total[owner] - before[owner] for owner in sim.total}
    fair = sum(since.values()) / len(since)
    assert since[3] <= 1.25 * fair, since


def test_the_simulation_sees_a_runaway_owner() -> None:
    """The control: the same ladder scheduled by matches alone (no owner's time read) lets
    the slow owner run far past the bound."""
    sim = Sim([1.0, 1.0, 1.0, 150.0], 2, 1)
    blind = sim.contenders

    def matches_only() -> list[Contender]:
        return [replace(c, owner_used=0.0, match_ms=None) for c in blind()]

    sim.contenders = matches_only  # type: ignore[method-assign]
    for _ in range(600):
        sim.fill()
        sim.finish()
    assert sim.spread() > _bound(sim.cost, 2, sim.fixed_ms)
    assert sim.total[3] > 2 * sum(sim.total.values()) / 4  # over twice an equal share


JOINING = [  # (case, owner's bot is new, step it leaves, step it joins)
    ("a new owner", True, 0, 400),
    ("an owner back after time away", False, 100, 400),
]


def _share_after_joining(new_bot: bool, leaves: int, joins: int, *, lift: bool) -> float:
    """The share of the 100 matches scheduled after owner 7 joins (eight owners, bots of
    equal cost) that owner 7 plays in: an equal share is 2/8 of them."""
    sim = Sim([1000.0] * 8, 2, 7)
    for step in range(joins + 100):
        if step == leaves:
            sim.away.add(7)
        if step == joins:
            if new_bot:
                sim.state[7] = Contender(7, owner="o7")
            sim.join(7, lift=lift)
            start = len(sim.picks)
        sim.fill()
        sim.finish()
    after = sim.picks[start : start + 100]
    return sum(7 in (p.first, p.second) for p in after) / len(after)


@pytest.mark.parametrize(("new_bot", "leaves", "joins"), [c[1:] for c in JOINING],
                         ids=[c[0] for c in JOINING])  # fmt: skip
def test_an_owner_who_joins_plays_its_share_not_every_match(
    new_bot: bool, leaves: int, joins: int
) -> None:
    """An owner who joins the ladder, new or back after time away, is lifted to the
    least-used owner's time (``joining_lifts``), so it plays about an equal share of the
    matches after it joins; from its own time (the control) it played in nearly every one
    until it caught up, the other owners' matches among themselves starved."""
    unlifted = _share_after_joining(new_bot, leaves, joins, lift=False)
    lifted = _share_after_joining(new_bot, leaves, joins, lift=True)
    assert unlifted > 0.9, unlifted  # the control: every match until it caught up
    assert lifted < 0.35, lifted


class _Held:
    """An executor that takes the runner's matches and plays none (what was handed over is
    all a test of the runner's picks needs)."""

    def __init__(self) -> None:
        self.matches: list[tuple[str, str]] = []

    def submit(self, jobs: Sequence[MatchJob]) -> None:
        self.matches += [(job.first.name, job.second.name) for job in jobs if job.half == 0]

    def next_event(self, timeout_s: float) -> JobEvent | None:
        return None

    def cancel(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_the_runner_lifts_an_owner_who_joins_and_keeps_it_stored(tmp_path: Path) -> None:
    """The ladder's runner notes who is on the ladder as it picks: a new owner's bot joins
    at the least-used owner's time, stored (the /ladder page and a restart read it), and
    its first match comes at once (its placement among equal loads); an owner with no
    entrant left is noted gone."""
    data = tmp_path / "data"

    def bot(name: str) -> BotSpec:
        directory = tmp_path / "sources" / name
        directory.mkdir(parents=True)
        (directory / "bot.toml").write_text(
            f'name = "{name}"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'
        )
        (directory / "bot.py").write_text("print('hello')\n")
        return load_bot(directory)

    with Store.open(data) as store:
        for name, owner in (("a", "uma"), ("b", "vic"), ("c", "wes")):
            add_bot_version(store, bot(name), owner=owner)
        ladder = create_ladder(store, "ladder", TournamentConfig(), {})
        ids = {r.bot: r.version_id for r in ladder_entrants(store, ladder)}
        for first, second, ms in (("a", "b", (9000.0, 3000.0)), ("c", "b", (2000.0, 3000.0))):
            match_id = add_ladder_match(store, ladder, ids[first], ids[second], games=1, seed=1)
            store_game(store, match_id, GameReport(
                index=0, bots_by_seat=(first, second), winner=first, reason="points",
                statuses={}, actions=3, time_ms={first: ms[0], second: ms[1]}, record={},
            ))  # fmt: skip
        executor = _Held()
        runner = LadderRunner(store, ladder, concurrency=1, executor=executor, ahead=0)
        runner._fill(LadderSummary())  # its first look: uma, vic and wes, nobody lifted
        add_bot_version(store, bot("d"), owner="xan")
        set_withdrawn(store, "b", True, by="owner")
        runner._open_matches.clear()  # the match in play ended: a slot is free
        runner._fill(LadderSummary())
        used = {r.bot: r.owner_used_ms for r in ladder_entrants(store, ladder)}
        with store.reading() as db:
            kept = dict(db.execute("SELECT owner_key, active FROM ladder_owners").fetchall())
    assert used["d"] == pytest.approx(used["c"], rel=1e-12)  # wes: the least-used owner
    assert kept == {"user:uma": 1, "user:vic": 0, "user:wes": 1, "user:xan": 1}
    assert "d" in executor.matches[-1], executor.matches
