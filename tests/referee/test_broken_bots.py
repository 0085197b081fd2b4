"""Deliberately broken bots against a well-behaved one, in real sandboxes.

Each case: the match finishes, the broken bot gets the right status in each
game, the good bot is never blamed, every record replays, and no process of
either bot is left on the machine.
"""

from __future__ import annotations

import itertools
import json
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from arena.kahuna import parse_record, replay
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee import BotSpec, BotStatus, MatchConfig, MatchReport, TimeControl, run_match
from arena.referee.endpoint import NOT_SERVED
from arena.referee.freezer import BUSY_CPU_MS, BUSY_LEVEL_MS, BUSY_SHARE
from arena.referee.live import ActionApplied
from arena.referee.seeds import secret_from_seed
from arena.sandbox import SandboxLimits
from arena.sandbox.cgroups import own_cgroup_paths, parse_keyed

from .conftest import MakeBot, assert_no_process_left, marker_of, processes_with

pytestmark = pytest.mark.slow

OK = BotStatus.OK
TIMEOUT = BotStatus.TIMEOUT
CRASH = BotStatus.CRASH
VIOLATION = BotStatus.PROTOCOL_VIOLATION
MALFORMED = BotStatus.MALFORMED_MESSAGE
ILLEGAL = BotStatus.ILLEGAL_ACTION

CONFIG = MatchConfig(
    games=2,
    seed=11,
    time_control=TimeControl(action_ms=1500, bank_ms=1000),
    limits=SandboxLimits(memory_mb=160, max_processes=32),
    max_restarts=1,
    hello_timeout_ms=4000,
)
# A bot filling its memory limit is killed only once the kernel finds nothing more to
# reclaim: it evicts the interpreter's own file pages first, which under load takes
# seconds of the bot's clock. The clock is roomy so that the limit, not the clock, ends it.
ROOMY = replace(CONFIG, time_control=TimeControl(action_ms=30_000, bank_ms=1000))


@dataclass(frozen=True)
class Case:
    behaviour: str
    statuses: tuple[BotStatus, BotStatus]  # of the broken bot in games 0 and 1
    args: Callable[[Path, BotSpec], list[str]] = lambda tmp, good: []
    config: MatchConfig = CONFIG


CASES = [
    Case("sleep_forever", (TIMEOUT, TIMEOUT)),
    Case("no_hello", (TIMEOUT, TIMEOUT)),
    Case("late_once", (TIMEOUT, OK), lambda tmp, good: ["3.0"]),
    Case("exit_midgame", (CRASH, CRASH)),
    Case("garbage_stdout", (OK, OK)),
    Case("malformed_bytes", (MALFORMED, MALFORMED)),
    Case("malformed_action", (MALFORMED, MALFORMED)),
    Case("illegal", (ILLEGAL, ILLEGAL)),
    Case("oversized", (VIOLATION, VIOLATION)),
    Case("out_of_turn", (VIOLATION, VIOLATION)),
    Case("stale_id", (VIOLATION, VIOLATION)),
    Case("flood", (VIOLATION, VIOLATION)),
    Case("forged_token", (VIOLATION, VIOLATION)),
    Case("second_stream", (VIOLATION, VIOLATION)),
    Case("unknown_method_flood", (VIOLATION, VIOLATION)),
    Case("memory_hog", (CRASH, CRASH), config=ROOMY),
    Case("fork_bomb", (OK, OK)),
    Case("daemon", (OK, OK)),
    Case(
        "write_outside",
        (OK, OK),
        lambda tmp, good: [str(tmp / "escaped.txt"), str(good.directory / "escaped.txt")],
    ),
    Case("read_other", (OK, OK), lambda tmp, good: [str(good.directory / "bot.toml")]),
]


def _play(make_bot: MakeBot, tmp_path: Path, case: Case) -> tuple[MatchReport, BotSpec, BotSpec]:
    good = make_bot("random", name="good")
    broken = make_bot(case.behaviour, *case.args(tmp_path, good), name="broken")
    report = run_match(case.config, broken, good)
    return report, broken, good


