"""A chain of matches played by one worker (``play_chain``), and how long the chains are.

``play_chain`` is what the local executor's single worker and each Ray task play
(``arena.tournament.execution.match_chain``): real sandboxed bots here, every half reported
once, each next match's first half prestarted while the match before it plays
where ``arena.referee.prestart`` says so (never on one CPU), a match whose bots
cannot be had failing alone. ``chain_length`` is the Ray
driver's split of the waiting matches into tasks.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import arena.referee.halves
import arena.tournament.execution.match_chain
from arena.referee import BotSpec, BotStatus, MatchConfig, TimeControl, load_bot
from arena.referee.halves import half_configs
from arena.referee.match import StartedMatch, start_match
from arena.tournament.execution.cpu_placement import usable_cpus
from arena.tournament.execution.executor import GameFinished, JobDone, MatchJob, SeatOffered
from arena.tournament.execution.match_chain import chain_length, play_chain

from ..referee.test_halves import launches_ahead_overlap_play
from .test_runner import _bot_copy

CONFIG = MatchConfig(games=2, time_control=TimeControl(2000, 2000))


@pytest.mark.parametrize(
    ("waiting", "slots", "cap", "length"),
    [
        (15, 2, 4, 4),  # an even share (8) is more than the cap
        (7, 2, 4, 4),
        (3, 2, 4, 2),
        (1, 2, 4, 1),
        (6, 4, 4, 2),
        (4, 4, 4, 1),  # one each: no chain
        (21, 4, 4, 4),
        (5, 1, 1, 1),  # chains of one: a task per match
        (0, 4, 4, 1),
        (9, 0, 4, 4),  # no slots seen yet: counted as one
    ],
)  # fmt: skip
def test_a_chain_is_an_even_share_of_the_waiting_matches_up_to_the_cap(
    waiting: int, slots: int, cap: int, length: int
) -> None:
    assert chain_length(waiting, slots, cap) == length


@given(st.integers(1, 200), st.integers(1, 64), st.integers(1, 8))
def test_draining_a_queue_in_chains_takes_every_match_once_in_shrinking_chains(
    waiting: int, slots: int, cap: int
) -> None:
    chains = []
    left = waiting
    while left:
        chains.append(min(left, chain_length(left, slots, cap)))
        left -= chains[-1]
    assert sum(chains) == waiting
    assert all(1 <= c <= cap for c in chains)
    assert chains == sorted(chains, reverse=True), "a later chain longer than an earlier one"
    # the last chains are short: the slots finish within a short match of each other
    assert chains[-1] <= max(1, -(-waiting // slots))


def _processes_with(marker: str) -> list[int]:
    """Pids of every live process whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _groups(bots: list[BotSpec]) -> list[tuple[MatchJob, ...]]:
    """Matches (each its two halves) of ``bots[0]`` against each other bot in turn."""
    return [
        tuple(MatchJob(number, half, bots[0], other, half=half.indices_to_play[0] % 2,
                       live=False) for half in half_configs(CONFIG))
        for number, other in enumerate(bots[1:], start=1)
    ]  # fmt: skip


@pytest.mark.slow
def test_each_next_match_is_prestarted_and_a_match_without_its_bots_fails_alone(
    tmp_path: Path,
) -> None:
    """Three matches in a chain; the third's bots cannot be had (``resolve`` raises, as a
    bad bundle would). The second match's first half was launched while the first match
    played (``on_turn`` says so), the third fails each of its halves with the error (and,
    its prestart having failed, is not prestarted), every other half reports each game
    once, and no bot process is left. Control: the same matches each in a chain of its
    own are never prestarted."""
    bots = [load_bot(_bot_copy(tmp_path, "random", f"b{n}")) for n in range(4)]
    groups = _groups(bots)
    broken = bots[3].version

    def resolve(job: MatchJob) -> tuple[BotSpec, BotSpec]:
        if job.second.version == broken:
            raise FileNotFoundError(f"no bundle of {broken}")
        return job.first, job.second

    events: list[object] = []
    turns: list[tuple[int, bool]] = []

    def on_turn(group: tuple[MatchJob, ...], prestarted: bool) -> None:
        turns.append((group[0].match_id, prestarted))

    play_chain(groups, events.append, resolve=resolve, on_turn=on_turn, cpus=2)
    assert turns == [(1, False), (2, True), (3, False)]
    done = {(e.match_id, e.half): e.error for e in events if isinstance(e, JobDone)}
    assert sorted(done) == [(m, p) for m in (1, 2, 3) for p in (0, 1)]
    assert [done[(m, p)] for m in (1, 2) for p in (0, 1)] == [None] * 4
    assert all(f"no bundle of {broken}" in (done[(3, p)] or "") for p in (0, 1))
    games = sorted((e.match_id, e.report.index) for e in events if isinstance(e, GameFinished))
    assert games == [(1, 0), (1, 1), (2, 0), (2, 1)]
    for bot in bots:
        assert _processes_with(str(bot.directory)) == [], f"{bot.name} left processes"

    turns.clear()
    for group in groups[:2]:
        play_chain([group], events.append, on_turn=on_turn, cpus=2)
    assert turns == [(1, False), (2, False)]


Launch = tuple[str, tuple[int, ...], list[tuple[int, int]]]
"""(the second bot's name, the half's game indices, the games played when it launched)."""

