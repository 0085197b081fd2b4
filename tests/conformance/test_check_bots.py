"""`arena bot check` with real bots in the real sandbox: the sample bots pass every
scenario; deliberately broken bots fail the scenario their bug is about, saying so."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.conformance import SCENARIOS, CheckReport, check_bot
from arena.conformance.report import EXIT, HELLO
from arena.referee import BotSpec, load_bot
from arena.sandbox.watchdog import work_root
from arena.testing.waiting import wait_until
from tests.cli import arena_in_process
from tests.referee.conftest import MakeBot, assert_no_process_left, marker_of, processes_with

pytestmark = pytest.mark.slow

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"
BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}


def _results(report: CheckReport) -> dict[str, tuple[bool, str]]:
    return {result.name: (result.passed, result.problem) for result in report.results}


def _check(spec: BotSpec, *names: str) -> CheckReport:
    return check_bot(spec, scenarios=[BY_NAME[name] for name in names])


@pytest.mark.parametrize("bot", ["python_random", "js_random"])
def test_the_random_sample_bots_pass_every_scenario(bot: str) -> None:
    if bot == "js_random" and not (SAMPLE_BOTS / bot / "node_modules").is_dir():
        pytest.skip("js_random's node_modules missing: run npm ci --prefix sample_bots/js_random")
    heard: list[str] = []
    report = check_bot(load_bot(SAMPLE_BOTS / bot), on_result=lambda r: heard.append(r.name))
    assert report.passed, report.text()
    assert [r.name for r in report.results] == [HELLO, *(s.name for s in SCENARIOS), EXIT]
    assert heard == [s.name for s in SCENARIOS]  # as each is played: the command's progress
    timing = report.timing()
    assert timing["launches"] == 4  # one connection per variant
    assert isinstance(timing["decisions"], int) and timing["decisions"] > 300
    assert timing["decision_ms_median"] is not None and timing["decision_ms_p99"] is not None
    assert len(report.exit_ms) == 4
    text = report.text()
    assert "launch to Hello" in text and "p99" in text
    assert f"all {len(report.results)} checks passed ({len(SCENARIOS)} scenarios," in text


def test_a_bot_that_draws_in_the_final_turns_fails_them(make_bot: MakeBot) -> None:
    spec = make_bot("no_final_pass")
    report = _check(spec, "hand_of_five", "final_turn_first", "final_turn_second")
    results = _results(report)
    assert results["hand_of_five"] == (True, "")
    for name in ("final_turn_first", "final_turn_second"):
        passed, problem = results[name]
        assert not passed
        assert problem.startswith("illegal_action at decision 1 (round 3, final turn"), problem
        assert "draw" in problem
    assert results[HELLO][0] and results[EXIT][0]
    assert not report.passed
    assert_no_process_left(spec)


def test_a_bot_that_cannot_hold_five_cards_crashes_in_those_scenarios(make_bot: MakeBot) -> None:
    spec = make_bot("four_card_hand")
    report = _check(spec, "final_turn_first", "hand_of_five", "hand_of_five_after_pass")
    results = _results(report)
    assert results["final_turn_first"] == (True, "")
    for name in ("hand_of_five", "hand_of_five_after_pass"):
        passed, problem = results[name]
        assert not passed
        # its stream may be seen closing before its exit status (a loaded machine)
        assert re.match(r"(crash|disconnect) at decision 1 \(round", problem), problem
        assert "5 cards in hand" in problem and "IndexError" in problem  # its own stderr
    assert report.timing()["launches"] == 2  # launched again after the first crash
    assert_no_process_left(spec)


def test_a_bot_that_does_not_exit_after_match_over_fails_the_exit_row(make_bot: MakeBot) -> None:
    spec = make_bot("linger")
    report = _check(spec, "opponent_forfeits", "answer_fast")
    results = _results(report)
    assert results["opponent_forfeits"][0] and results["answer_fast"][0]
    assert results[EXIT] == (False, "still running 5 s after MatchOver")
    assert_no_process_left(spec)  # killed all the same


def test_a_bot_that_never_says_hello_is_not_launched_again_and_again(make_bot: MakeBot) -> None:
    spec = make_bot("no_hello")
    report = check_bot(spec, scenarios=[BY_NAME["plain_seat0"], BY_NAME["strategic"],
                                        BY_NAME["tactical"]], hello_timeout_ms=500)  # fmt: skip
    results = _results(report)
    assert results[HELLO] == (False, "timeout before its Hello: no Hello within 500 ms")
    assert results["plain_seat0"] == (False, "not played: the bot did not connect (see hello)")
    assert results["tactical"] == (False, "not played: no launch after 2 that failed")
    assert_no_process_left(spec)


@dataclass(frozen=True)
class Checked:
    returncode: int
    stdout: str
    stderr: str


def _arena(capsys: pytest.CaptureFixture[str], *args: str) -> Checked:
    """`arena bot check ARGS` in this process (``arena.cli.main``, what the process runs)."""
    capsys.readouterr()
    return Checked(*arena_in_process(capsys, "bot", "check", *args))


def test_the_command_exits_0_only_when_every_scenario_passed(
    make_bot: MakeBot, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _arena(capsys, str(SAMPLE_BOTS / "python_random"), "--scenario", "final_turn_second")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "pass  final_turn_second" in good.stdout
    announced = "checking python_random: 1 scenario, its launches and its exits (3 checks) ..."
    assert good.stdout.startswith(announced)  # the count announced is the count reported
    assert "\nall 3 checks passed (1 scenario, its launches and its exits)\n" in good.stdout
    broken = make_bot("no_final_pass")
    bad = _arena(capsys, str(broken.directory), "--scenario", "final_turn_first", "--json")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    found = json.loads(bad.stdout)
    assert found["passed"] is False
    [row] = [row for row in found["scenarios"] if row["name"] == "final_turn_first"]
    assert row["passed"] is False and row["problem"].startswith("illegal_action")
    assert found["timing"]["launches"] == 1


def test_the_command_exits_2_when_there_is_no_bot_to_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = _arena(capsys, str(tmp_path))
    assert missing.returncode == 2 and "no bot.toml" in missing.stderr
    (tmp_path / "bot.toml").write_text('name = "far"\nruntime = "remote"\n')
    remote = _arena(capsys, str(tmp_path))
    assert remote.returncode == 2 and "remote" in remote.stderr, remote.stderr


SILENT_CASES = [
    # (behaviour, its arguments, what each of the four scenarios says)
    ("sleep_forever", (), [
        "timeout at decision 1", "timeout at decision 1",
        "not played: the bot answered no request in plain_seat0 and plain_seat1 (each timed"
        " out at its first decision)",
        "not played: the bot answered no request in plain_seat0 and plain_seat1",
    ]),
    ("late_once", ("1.2",), ["timeout at decision 1", "", "", ""]),  # it answers after that
]  # fmt: skip


@pytest.mark.parametrize(("behaviour", "args", "said"), SILENT_CASES,
                         ids=[case[0] for case in SILENT_CASES])  # fmt: skip
def test_a_bot_that_answers_nothing_is_not_waited_for_scenario_after_scenario(
    make_bot: MakeBot, behaviour: str, args: tuple[str, ...], said: list[str]
) -> None:
    """Each scenario it lets time out costs a whole clock (32 s by default): after two
    in a row without one answer the rest would only say the same, minutes later."""
    import dataclasses

    from arena.conformance.scenarios import Clock

    spec = make_bot(behaviour, *args)
    names = ["plain_seat0", "plain_seat1", "reshuffle", "forced_draw"]
    clock = Clock(action_ms=1000, bank_ms=0)  # late_once's late reply comes before the next
    report = check_bot(spec, scenarios=[dataclasses.replace(BY_NAME[name], clock=clock)
                                        for name in names])  # fmt: skip
    results = _results(report)
    for name, expected in zip(names, said, strict=True):
        passed, problem = results[name]
        assert passed == (not expected) and problem.startswith(expected), (name, problem)
    assert_no_process_left(spec)


def test_a_check_killed_with_sigkill_leaves_no_work_directory(
    make_bot: MakeBot, tmp_path: Path
) -> None:
    """`arena bot check` SIGKILLed while its bot runs: the watchdog kills the bot and
    removes the check's work directory (bot socket, stderr), named after the check's pid
    as a match's is; one named otherwise stayed in the temp root for ever."""
    spec = make_bot("no_hello")
    repo = Path(__file__).resolve().parents[2]
    check = subprocess.Popen(
        [sys.executable, "-m", "arena", "bot", "check", str(spec.directory),
         "--data-dir", str(tmp_path / "data")],
        cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    work = Path(work_root())
    try:
        wait_until(lambda: processes_with(marker_of(spec)), "the checked bot to run", 60)
        (left,) = work.glob(f"kahuna-{check.pid}-check-*")
        check.kill()
        assert check.wait(10) == -signal.SIGKILL
        wait_until(lambda: not left.exists(), f"the watchdog to remove {left}", 30)
        wait_until(lambda: not processes_with(marker_of(spec)), "the bot to be killed", 30)
    finally:
        check.kill()
        check.wait(10)