@pytest.mark.parametrize("case", CASES, ids=[case.behaviour for case in CASES])
def test_broken_bot_is_contained(make_bot: MakeBot, tmp_path: Path, case: Case) -> None:
    report, broken, good = _play(make_bot, tmp_path, case)
    statuses = tuple(game.statuses["broken"] for game in report.games)
    assert statuses == case.statuses, [game.record["match"] for game in report.games]
    if case.behaviour != "memory_hog":  # a failure names a memory limit only when it is hit
        details = [f["detail"] for g in report.games for f in g.record["match"]["failures"]]  # type: ignore[index]
        assert not any("memory" in detail for detail in details), details
    for game in report.games:
        assert game.statuses["good"] is OK
        if game.statuses["broken"] is not OK:
            assert game.winner == "good" and game.reason == "forfeit"
            assert "result" not in game.record
        record = parse_record(json.dumps(game.record))
        assert replay(record).error is None
    assert_no_process_left(broken, good)
    assert not (tmp_path / "escaped.txt").exists()
    assert not (good.directory / "escaped.txt").exists()


def test_tcp_connection_never_reaches_the_host(make_bot: MakeBot) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        port = listener.getsockname()[1]
        good = make_bot("random", name="good")
        broken = make_bot("tcp", str(port), name="broken")
        report = run_match(CONFIG, broken, good)
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert [game.statuses["broken"] for game in report.games] == [OK, OK]
    assert_no_process_left(broken, good)


def test_a_flood_of_unknown_methods_is_a_protocol_violation_that_names_them(
    make_bot: MakeBot,
) -> None:
    good = make_bot("random", name="good")
    broken = make_bot("unknown_method_flood", name="broken")
    report = run_match(CONFIG, broken, good)
    for game in report.games:
        assert game.statuses == {"broken": VIOLATION, "good": OK}
        (failure,) = game.record["match"]["failures"]  # type: ignore[index]
        assert NOT_SERVED in failure["detail"]
        assert "Peek" not in failure["detail"]  # the bot's text stays out of the record
    assert_no_process_left(broken, good)


def test_a_single_unknown_call_is_a_protocol_violation(make_bot: MakeBot) -> None:
    """One call at its Welcome and no more: the protocol has no use for any other
    method, and each refused call costs the thread that serves the opponent as much as
    a fast bot's decision, so there is no allowance (not even 8 at once and 1 a
    second)."""
    good = make_bot("random", name="good")
    once = make_bot("unknown_method_flood", "0.001", "1", name="once")
    report = run_match(CONFIG, once, good)
    for game in report.games:
        assert game.statuses == {"once": VIOLATION, "good": OK}
    assert_no_process_left(once, good)


def test_fork_bomb_stays_under_the_process_limit(make_bot: MakeBot) -> None:
    good = make_bot("random", name="good")
    broken = make_bot("fork_bomb", name="broken")
    counts: list[int] = []
    run_match(CONFIG, broken, good, on_game=lambda game: counts.append(
        len(processes_with(broken.command[2]))
    ))
    assert 0 < max(counts) <= CONFIG.limits.max_processes
    assert_no_process_left(broken, good)


def test_a_bot_killed_for_its_memory_is_told_the_limit(make_bot: MakeBot) -> None:
    """Its exit status alone (137) says nothing its author can act on."""
    good = make_bot("random", name="good")
    hog = make_bot("memory_hog", name="hog")
    report = run_match(ROOMY, hog, good)
    for game in report.games:
        (failure,) = game.record["match"]["failures"]  # type: ignore[index]
        assert failure["status"] == CRASH.value
        assert "(killed by SIGKILL); out of memory: the sandbox's limit is 160 MiB" in (
            failure["detail"]
        ), failure
    assert_no_process_left(hog, good)


def test_the_bank_pays_for_a_slow_action(make_bot: MakeBot) -> None:
    """1.9 s against a 1.5 s limit: no timeout, about 0.4 s leaves the bank."""
    good = make_bot("random", name="good")
    slow = make_bot("late_once", "1.9", name="slow")
    report = run_match(replace(CONFIG, games=1), slow, good)
    game = report.games[0]
    assert game.statuses == {"slow": OK, "good": OK}
    bank_left_ms = game.record["match"]["bank_left_ms"][0]  # type: ignore[index]
    assert 1000 - 700 < bank_left_ms < 1000 - 390
    assert game.time_ms["slow"] >= 1900
    assert_no_process_left(slow, good)