AHEAD = [("b1", (0,), []), ("b1", (1,), []), ("b2", (0,), [(1, 0)]),
         ("b2", (1,), [(1, 0), (1, 1)])]  # fmt: skip
AT_ITS_TURN = [("b1", (0,), []), ("b1", (1,), [(1, 0)]), ("b2", (0,), [(1, 0), (1, 1)]),
               ("b2", (1,), [(1, 0), (1, 1), (2, 0)])]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    ("pinned", "options", "launches"),
    [
        (True, {}, AT_ITS_TURN),  # a Ray task on a one-CPU slot: its CPUs read after pinning
        (False, {"cpus": 1}, AT_ITS_TURN),  # a local worker pinned to one CPU
        (False, {"cpus": 2, "prestart": False}, AT_ITS_TURN),  # turned off for the executor
        (False, {"cpus": 2}, AHEAD),  # the control: a CPU to spare
    ],
)  # fmt: skip
def test_a_worker_on_one_cpu_launches_each_half_at_its_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pinned: bool, options: dict[str, Any],
    launches: list[Launch],
) -> None:  # fmt: skip
    """Two matches of two halves in a chain: with a CPU to spare each next half (the next
    match's first half too) is launched while the half before it plays; on one CPU, or
    with the prestart turned off, each half is launched once the games before it are over,
    and ``on_turn`` says the second match was not prestarted."""
    bots = [load_bot(_bot_copy(tmp_path, "random", f"b{n}")) for n in range(3)]
    events: list[object] = []
    seen: list[Launch] = []
    turns: list[tuple[int, bool]] = []

    def recording(config: MatchConfig, a: BotSpec, b: BotSpec, **kw: Any) -> StartedMatch:
        played = [(e.match_id, e.report.index) for e in events if isinstance(e, GameFinished)]
        seen.append((b.name, config.indices_to_play, played))
        return start_match(config, a, b, **kw)

    monkeypatch.setattr(arena.referee.halves, "start_match", recording)
    monkeypatch.setattr(arena.tournament.execution.match_chain, "start_match", recording)
    if launches is AHEAD:  # the overlap, forced: each launch ahead waits for a game meanwhile
        launches_ahead_overlap_play(
            monkeypatch, lambda: sum(isinstance(e, GameFinished) for e in events)
        )
    failed: list[BaseException] = []

    def play() -> None:
        if pinned:  # this thread only (and the threads and bots it starts)
            os.sched_setaffinity(0, {usable_cpus()[0]})
        try:
            play_chain(_groups(bots), events.append, on_turn=lambda group, prestarted:
                       turns.append((group[0].match_id, prestarted)), **options)  # fmt: skip
        except BaseException as error:
            failed.append(error)

    thread = threading.Thread(target=play, name="chain-under-test")
    thread.start()
    thread.join()
    assert failed == []
    assert seen == launches
    assert turns == [(1, False), (2, launches is AHEAD)]
    assert [e.error for e in events if isinstance(e, JobDone)] == [None] * 4
    for bot in bots:
        assert _processes_with(str(bot.directory)) == [], f"{bot.name} left processes"


@pytest.mark.slow
def test_a_remote_bots_match_is_not_prestarted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A match with a remote bot queued behind another in the chain: its seat is offered
    only once the match before it is over, not while that match's last half plays (its
    owner would be asked to serve two seats at once). Nobody takes the seat here: the
    remote bot forfeits its game on the Hello timeout, and the chain goes on."""
    local = [load_bot(_bot_copy(tmp_path, "random", f"b{n}")) for n in range(2)]
    (tmp_path / "far").mkdir()
    (tmp_path / "far" / "bot.toml").write_text('name = "far"\nruntime = "remote"\n')
    far = load_bot(tmp_path / "far")
    alone = MatchConfig(games=1, paired=False, hello_timeout_ms=1000, max_restarts=0)
    groups = [_groups(local)[0], (MatchJob(2, alone, local[0], far, live=False),)]
    events: list[object] = []
    seen: list[Launch] = []

    def recording(config: MatchConfig, a: BotSpec, b: BotSpec, **kw: Any) -> StartedMatch:
        played = [(e.match_id, e.report.index) for e in events if isinstance(e, GameFinished)]
        seen.append((b.name, config.indices_to_play, played))
        return start_match(config, a, b, **kw)

    monkeypatch.setattr(arena.referee.halves, "start_match", recording)
    monkeypatch.setattr(arena.tournament.execution.match_chain, "start_match", recording)
    play_chain(groups, events.append)
    assert [played for name, _, played in seen if name == "far"] == [[(1, 0), (1, 1)]]
    offers = [e for e in events if isinstance(e, SeatOffered)]
    assert [o.match_id for o in offers] == [2]
    last = next(n for n, e in enumerate(events) if isinstance(e, GameFinished) and e.match_id == 1
                and e.report.index == 1)  # fmt: skip
    assert events.index(offers[0]) > last, "the seat was offered while match 1 played"
    games = [e.report for e in events if isinstance(e, GameFinished) and e.match_id == 2]
    assert [g.statuses.get("far") for g in games] == [BotStatus.TIMEOUT]
    assert [e.error for e in events if isinstance(e, JobDone)] == [None] * 3
    for bot in local:
        assert _processes_with(str(bot.directory)) == [], f"{bot.name} left processes"
