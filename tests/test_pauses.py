"""No test sleeps to let something happen: every pause left in tests/ is a kept, named case.

A sleep that waits for something (a thread started, a row stored, a server
listening) is too short on a loaded machine and too long on a quiet one: a test
waits on the thing itself (``arena.testing.waiting.wait_until``, an Event, a
pipe). A window in which something must *not* happen is ``assert_stays``, which
watches it throughout. What is left is a pause that *is* the behaviour under
test: a bot that thinks, a slow client, a peer that lingers, a kill at a random
moment. This parses every module of tests/ and fails on a pause (``time.sleep``,
``asyncio.sleep``, Playwright's ``wait_for_timeout``, ``Event().wait(...)``, a
``threading.Timer``) outside ``KEPT``, and on an entry of ``KEPT`` that no longer
matches one.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from tests.sources import parse_source

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
ANY = "*"  # every function of the file

KEPT: dict[tuple[str, str], str] = {
    # (file, the function the pause is in): why the pause is the behaviour, not a wait
    ("tests/bots/testbot.py", ANY): "the test bots' behaviours: think, hang, never exit",
    ("tests/server/test_remote_bots.py", "choose"): "a remote bot that thinks",
    ("tests/referee/test_clock_at_wire.py", "tap"): "the loop thread held: the delay under test",
    ("tests/web/test_hardening.py", "test_a_header_dribbled_a_byte_at_a_time_is_cut_at_the_"
     "total_deadline"): "a slow client's pace",
    ("tests/web/test_hardening.py", "test_over_tls_a_stalled_handshake_is_cut_and_a_dribbled_"
     "header_too"): "a slow client's pace",
    ("tests/sample_bots/test_wire.py", "hang"): "a server that hangs",
    ("tests/sample_bots/test_wire.py", "_goaway"): "a peer that lingers, then hangs up",
    ("tests/sample_bots/test_wire.py", "_reset"): "a peer that lingers, then hangs up",
    ("tests/sample_bots/test_wire.py", "_trickle"): "a peer that sends a byte at a time",
    ("tests/sample_bots/test_wire.py", "test_a_peer_that_ends_the_connection_ends_sends_and_"
     "reads_with_call_errors"): "a client writing at its own pace",
    ("tests/commands/test_remote_hostile.py", "WaitForSeats"):
        "a hostile arena holding its stream past every seat's deadline",
    ("tests/tournament/test_runner.py", "_kill_and_resume"): "a kill at a random moment",
    ("tests/tournament/test_runner.py", "_watch_live"): "an admin polling the live view",
    ("tests/sandbox/test_many.py", "cycle"): "a fork bomb's life before it is killed",
    ("tests/test_cli.py", "_interrupted_after"): "a user's Ctrl-C at a swept moment",
    ("tests/testing/test_waiting.py", ANY): "the waiting helpers' tests: slow looks, pauses",
}  # fmt: skip


def pauses(tree: ast.Module) -> list[tuple[int, str, str]]:
    """(line, the innermost function around it or "" at module level, the call) of
    every pause in a module."""
    sleeps = {"time.sleep", "asyncio.sleep", "threading.Timer"}
    names: dict[str, str] = {}  # a local name -> the module or function it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update({a.asname or a.name: a.name for a in node.names})
        elif isinstance(node, ast.ImportFrom) and node.module in ("time", "asyncio", "threading"):
            names.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    found: list[tuple[int, str, str]] = []

    def dotted(node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return names.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            return f"{dotted(node.value)}.{node.attr}"
        return ""

    def is_pause(call: ast.Call) -> bool:
        called = call.func
        if dotted(called) in sleeps:
            return True
        if isinstance(called, ast.Attribute) and called.attr == "wait_for_timeout":
            return True
        return (  # a new Event, waited on: nothing will set it
            isinstance(called, ast.Attribute) and called.attr == "wait"
            and isinstance(called.value, ast.Call)
            and dotted(called.value.func) in ("threading.Event", "Event")
        )  # fmt: skip

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        if isinstance(node, ast.Call) and is_pause(node):
            found.append((node.lineno, function, ast.unparse(node)))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, "")
    return found


@functools.cache  # both tests read it: tests/ parsed once
def every_pause() -> tuple[tuple[str, int, str, str], ...]:
    """(file, line, function, call) of every pause under tests/."""
    return tuple(
        (path.relative_to(ROOT).as_posix(), line, function, call)
        for path in sorted(TESTS.rglob("*.py"))
        for line, function, call in pauses(parse_source(path))
    )


def kept_as(file: str, function: str) -> tuple[str, str] | None:
    for key in ((file, function), (file, ANY)):
        if key in KEPT:
            return key
    return None


def test_every_pause_in_the_tests_is_a_kept_behaviour() -> None:
    unexplained = [
        f"{file}:{line} {call} in {function or 'the module'}"
        for file, line, function, call in every_pause()
        if kept_as(file, function) is None
    ]
    assert unexplained == [], (
        "a pause that waits for something: wait on the thing itself (wait_until, an Event), "
        "or watch a window with assert_stays (arena.testing.waiting); a pause that is a "
        "bot's or a client's behaviour goes in KEPT with its reason:\n" + "\n".join(unexplained)
    )


def test_every_kept_entry_still_names_a_pause() -> None:
    used = {kept_as(file, function) for file, _, function, _ in every_pause()}
    assert sorted(set(KEPT) - used) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import time\ndef f():\n    time.sleep(1)\n", [(3, "f", "time.sleep(1)")]),
        ("import time as t\nt.sleep(0.5)\n", [(2, "", "t.sleep(0.5)")]),
        ("from time import sleep\nclass A:\n    def g(self):\n        sleep(2)\n",
         [(4, "g", "sleep(2)")]),
        ("import asyncio\nasync def h():\n    await asyncio.sleep(0.1)\n",
         [(3, "h", "asyncio.sleep(0.1)")]),
        ("def p(page):\n    page.wait_for_timeout(300)\n",
         [(2, "p", "page.wait_for_timeout(300)")]),
        ("import threading\nthreading.Event().wait(0.005)\n",
         [(2, "", "threading.Event().wait(0.005)")]),
        ("from threading import Event\nEvent().wait(1)\n", [(2, "", "Event().wait(1)")]),
        ("import threading\nthreading.Timer(0.3, start).start()\n",
         [(2, "", "threading.Timer(0.3, start)")]),
        # not pauses: a wait on something that happens, a bot's program as text
        ("def f(done, process):\n    done.wait(5)\n    process.wait(5)\n", []),
        ("BOT = 'import time; time.sleep(60)'\n", []),
        ("from arena.testing.waiting import wait_until\nwait_until(lambda: 1, 'x')\n", []),
    ],
    ids=["time.sleep", "an alias", "from time import sleep", "asyncio.sleep",
         "wait_for_timeout", "Event().wait", "from threading import Event", "a Timer",
         "waits on things", "a bot's source", "wait_until"],
)  # fmt: skip
def test_the_scan_finds_each_kind_of_pause_and_nothing_else(
    source: str, expected: list[tuple[int, str, str]]
) -> None:
    assert pauses(ast.parse(source)) == expected