def test_a_crash_reports_the_end_of_the_bots_stderr_to_its_owner_only(make_bot: MakeBot) -> None:
    good = make_bot("random", name="good")
    broken = make_bot("raise_error", name="broken")
    report = run_match(CONFIG, broken, good)
    for game in report.games:
        assert game.statuses["broken"] is CRASH
        failure = game.record["match"]["failures"][0]  # type: ignore[index]
        assert failure["detail"] == "process exited with status 1"
        assert "RuntimeError: the bot's own bug" in game.stderr["broken"]
        assert "good" not in game.stderr
    assert_no_process_left(broken, good)


def test_a_crash_report_keeps_the_first_lines_of_stderr_as_well_as_the_last(
    make_bot: MakeBot,
) -> None:
    good = make_bot("random", name="good")
    broken = make_bot("panic", name="broken")
    report = run_match(replace(CONFIG, games=1), broken, good)
    kept = report.games[0].stderr["broken"]
    lines = kept.splitlines()
    assert lines[0] == "panic: runtime error: index out of range [5] with length 5"  # the cause
    assert "[...]" in lines and lines[-1] == "exit status 2"
    assert len(kept) <= 2 * 300 + 10
    assert_no_process_left(broken, good)


def test_a_bots_stderr_never_reaches_its_opponent(make_bot: MakeBot) -> None:
    secret = f"secret-{uuid.uuid4().hex}"
    good = make_bot("random", name="good")
    leaky = make_bot("leak_and_crash", secret, name="leaky")
    wire: list[tuple[int, bytes]] = []
    config = replace(CONFIG, games=2)
    report = run_match(config, leaky, good, wire_tap=lambda slot, raw: wire.append((slot, raw)))
    to_good = [referee_pb2.PlayResponse.FromString(raw) for slot, raw in wire if slot == 1]
    kinds = [message.WhichOneof("kind") for message in to_good]
    assert kinds.count("game_over") == 2 and "match_over" in kinds
    assert all(secret not in str(message) for message in to_good)
    assert all(secret.encode() not in raw for _, raw in wire)
    for game in report.games:
        assert game.statuses["leaky"] is CRASH
        assert game.actions > 0
        assert secret not in json.dumps(game.record)
        assert game.record["match"]["failures"][0]["detail"] == (  # type: ignore[index]
            "process exited with status 1"
        )
        assert secret in game.stderr["leaky"]
    assert_no_process_left(leaky, good)


def test_a_bot_that_keeps_dying_forfeits_the_rest(make_bot: MakeBot) -> None:
    good = make_bot("random", name="good")
    broken = make_bot("exit_midgame", name="broken")
    config = MatchConfig(games=4, seed=3, time_control=CONFIG.time_control, max_restarts=1)
    report = run_match(config, broken, good)
    assert [game.statuses["broken"] for game in report.games] == [CRASH] * 4
    assert [game.actions > 0 for game in report.games] == [True, True, False, False]
    assert "restart limit" in report.games[3].record["match"]["failures"][0]["detail"]
    assert report.score == {"broken": 0.0, "good": 4.0}
    assert_no_process_left(broken, good)


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (["python3", "bot.py", "a" * 200_000], "cannot be launched: Argument list too long"),
        (["/no/such/program"], ""),
    ],
    ids=["200KB-argument", "no-such-program"],
)
def test_a_command_that_cannot_be_launched_is_that_bots_crash(
    make_bot: MakeBot, command: list[str], words: str
) -> None:
    """Not the match's failure: the other bot wins every game by forfeit."""
    good = make_bot("random", name="good")
    broken = replace(make_bot("random", name="broken"), command=tuple(command))
    report = run_match(CONFIG, broken, good)  # a stored bot from before the bound, say
    assert [game.statuses["broken"] for game in report.games] == [CRASH, CRASH]
    for game in report.games:
        assert game.statuses["good"] is OK and game.winner == "good"
        failures = game.record["match"]["failures"]  # type: ignore[index]
        assert any(words in f["detail"] for f in failures), failures  # type: ignore[index]
    assert_no_process_left(good)


