"""Halves: no bot process plays both games of a paired deal.

``halves`` is checked on its own; then a real sandboxed match is played by
``run_halves`` with every message each process receives recorded: a process
is what one Welcome greets (the referee welcomes each launched process once),
and each process must see every deal at most once, in one seat -- its GameStart
indices and the deals of the GameOver records it receives never repeat.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import arena.referee.halves
import arena.referee.match
import arena.referee.slots
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee import BotSpec, BotStatus, MatchConfig, TimeControl
from arena.referee.endpoint import WireTap
from arena.referee.halves import half_configs, halves, play_in_turn, run_halves
from arena.referee.match import StartedMatch, start_match
from arena.referee.prestart import Prestart, decide_prestart
from arena.referee.types import GameReport, MatchReport
from arena.sandbox import BotProcess
from arena.testing.waiting import assert_stays, wait_until

from .conftest import MakeBot, assert_no_process_left, marker_of, processes_with

ON = decide_prestart(cpus=2)  # a worker with a CPU to spare
OFF = decide_prestart(cpus=1)


def test_halves_split_even_and_odd_indices_when_paired() -> None:
    assert halves(range(6), paired=True) == ((0, 2, 4), (1, 3, 5))
    assert halves((1, 2, 5), paired=True) == ((2,), (1, 5))
    assert halves((3,), paired=True) == ((3,),)
    assert halves(range(4), paired=False) == ((0, 1, 2, 3),)
    assert halves((), paired=True) == ()
    # a remote bot's owner can link its processes: its paired games stay one half
    assert halves(range(4), paired=True, remote=True) == ((0, 1, 2, 3),)


def test_no_half_holds_both_games_of_a_deal() -> None:
    for games in range(1, 12):
        config = MatchConfig(games=games)
        parts = half_configs(config)
        played = sorted(index for half in parts for index in half.indices_to_play)
        assert played == list(range(games))
        for half in parts:
            deals = [half.deal_index(index) for index in half.indices_to_play]
            assert len(deals) == len(set(deals))
    resumed = half_configs(MatchConfig(games=8, game_indices=(1, 3, 4, 7)))
    assert [half.indices_to_play for half in resumed] == [(4,), (1, 3, 7)]
    assert [half.indices_to_play for half in half_configs(MatchConfig(games=5, paired=False))] == [
        (0, 1, 2, 3, 4)
    ]


Process = tuple[int, int, int]  # (half, slot, nth Welcome of that slot in that half)


@pytest.mark.slow
def test_every_sandboxed_process_sees_each_deal_at_most_once(make_bot: MakeBot) -> None:
    bot_a, bot_b = make_bot("random", name="a"), make_bot("random", name="b")
    config = MatchConfig(games=8, time_control=TimeControl(2000, 2000))
    received: dict[int, list[tuple[int, bytes]]] = defaultdict(list)

    def tap_of(half: int) -> WireTap:
        return lambda slot, raw: received[half].append((slot, raw))

    order: list[int] = []
    report = run_halves(config, bot_a, bot_b, prestart=ON, wire_tap_of_half=tap_of,
                        on_game=lambda game: order.append(game.index))  # fmt: skip
    assert [game.index for game in report.games] == list(range(8))
    assert sorted(order) == list(range(8))
    assert all(game.reason != "forfeit" for game in report.games)
    assert sum(report.score.values()) == 8
    games_of: dict[Process, list[int]] = defaultdict(list)
    deals_of: dict[Process, list[str]] = defaultdict(list)
    welcomed: dict[Process, int] = {}
    match_over: dict[Process, int] = {}
    for half, messages in received.items():
        welcomes = [0, 0]
        for slot, raw in messages:
            message = referee_pb2.PlayResponse.FromString(raw)
            kind = message.WhichOneof("kind")
            if kind == "welcome":
                welcomes[slot] += 1
            process = (half, slot, welcomes[slot])
            if kind == "welcome":
                welcomed[process] = message.welcome.games
            elif kind == "game_start":
                games_of[process].append(message.game_start.game_index)
            elif kind == "game_over":
                deals_of[process].append(
                    json.dumps(json.loads(message.game_over.record_json)["deal"])
                )
            elif kind == "match_over":
                match_over[process] = message.match_over.games
    assert len(received) == 2
    assert len(welcomed) == 4, "one process per bot per half (none restarted)"
    for process, games in games_of.items():
        deals = [config.deal_index(index) for index in games]
        assert len(deals) == len(set(deals)), f"{process} was dealt a deal twice: {games}"
        assert len({index % 2 for index in games}) == 1, f"{process} played both halves"
        assert len(deals_of[process]) == len(set(deals_of[process])) == len(games)
        assert welcomed[process] == match_over[process] == len(games) == 4
    for slot in (0, 1):  # each bot played every game, across its two processes
        played = sorted(i for p, games in games_of.items() if p[1] == slot for i in games)
        assert played == list(range(8))
    records = {game.index: json.dumps(game.record["deal"]) for game in report.games}
    assert all(records[2 * k] == records[2 * k + 1] for k in range(4)), "deals still paired"


# ------------------------------------------------ failures around a prestart (play_in_turn)

IN_TURN = MatchConfig(games=4, time_control=TimeControl(2000, 2000), max_restarts=0)
Done = tuple[int, MatchReport | None, BaseException | None]


def _play_in_turn_within(
    limit_s: float,
    config: MatchConfig,
    bot_a: BotSpec,
    bot_b: BotSpec,
    **hooks: Callable[[GameReport], None],
) -> list[Done]:
    """``play_in_turn`` over the halves of ``config``, in a thread that must end in time."""
    done: list[Done] = []
    failed: list[BaseException] = []

    def play() -> None:
        try:
            play_in_turn(half_configs(config), bot_a, bot_b, prestart=ON,
                         on_done=lambda *outcome: done.append(outcome), **hooks)  # fmt: skip
        except BaseException as error:  # the test's thread reports it
            failed.append(error)

    thread = threading.Thread(target=play, name="in-turn")
    started = time.monotonic()
    thread.start()
    thread.join(limit_s)
    assert not thread.is_alive(), f"play_in_turn still running after {limit_s} s"
    assert failed == []
    assert time.monotonic() - started < limit_s
    return done


def _record_launches(monkeypatch: pytest.MonkeyPatch) -> list[StartedMatch]:
    """Every half ``play_in_turn`` launches, in the order it launches them."""
    launched: list[StartedMatch] = []

    def recording(*args: Any, **kwargs: Any) -> StartedMatch:
        launched.append(start_match(*args, **kwargs))
        return launched[-1]

    monkeypatch.setattr(arena.referee.halves, "start_match", recording)
    return launched


def _ahead_at_normal_weight(monkeypatch: pytest.MonkeyPatch) -> None:
    """Launch bots ahead of their turn at the normal CPU weight, not in the idle class: a
    test that waits for their Hellos ahead (``_ready_within``) would otherwise wait for
    good on a machine whose CPUs are all busy (the suite's other workers), where an idle
    group does not run at all until its turn."""
    launch = arena.referee.slots.launch_bot

    def normal_weight(*args: Any, **kwargs: Any) -> BotProcess:
        return launch(*args, **{**kwargs, "idle": False})

    monkeypatch.setattr(arena.referee.slots, "launch_bot", normal_weight)


def _ready_within(started: StartedMatch, within_s: float) -> None:
    """Wait until ``started``, launched ahead, has had each bot's Hello judged, failing
    after ``within_s`` (``wait_ready`` itself waits for good ahead of the turn)."""
    waiter = threading.Thread(target=started.wait_ready, daemon=True)
    waiter.start()
    wait_until(lambda: not waiter.is_alive(), "the Hellos said ahead of the turn", within_s)


def _judged_ahead(launched: list[StartedMatch], number: int, within_s: float) -> None:
    """Wait until half ``number``, launched ahead, has had each bot's Hello judged (said,
    or failed); called by the half before it while it plays (its ``on_game``)."""
    assert len(launched) > number, f"half {number} was not launched ahead: {len(launched)}"
    _ready_within(launched[number], within_s)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("behaviour", "hello_ms", "status", "judged_ahead"),
    [
        # its Hello allowance starts with its half's turn: judged once the half begins
        ("no_hello", 5000, BotStatus.TIMEOUT, False),
        # a Hello window long enough that a loaded machine still starts Python within it
        ("exit_before_hello", 15_000, BotStatus.CRASH, True),
    ],
)
def test_a_prestarted_bot_that_fails_its_hello_forfeits_its_half_and_leaves_nothing(
    make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch, behaviour: str, hello_ms: int,
    status: BotStatus, judged_ahead: bool,
) -> None:  # fmt: skip
    """Every process of bot B fails its Hello: the first half's while it is launched, the
    second half's while it is prestarted (the first half playing). Each half still ends
    with B forfeiting every game, A never blamed, and no process of either left.

    The overlap, forced: the second half's launch begins once the first half's first
    game has ended, and that game's end is not reported (its ``on_game`` waits) until
    the second half's Hellos have been judged (where they are judged ahead: a crash; a
    silent bot's allowance runs from its half's turn)."""
    good, broken = make_bot("random", name="good"), make_bot(behaviour, name="broken")
    config = dataclasses.replace(IN_TURN, hello_timeout_ms=hello_ms)
    launched = _record_launches(monkeypatch)
    if judged_ahead:
        _ahead_at_normal_weight(monkeypatch)
    ended: list[int] = []
    launches_ahead_overlap_play(monkeypatch, lambda: len(ended))
    limit_s = 2 * hello_ms / 1000 + 30

    def first_half_playing(game: GameReport) -> None:
        ended.append(game.index)
        if game.index == 0 and judged_ahead:
            _judged_ahead(launched, 1, limit_s)

    done = _play_in_turn_within(limit_s, config, good, broken, on_game=first_half_playing)
    assert [(number, error) for number, _, error in done] == [(0, None), (1, None)]
    games = sorted((g for _, report, _ in done if report for g in report.games),
                   key=lambda g: g.index)  # fmt: skip
    assert [g.index for g in games] == [0, 1, 2, 3]
    for game in games:
        assert (game.statuses["broken"], game.statuses["good"]) == (status, BotStatus.OK)
        assert (game.winner, game.reason) == ("good", "forfeit")
    assert_no_process_left(good, broken)


@pytest.mark.slow
def test_a_half_that_fails_while_the_next_waits_is_reported_and_the_next_still_plays(
    make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first half fails under the caller (its on_game raises, as a store write that
    fails would) while the second half's processes wait, prestarted: the failure is that
    half's ``on_done``, its processes are killed, and the second half plays in full.

    The overlap, forced: the second half's launch begins once the first half's first
    game has ended, and the failure is raised only once the second half's bots have
    said Hello."""
    bot_a, bot_b = make_bot("random", name="a"), make_bot("random", name="b")
    seen: list[int] = []
    launched = _record_launches(monkeypatch)
    _ahead_at_normal_weight(monkeypatch)
    launches_ahead_overlap_play(monkeypatch, lambda: len(seen))

    def on_game(game: GameReport) -> None:
        seen.append(game.index)
        if game.index == 0:
            _judged_ahead(launched, 1, 30.0)
            raise OSError("the store could not be written")

    done = _play_in_turn_within(40.0, IN_TURN, bot_a, bot_b, on_game=on_game)
    assert [number for number, _, _ in done] == [0, 1]
    (_, first, error), (_, second, second_error) = done
    assert first is None and isinstance(error, OSError)
    assert second is not None and second_error is None
    assert [g.index for g in second.games] == [1, 3]
    assert all(set(g.statuses.values()) == {BotStatus.OK} for g in second.games)
    assert seen == [0, 1, 3]  # game 2 of the failed half was never played
    assert_no_process_left(bot_a, bot_b)


