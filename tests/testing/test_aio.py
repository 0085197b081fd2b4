"""run_apart and complete_apart finish their coroutine though the caller's thread has a
loop running (as Playwright's sync API leaves one), and hand back what it raised."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest

from arena.testing.aio import complete_apart, run_apart


async def _answer(value: int) -> int:
    return value


async def _refuse() -> int:
    raise ValueError("refused inside the loop")


def _inside_a_running_loop(check: Callable[[], object]) -> None:
    """Call ``check()`` from a callback of a running loop, on a thread of its own (the
    test's thread may hold a running loop already): that thread then has a running loop,
    and a plain ``asyncio.run`` or ``run_until_complete`` refuses to start there."""
    failures: list[BaseException] = []

    def in_loop() -> None:
        outer = asyncio.new_event_loop()

        def call() -> None:
            try:
                check()
            except BaseException as error:  # handed to the test below
                failures.append(error)
            finally:
                outer.stop()

        try:
            outer.call_soon(call)
            outer.run_forever()
        finally:
            outer.close()

    thread = threading.Thread(target=in_loop, name="running-loop")
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), "the loop's check did not end"
    if failures:
        raise failures[0]


def test_a_plain_run_is_refused_inside_a_running_loop() -> None:
    """The control: what the helpers exist for."""
    coroutine = _answer(1)
    with pytest.raises(RuntimeError, match="running event loop"):
        _inside_a_running_loop(lambda: asyncio.run(coroutine))
    coroutine.close()


def test_run_apart_finishes_inside_a_running_loop() -> None:
    results: list[int] = []
    _inside_a_running_loop(lambda: results.append(run_apart(_answer(7))))
    assert results == [7]
    with pytest.raises(ValueError, match="refused inside the loop"):
        _inside_a_running_loop(lambda: run_apart(_refuse()))


def test_complete_apart_runs_on_the_loop_given_inside_a_running_loop() -> None:
    loop = asyncio.new_event_loop()
    try:
        results: list[object] = []

        async def which_loop() -> asyncio.AbstractEventLoop:
            return asyncio.get_running_loop()

        _inside_a_running_loop(lambda: results.append(complete_apart(loop, which_loop())))
        _inside_a_running_loop(lambda: results.append(complete_apart(loop, _answer(3))))
        assert results == [loop, 3]
        with pytest.raises(ValueError, match="refused inside the loop"):
            _inside_a_running_loop(lambda: complete_apart(loop, _refuse()))
    finally:
        loop.close()