def _group_files(marker: str) -> tuple[Path, Path]:
    """The freezer state file and the CPU usage file of the bot with ``marker``."""
    pid = processes_with(marker)[0]
    paths = own_cgroup_paths(Path(f"/proc/{pid}/cgroup").read_text())
    root = Path("/sys/fs/cgroup")
    if "freezer" in paths:
        freezer = root / "freezer" / paths["freezer"].lstrip("/") / "freezer.state"
        return freezer, root / "cpuacct" / paths["cpuacct"].lstrip("/") / "cpuacct.usage"
    group = root / paths[""].lstrip("/")
    return group / "cgroup.events", group / "cpu.stat"


def _frozen(state_file: Path) -> bool:
    """Frozen, or being frozen: the referee waits at most FREEZE_TIMEOUT_S for v1's
    FREEZING to become FROZEN, and on a loaded machine the sample can come first.
    Whether a frozen bot really stops is what the CPU assertions check."""
    text = state_file.read_text()
    if state_file.name == "freezer.state":
        return text.strip() in ("FROZEN", "FREEZING")
    return "frozen 1" in text


def _cpu_ms(usage_file: Path) -> float:
    text = usage_file.read_text()
    if usage_file.name == "cpuacct.usage":
        return int(text) / 1e6
    return parse_keyed(text)["usage_usec"] / 1000


@dataclass
class Sample:
    game: int
    spinner_moved: bool
    frozen: bool
    cpu_ms: float
    at_s: float


SPINNER_CONFIG = replace(
    CONFIG,
    limits=SandboxLimits(memory_mb=160, max_processes=64),
    secret=secret_from_seed(5),
)
"""Six children and gRPC's threads need more than 32 tasks; a fixed secret, so the
deals (and so which seat's move ends each game) are the same in every run."""


def _watch_spinner(
    config: MatchConfig,
    make_bot: MakeBot,
    behaviour: str = "spinner",
    *args: str,
    good: tuple[str, ...] = ("random",),
) -> tuple[MatchReport, list[Sample]]:
    """Play a spinner (``behaviour`` with ``args``) against a good bot (``good``: its
    behaviour and args); after every action, whether the spinner's group is frozen and
    how much CPU it has used (read from its cgroup files)."""
    good_bot = make_bot(*good, name="good")
    spinner = make_bot(behaviour, *args, name="spinner")
    samples: list[Sample] = []
    files: list[tuple[Path, Path, int]] = []

    def on_event(event: object) -> None:
        if not isinstance(event, ActionApplied):
            return
        if not files or event.game_index != files[0][2]:  # a crashed bot is relaunched
            files[:] = [(*_group_files(marker_of(spinner)), event.game_index)]
        state_file, usage_file, _ = files[0]
        spinner_seat = event.game_index % 2  # bot A: seat 0 in even games
        samples.append(Sample(
            event.game_index, event.seat == spinner_seat, _frozen(state_file),
            _cpu_ms(usage_file), time.monotonic(),
        ))  # fmt: skip

    report = run_match(config, spinner, good_bot, on_event=on_event)
    assert_no_process_left(spinner, good_bot)
    return report, samples


def _opponent_turns(samples: list[Sample]) -> tuple[float, float]:
    """CPU ms the spinner used, and wall ms, over stretches where only the good bot moved."""
    cpu_ms = wall_ms = 0.0
    for before, after in itertools.pairwise(samples):
        if before.game == after.game and not before.spinner_moved and not after.spinner_moved:
            cpu_ms += after.cpu_ms - before.cpu_ms
            wall_ms += (after.at_s - before.at_s) * 1000
    return cpu_ms, wall_ms


def _once_seen(samples: list[Sample], *, launch_per_game: bool) -> list[Sample]:
    """``samples`` of each launch of the spinner from the first in which it is frozen on:
    before, the freezer is still watching it (it must use enough of its opponent's
    time, over a few runs of the opponent's moves, to be seen busy)."""
    kept: list[Sample] = []
    seen: set[int] = set()  # launches (games, or the one match) seen frozen
    for sample in samples:
        launch = sample.game if launch_per_game else 0
        if sample.frozen:
            seen.add(launch)
        if launch in seen:
            kept.append(sample)
    return kept