@pytest.mark.slow
def test_a_caller_that_gives_up_after_the_first_half_leaves_no_prestarted_process(
    make_bot: MakeBot,
) -> None:
    """``on_done`` raises for the first half (a runner stopping): ``play_in_turn`` raises it
    at once, and the second half's prestarted processes are killed, never played."""
    bot_a, bot_b = make_bot("random", name="a"), make_bot("random", name="b")
    played: list[int] = []

    def give_up(number: int, report: MatchReport | None, error: BaseException | None) -> None:
        raise KeyboardInterrupt(f"stopped after half {number}")

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt, match="stopped after half 0"):
        play_in_turn(half_configs(IN_TURN), bot_a, bot_b, prestart=ON, on_done=give_up,
                     on_game=lambda game: played.append(game.index))  # fmt: skip
    assert played == [0, 2]
    assert time.monotonic() - started < 40
    assert_no_process_left(bot_a, bot_b)


# ------------------------------------------ a worker's next match (first= and then=)


def launches_ahead_overlap_play(
    monkeypatch: pytest.MonkeyPatch, games_ended: Callable[[], int]
) -> None:
    """Hold every launch after the first (each one launched ahead of its turn, where this
    is used) until a game has ended since it was asked for (``games_ended()`` grew): its
    bots start while the half before it plays. A launch that held up its caller until
    its bots were ready would wait here for good, and fail its half."""
    start = arena.referee.match._Match.start
    launches = itertools.count()

    def overlapping(match: Any) -> None:
        if next(launches):
            ended = games_ended()
            wait_until(lambda: games_ended() > ended, "a game played while this launch waits",
                       60)  # fmt: skip
        start(match)

    monkeypatch.setattr(arena.referee.match._Match, "start", overlapping)