FROZEN_SHARE = 0.01
"""The spinner's CPU on its opponent's turns, as a share of their wall time, that a
frozen spinner stays under (it measures 0 ms: its tasks stop before running more of its
code) and the unfrozen control exceeds even on a loaded machine."""


def test_a_spinning_bot_is_frozen_while_its_opponent_thinks(make_bot: MakeBot) -> None:
    """Six spinning children must not run on the opponent's time; once
    seen busy on it (their CPU on the good bot's turns over ``BUSY_LEVEL_MS``) they are
    frozen on all of it, and the match still ends normally though the spinner is
    frozen whenever the good bot's move ends a game (GameOver) or the match (MatchOver)."""
    config = replace(SPINNER_CONFIG, games=4, seed=5)
    report, every_sample = _watch_spinner(config, make_bot)
    assert [game.statuses for game in report.games] == [{"spinner": OK, "good": OK}] * 4
    assert all(game.reason != "forfeit" for game in report.games)
    samples = _once_seen(every_sample, launch_per_game=False)
    assert samples, "the spinner was never seen busy"
    opponent = [sample for sample in samples if not sample.spinner_moved]
    assert opponent and all(sample.frozen for sample in opponent)
    assert not any(sample.frozen for sample in samples if sample.spinner_moved)
    last_moves = [next(s for s in reversed(every_sample) if s.game == g) for g in range(4)]
    assert any(not move.spinner_moved for move in last_moves)  # frozen at a GameOver
    cpu_ms, wall_ms = _opponent_turns(samples)
    assert wall_ms > 20
    assert cpu_ms < FROZEN_SHARE * wall_ms + 2, (cpu_ms, wall_ms)


def test_with_pondering_the_spinner_runs_on_its_opponents_time(make_bot: MakeBot) -> None:
    """The control for the test above: with ``ponder`` nothing is frozen, and the
    very same spinner burns CPU while the good bot thinks."""
    config = replace(SPINNER_CONFIG, games=2, seed=5, ponder=True)
    report, samples = _watch_spinner(config, make_bot)
    assert [game.statuses for game in report.games] == [{"spinner": OK, "good": OK}] * 2
    assert not any(sample.frozen for sample in samples)
    cpu_ms, wall_ms = _opponent_turns(samples)
    # the bound the frozen spinner must stay under is broken: that test can fail
    # (on an idle machine the spinner takes over 30%; under a loaded run about 5%)
    assert cpu_ms >= FROZEN_SHARE * wall_ms + 2, (cpu_ms, wall_ms)


def test_a_frozen_spinner_that_crashes_is_still_judged_a_crash(make_bot: MakeBot) -> None:
    """Killing and relaunching a bot works whether or not it is frozen."""
    config = replace(SPINNER_CONFIG, games=2, seed=5)
    report, samples = _watch_spinner(config, make_bot, "spinner_crash")
    assert [game.statuses for game in report.games] == [{"spinner": CRASH, "good": OK}] * 2
    assert [game.winner for game in report.games] == ["good", "good"]
    # frozen or not at its crash (it is frozen once seen busy: not on a loaded machine,
    # where its children get no CPU during the good bot's few moves)
    samples = _once_seen(samples, launch_per_game=True)
    assert all(sample.frozen for sample in samples if not sample.spinner_moved)


def test_a_bot_that_waits_on_its_stream_is_never_frozen(make_bot: MakeBot) -> None:
    """Freezing a bot that only waits for its next request buys nothing and costs a
    wake-up of its every thread, twice a turn: a random bot is watched, never frozen."""
    config = replace(SPINNER_CONFIG, games=2, seed=5)
    report, samples = _watch_spinner(config, make_bot, "random")
    assert [game.statuses for game in report.games] == [{"spinner": OK, "good": OK}] * 2
    assert any(not sample.spinner_moved for sample in samples)
    assert not any(sample.frozen for sample in samples)