@pytest.mark.slow
def test_the_next_match_launches_while_the_last_half_plays_and_plays_from_that_prestart(
    make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``then`` launches the worker's next match (A against C) once the last half of the
    current one (A against B) is ready: before that half's games, after the first half's;
    the next call plays it from there (``first``), and no process is left. Were ``first``
    ignored, its prestarted processes would be left running (the last assertion).

    The overlap, forced: every launch ahead of its turn (each second half, the next
    match's first) is not begun until a game of the half playing meanwhile has ended."""
    bot_a, bot_b, bot_c = (make_bot("random", name=name) for name in ("a", "b", "c"))
    played: list[int] = []
    launches_ahead_overlap_play(monkeypatch, lambda: len(played))
    seen_at_launch: list[list[int]] = []
    done: list[Done] = []

    def launch_next() -> StartedMatch:
        seen_at_launch.append(list(played))
        return start_match(half_configs(IN_TURN)[0], bot_a, bot_c)  # its first half

    waiting = play_in_turn(half_configs(IN_TURN), bot_a, bot_b, prestart=ON,
                           on_done=lambda *outcome: done.append(outcome),
                           on_game=lambda game: played.append(game.index),
                           then=launch_next)  # fmt: skip
    assert seen_at_launch == [[0, 2]], "launched while the last half (games 1, 3) plays"
    assert isinstance(waiting, StartedMatch)
    assert played == [0, 2, 1, 3]
    nothing = play_in_turn(half_configs(IN_TURN), bot_a, bot_c, prestart=ON, first=waiting,
                           on_done=lambda *outcome: done.append(outcome),
                           on_game=lambda game: played.append(game.index))  # fmt: skip
    assert nothing is None
    assert [(number, error) for number, _, error in done] == [(0, None), (1, None)] * 2
    second = [g for _, report, _ in done[2:] if report for g in report.games]
    assert sorted(g.index for g in second) == [0, 1, 2, 3]
    assert all(set(g.statuses) == {"a", "c"} for g in second)
    assert all(set(g.statuses.values()) == {BotStatus.OK} for g in second)
    assert_no_process_left(bot_a, bot_b, bot_c)


@pytest.mark.slow
def test_a_caller_that_gives_up_in_the_last_half_leaves_no_next_match_process(
    make_bot: MakeBot,
) -> None:
    """``on_done`` raises for the last half (a runner stopping) after ``then`` launched the
    next match: ``play_in_turn`` raises, and that prestart is killed, never returned."""
    bot_a, bot_b, bot_c = (make_bot("random", name=name) for name in ("a", "b", "c"))
    launched: list[StartedMatch] = []

    def launch_next() -> StartedMatch:
        launched.append(start_match(half_configs(IN_TURN)[0], bot_a, bot_c))
        return launched[-1]

    def give_up(number: int, report: MatchReport | None, error: BaseException | None) -> None:
        if number == 1:
            raise KeyboardInterrupt("stopped after the last half")

    with pytest.raises(KeyboardInterrupt, match="stopped after the last half"):
        play_in_turn(half_configs(IN_TURN), bot_a, bot_b, prestart=ON, on_done=give_up,
                     then=launch_next)
    assert len(launched) == 1
    assert_no_process_left(bot_a, bot_b, bot_c)


@pytest.mark.slow
@pytest.mark.parametrize(("prestart", "seen"), [(ON, [[], []]), (OFF, [[], [0, 2]])])
def test_without_a_prestart_each_half_launches_at_its_turn(
    make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch, prestart: Prestart, seen: list[list[int]]
) -> None:
    """A worker with one CPU (``OFF``) launches the second half's processes once the first
    half's games are over, not while they play; the control (``ON``) launches the second
    half before the first one's games. ``then`` is the caller's decision (the next
    match's prestart): given, it is launched either way, during the last half."""
    bot_a, bot_b = (make_bot("random", name=name) for name in ("a", "b"))
    played: list[int] = []
    seen_at_launch: list[list[int]] = []
    followed: list[list[int]] = []

    def recording(*args: Any, **kwargs: Any) -> StartedMatch:
        seen_at_launch.append(list(played))
        return start_match(*args, **kwargs)

    def launch_next() -> StartedMatch:
        followed.append(list(played))
        return start_match(half_configs(IN_TURN)[0], bot_a, bot_b)

    monkeypatch.setattr(arena.referee.halves, "start_match", recording)
    done: list[Done] = []
    waiting = play_in_turn(half_configs(IN_TURN), bot_a, bot_b, prestart=prestart,
                           on_done=lambda *outcome: done.append(outcome),
                           on_game=lambda game: played.append(game.index),
                           then=launch_next)  # fmt: skip
    if isinstance(waiting, StartedMatch):
        waiting.close()
    assert seen_at_launch == seen
    assert followed == [[0, 2]]
    assert played == [0, 2, 1, 3]
    assert [(number, error) for number, _, error in done] == [(0, None), (1, None)]
    assert_no_process_left(bot_a, bot_b)


@pytest.mark.slow
def test_without_a_prestart_no_process_of_the_last_half_runs_beside_the_next(
    make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that stays after its MatchOver holds every deal of its half, the deals
    the next half plays in the other seats: launched while it still ran (its moment to
    exit), the next half's process of the same bot could learn them through what the
    machine shares (the page cache of files both read, free memory), which no sandbox
    hides. So without a prestart the next half launches once the last one's processes
    are gone."""
    lingering, good = make_bot("linger", name="lingering"), make_bot("random", name="good")
    left_at_launch: list[list[int]] = []

    def recording(*args: Any, **kwargs: Any) -> StartedMatch:
        left_at_launch.append(processes_with(marker_of(lingering)))
        return start_match(*args, **kwargs)

    monkeypatch.setattr(arena.referee.halves, "start_match", recording)
    done: list[Done] = []
    play_in_turn(half_configs(IN_TURN), lingering, good, prestart=OFF,
                 on_done=lambda *outcome: done.append(outcome))  # fmt: skip
    assert [(number, error) for number, _, error in done] == [(0, None), (1, None)]
    assert left_at_launch == [[], []]
    assert_no_process_left(lingering, good)


@pytest.mark.slow
def test_arena_match_without_a_prestart_plays_its_halves_one_after_the_other(
    make_bot: MakeBot,
) -> None:
    """``run_halves`` with ``OFF`` (`arena match` on one CPU) launches the odd half only
    once the even half's games are over; the control (``ON``) launches it while they play."""
    bot_a, bot_b = (make_bot("random", name=name) for name in ("a", "b"))
    for prestart, launched_after in ((OFF, [0, 2]), (ON, [])):
        played: list[int] = []
        seen: list[int] = []

        def tap_of(half: int, played: list[int] = played, seen: list[int] = seen) -> WireTap:
            if half == 1:
                seen.extend(played)  # the odd half's launch: what was played by then
            return lambda slot, raw: None

        report = run_halves(IN_TURN, bot_a, bot_b, prestart=prestart, wire_tap_of_half=tap_of,
                            on_game=lambda game, played=played: played.append(game.index))
        assert sorted(game.index for game in report.games) == [0, 1, 2, 3]
        if prestart.on:  # launched once the even half was ready, before its games ended
            assert len(seen) < 2, f"the odd half launched after {seen}"
        else:
            assert seen == launched_after
    assert_no_process_left(bot_a, bot_b)


def _cpu_ms(marker: str) -> float:
    """CPU time (user and system) used so far by the live processes carrying ``marker``."""
    ticks = 0
    for pid in processes_with(marker):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue  # ended meanwhile
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


@pytest.mark.slow
def test_a_bot_launched_ahead_runs_nothing_until_its_half_plays(
    make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A half launched ahead of its turn waits while the half before it plays, on CPUs the
    players may share: a bot that spins meanwhile (six children, from its Welcome) is
    frozen once it has said Hello, and runs again, and plays in full, when its half does.
    Launched at the normal weight, the spinner would spin on a busy machine too, unfrozen."""
    _ahead_at_normal_weight(monkeypatch)
    spinner, good = make_bot("cpu_spinner", name="spinner"), make_bot("random", name="good")
    started = start_match(half_configs(IN_TURN)[1], spinner, good)
    try:
        _ready_within(started, 60)
        before = _cpu_ms(marker_of(spinner))
        assert_stays(
            lambda: _cpu_ms(marker_of(spinner)) - before < 100,
            1.0,
            "the waiting spinner using no CPU",
            state=lambda: _cpu_ms(marker_of(spinner)) - before,
        )
        report = started.run()
    finally:
        started.close()
    assert [game.index for game in report.games] == [1, 3]
    for game in report.games:
        assert set(game.statuses.values()) == {BotStatus.OK}, game.record["match"]
    assert_no_process_left(spinner, good)


@pytest.mark.slow
@pytest.mark.parametrize("ponder", [False, True], ids=["freezer", "ponder"])
def test_a_bot_ready_first_runs_nothing_while_its_opponent_starts_up(
    make_bot: MakeBot, ponder: bool
) -> None:
    """A bot's start-up is charged to it, so the bot that said Hello first is frozen until
    the other has too: a spinner (six children, from its Welcome) beside a bot that takes
    20 s to say Hello uses no CPU meanwhile. With ``ponder`` (the freezer off: the
    control) it spins."""
    spinner = make_bot("cpu_spinner", name="spinner")
    slow = make_bot("slow_hello", "20", name="slow")
    config = dataclasses.replace(IN_TURN, hello_timeout_ms=60_000, ponder=ponder)
    started = start_match(config, spinner, slow)
    started.its_turn()
    slots = started._match.slots
    try:
        wait_until(lambda: slots[0].ready, "the spinner's Hello", 60)
        if ponder:
            before = _cpu_ms(marker_of(spinner))
            wait_until(lambda: _cpu_ms(marker_of(spinner)) - before > 300,
                       "the pondering spinner using CPU", 30)  # fmt: skip
        else:
            wait_until(lambda: 0 in started._match.freezer._frozen, "the spinner held", 30)
            before = _cpu_ms(marker_of(spinner))
            assert_stays(lambda: _cpu_ms(marker_of(spinner)) - before < 50, 1.0,
                         "the held spinner using no CPU",
                         state=lambda: _cpu_ms(marker_of(spinner)) - before)  # fmt: skip
        assert not slots[1].ready, "the slow bot said Hello within the check"
    finally:
        for process in _processes(started):
            process.kill()
        started.close()
    assert_no_process_left(spinner, slow)


def _processes(started: StartedMatch) -> list[BotProcess]:
    """The match's bots launched so far."""
    processes = [slot.process for slot in started._match.slots]
    return [process for process in processes if isinstance(process, BotProcess)]


def _cpu_of(started: StartedMatch) -> float:
    """CPU time of the match's bots so far, from their cgroups."""
    return sum(process.cpu_time_ms() or 0.0 for process in _processes(started))


@pytest.mark.slow
def test_a_bot_launched_ahead_starts_up_only_on_cpu_no_playing_bot_wants(
    make_bot: MakeBot,
) -> None:
    """Before its Hello, a bot launched ahead of its turn runs in the idle scheduling class:
    bots that spin in their start-up for ever, launched ahead, take next to nothing of one
    CPU from two spinning bots whose turn has come (standing for a half being played); once
    their own turn comes (the control), they take their share. Every launch is pinned to
    one CPU, and the shares are the bots' cgroups' CPU time."""
    config = dataclasses.replace(half_configs(IN_TURN)[0], hello_timeout_ms=300_000)
    spin = [make_bot("spin_before_hello", name=f"spin-{n}") for n in range(4)]
    affinity = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(affinity)})  # the launches below inherit it: one CPU
    try:
        playing = start_match(config, spin[0], spin[1])
        playing.its_turn()
        ahead = start_match(config, spin[2], spin[3])
    finally:
        os.sched_setaffinity(0, affinity)
    try:
        for started in (playing, ahead):
            wait_until(lambda s=started: len(_processes(s)) == 2 and _cpu_of(s) > 0,
                       "both bots launched and running", 60)  # fmt: skip

        def shares(least_ms: float) -> tuple[float, float]:
            """Each match's CPU time until the playing bots have used ``least_ms`` more."""
            before = _cpu_of(playing), _cpu_of(ahead)
            wait_until(lambda: _cpu_of(playing) - before[0] >= least_ms,
                       f"the playing bots using {least_ms} ms of CPU", 120)  # fmt: skip
            return _cpu_of(playing) - before[0], _cpu_of(ahead) - before[1]

        used, taken = shares(1500)  # without the idle class: as much as the playing bots;
        # with it, next to nothing on a quiet machine, up to about a tenth beside a loaded one
        assert taken < 0.25 * used, f"launched ahead: {taken:.0f} ms beside {used:.0f} ms"
        ahead.its_turn()
        used, taken = shares(1500)
        assert taken > 0.5 * used, f"its turn come: {taken:.0f} ms beside {used:.0f} ms"
    finally:
        for started in (playing, ahead):
            for process in _processes(started):
                process.kill()  # never says Hello: no waiting out its allowance
            started.close()
    assert_no_process_left(*spin)


@pytest.mark.slow
def test_a_start_up_ahead_of_its_turn_is_not_charged_nor_timed(
    make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot launched ahead that takes longer than its Hello allowance to start, all of it
    before its half's turn, is neither timed out nor charged a start-up (nobody waited for
    it); launched at its turn it would be (``test_broken_bots``: the charge)."""
    _ahead_at_normal_weight(monkeypatch)
    slow, good = make_bot("slow_hello", "2", name="slow"), make_bot("random", name="good")
    config = dataclasses.replace(half_configs(IN_TURN)[1], hello_timeout_ms=1000)
    started = start_match(config, slow, good)
    try:
        _ready_within(started, 60)  # Hellos said ahead of its turn, after more than the allowance
        report = started.run()
    finally:
        started.close()
    first, second = report.games
    assert set(first.statuses.values()) == {BotStatus.OK}, first.record["match"]
    assert (dict(first.startup_ms), dict(second.startup_ms)) == ({}, {})
    assert_no_process_left(slow, good)


@pytest.mark.slow
def test_closing_a_launch_ahead_waits_for_no_hello(make_bot: MakeBot) -> None:
    """A half launched ahead and closed before its turn (its caller gave up) waits for no
    Hello: its silent bot is killed at once, not after its Hello allowance."""
    silent, good = make_bot("no_hello", name="silent"), make_bot("random", name="good")
    config = dataclasses.replace(half_configs(IN_TURN)[1], hello_timeout_ms=300_000)
    started = start_match(config, silent, good)
    closing = threading.Thread(target=started.close, daemon=True)
    try:
        wait_until(lambda: len(_processes(started)) == 2, "both bots launched", 60)
        closing.start()
        wait_until(lambda: not closing.is_alive(), "the half closed", 60)
    except BaseException:
        for process in _processes(started):
            process.kill()  # the close that waits ends with them
        raise
    assert_no_process_left(silent, good)