def test_a_bot_that_waits_through_long_opponent_turns_is_never_frozen(
    make_bot: MakeBot,
) -> None:
    """A bot that waits is charged a little CPU however long it waits (its runtime's
    timers wake it: ~0.2 ms per 100 ms for this bot, more on a loaded machine), so
    opponent turns of seconds, as a slow or starved opponent takes, charge it over
    1 ms each: that is neither busy nor worth a freeze (``BUSY_SHARE``)."""
    config = replace(SPINNER_CONFIG, games=1, seed=5, time_control=TimeControl(5000, 5000))
    report, samples = _watch_spinner(config, make_bot, "random", good=("paced", "1200", "4"))
    assert [game.statuses for game in report.games] == [{"spinner": OK, "good": OK}]
    long_turns = sum(
        1 for before, after in itertools.pairwise(samples)
        if before.spinner_moved and not after.spinner_moved and after.at_s - before.at_s > 1
    )  # fmt: skip
    assert long_turns, "the good bot never took a long turn"
    assert not any(sample.frozen for sample in samples)


def _taken_of_opponent_turns(samples: list[Sample]) -> tuple[float, float]:
    """CPU ms the spinner used while its opponent was deciding (from each sample to the
    next where the opponent moved), and the freezer's allowance for that time
    (``BUSY_CPU_MS`` a stretch and ``BUSY_SHARE`` of its wall time)."""
    taken_ms = allowed_ms = 0.0
    for before, after in itertools.pairwise(samples):
        if before.game == after.game and not after.spinner_moved:
            taken_ms += after.cpu_ms - before.cpu_ms
            allowed_ms += BUSY_CPU_MS + BUSY_SHARE * (after.at_s - before.at_s) * 1000
    return taken_ms, allowed_ms


@pytest.mark.parametrize(
    "args", [("3",), ("8", "3")], ids=["3 ms every turn", "8 ms every third turn"]
)
def test_a_bot_that_ponders_in_short_bursts_is_frozen(
    make_bot: MakeBot, args: tuple[str, ...]
) -> None:
    """A competitor who thinks a few ms on each of its opponent's turns (or more on
    some), in a thread that stops when its own request comes, is frozen on its
    opponent's turns once seen busy, having taken of them no more than the freezer's
    guarantee: each turn's allowance, ``BUSY_LEVEL_MS``, and the turn that made it busy
    (with one more burst for where the test's samples fall). How many turns that takes
    depends on the load (a loaded referee is late to start the opponent's turn, and more
    of each burst runs on the bot's own time); test_freezer.py holds the rule's turn
    counts. A roomy clock: the good bot's clock is not what this test is about."""
    config = replace(SPINNER_CONFIG, games=2, seed=5, time_control=ROOMY.time_control)
    report, samples = _watch_spinner(config, make_bot, "ponder", *args, good=("paced", "20"))
    assert [game.statuses for game in report.games] == [{"spinner": OK, "good": OK}] * 2
    frozen_at = next((index for index, sample in enumerate(samples) if sample.frozen), None)
    assert frozen_at is not None, "the ponderer was never frozen"
    taken_ms, allowed_ms = _taken_of_opponent_turns(samples[: frozen_at + 1])
    burst_ms = float(args[0])
    assert taken_ms <= allowed_ms + BUSY_LEVEL_MS + 2 * burst_ms, (taken_ms, allowed_ms)
    later = samples[frozen_at:]
    assert all(sample.frozen for sample in later if not sample.spinner_moved)


@pytest.mark.parametrize("behaviour", ["exit_after_turn", "spinner_exit_after_turn"])
def test_a_bot_that_exits_right_after_ending_its_turn_is_judged_a_crash(
    make_bot: MakeBot, behaviour: str
) -> None:
    """Its reply hands the move to the opponent, and the referee may freeze the bot
    while it exits: the exit is judged with the bot thawed, so its status is the
    crash it is (not a disconnect after the whole exit grace). A roomy clock: on a
    machine loaded enough to stall the bot for seconds, its request would time out
    before it could exit, which is no fault of the judgement tested here."""
    config = replace(SPINNER_CONFIG, games=6, seed=5, max_restarts=6,
                     time_control=TimeControl(5000, 5000))  # fmt: skip
    quitter = make_bot(behaviour, name="quitter")
    good = make_bot("random", name="good")
    report = run_match(config, quitter, good)
    assert [game.statuses["quitter"] for game in report.games] == [CRASH] * 6
    for game in report.games:
        failures = game.record["match"]["failures"]  # type: ignore[index]
        assert "exited with status 3" in failures[0]["detail"], failures  # type: ignore[index]
    assert_no_process_left(quitter, good)



def test_each_bots_start_up_is_measured_and_carried_by_the_next_game(make_bot: MakeBot) -> None:
    """The referee's launch-to-Hello time (``GameReport.startup_ms``): the first game carries
    each bot's launch, a game after a crash the relaunch, a game without a launch nothing."""
    slow = make_bot("slow_hello", "1.5", name="slow")
    good = make_bot("random", name="good")
    broken = make_bot("exit_midgame", name="broken")
    config = MatchConfig(games=2, seed=3, time_control=CONFIG.time_control, max_restarts=1)
    first, second = run_match(config, slow, good).games
    assert 1500 <= first.startup_ms["slow"] < 4000
    assert first.startup_ms["good"] < first.startup_ms["slow"] - 500
    assert second.startup_ms == {}
    first, second = run_match(config, broken, good).games
    assert set(first.startup_ms) == {"broken", "good"}
    assert set(second.startup_ms) == {"broken"}  # relaunched after its crash
    assert second.startup_ms["broken"] > 0
    assert_no_process_left(slow, good, broken)


def test_a_bot_that_never_says_hello_is_measured_the_whole_allowance_per_launch(
    make_bot: MakeBot,
) -> None:
    silent = make_bot("no_hello", name="silent")
    good = make_bot("random", name="good")
    config = MatchConfig(games=2, seed=3, time_control=CONFIG.time_control, max_restarts=1,
                         hello_timeout_ms=1000)  # fmt: skip
    first, second = run_match(config, silent, good).games
    assert [g.statuses["silent"] for g in (first, second)] == [TIMEOUT, TIMEOUT]
    assert 1000 <= first.startup_ms["silent"] < 3000
    assert 1000 <= second.startup_ms["silent"] < 3000  # its relaunch
    assert_no_process_left(silent, good)


def test_connections_to_the_referee_socket_do_not_take_the_arenas_files(
    make_bot: MakeBot,
) -> None:
    """A bot whose processes connect to its referee socket until each reaches its own
    open-file limit: every connection the referee accepted was a descriptor of the
    arena's process (thousands from one bot: 64 processes of 256 files each), and an
    arena out of descriptors can launch no bot, open no file and accept no client."""
    fds = Path("/proc/self/fd")
    before = len(list(fds.iterdir()))
    during: list[int] = []
    good = make_bot("random", name="good")
    hoard = make_bot("connection_hoard", "8", name="hoard")
    report = run_match(
        CONFIG, hoard, good, on_game=lambda game: during.append(len(list(fds.iterdir())))
    )
    assert [game.statuses for game in report.games] == [{"hoard": OK, "good": OK}] * 2
    assert max(during) - before < 64, (before, during)
    assert_no_process_left(hoard, good)


def test_a_bot_that_times_out_at_its_memory_limit_is_told_so(make_bot: MakeBot) -> None:
    """At its limit the kernel takes back the bot's memory as it runs, and the bot slows:
    its author cannot tell that from a timeout alone."""
    good = make_bot("random", name="good")
    full = make_bot("at_memory_limit", name="full")
    # It fills its memory before its Hello: first touches of memory can be slow on a
    # fresh virtual machine, and the Hello's allowance is not what this test is about.
    report = run_match(replace(CONFIG, games=1, hello_timeout_ms=30_000), full, good)
    (game,) = report.games
    assert game.statuses == {"full": TIMEOUT, "good": OK}, game.record["match"]["failures"]  # type: ignore[index]
    (failure,) = game.record["match"]["failures"]  # type: ignore[index]
    assert failure["detail"].startswith("no reply to request"), failure
    assert failure["detail"].endswith(
        "; it reached the sandbox's memory limit of 160 MiB, where the kernel takes back"
        " its memory as it runs and it slows down"
    ), (failure, game.stderr)
    assert_no_process_left(full, good)
